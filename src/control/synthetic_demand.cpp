#include "control/synthetic_demand.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/error.h"

namespace mfabric::control {

ServerDemand synthetic_demand(const SyntheticDemand& params, Rng& rng) {
  if (!(params.density >= 0.0 && params.density <= 1.0)) {
    throw Error("", "density", fmt::format("expected 0 to 1, got {}", params.density));
  }
  if (!(params.skew >= 0.0) || !std::isfinite(params.skew)) {
    throw Error("", "skew", fmt::format("expected a non-negative number, got {}", params.skew));
  }
  if (params.max_pair_bytes < 1 || params.max_pair_bytes > kMaxPairBytes) {
    throw Error("", "max_pair_bytes",
                fmt::format("expected 1 to {}, got {}", kMaxPairBytes, params.max_pair_bytes));
  }
  ServerDemand demand(params.servers);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < params.servers; ++i) {
    for (int j = i + 1; j < params.servers; ++j) {
      if (rng.uniform() < params.density) pairs.emplace_back(i, j);
    }
  }
  // Fisher-Yates with the portable Rng: the rank of each pair.
  for (std::size_t k = pairs.size(); k > 1; --k) {
    std::swap(pairs[k - 1], pairs[rng.below(k)]);
  }
  for (std::size_t rank = 0; rank < pairs.size(); ++rank) {
    const double share = std::pow(static_cast<double>(rank + 1), -params.skew);
    const auto bytes = static_cast<std::int64_t>(
        std::max(1.0, std::round(share * static_cast<double>(params.max_pair_bytes))));
    demand.add(pairs[rank].first, pairs[rank].second, bytes);
  }
  return demand;
}

}  // namespace mfabric::control
