// Random region demands with a known shape, for tests, benchmarks and the planner comparison in
// docs/control-plane.md. Deterministic for (parameters, Rng).
#pragma once

#include "control/demand.h"
#include "core/rng.h"

namespace mfabric::control {

struct SyntheticDemand {
  int servers = 8;
  // Share of server pairs with demand (each pair kept with this probability).
  double density = 1.0;
  // Zipf-like skew: the pairs, in a random order, carry bytes proportional to 1 / rank^skew
  // (0 = every pair the same).
  double skew = 1.0;
  // Bytes of the heaviest pair.
  std::int64_t max_pair_bytes = std::int64_t{1} << 30;
};

// mfabric::Error naming the field for a size outside 1..kMaxRegionServers, a density outside
// [0, 1], a negative skew or max_pair_bytes outside 1..kMaxPairBytes.
ServerDemand synthetic_demand(const SyntheticDemand& params, Rng& rng);

}  // namespace mfabric::control
