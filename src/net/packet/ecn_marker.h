// ECN marking where a packet joins a port's queue (docs/packet.md, "ECN"): a step at
// ecn_threshold, or RED between ecn_threshold and ecn_max with the marking probability rising
// linearly to ecn_pmax. RED's draws come from one deterministic stream per network (the seed and
// a draw counter), taken in the order packets arrive anywhere: one marker serves every port.
#pragma once

#include <cstdint>

#include "core/units.h"
#include "net/ecmp.h"

namespace mfabric::net::packet {

class EcnMarker {
 public:
  EcnMarker(Bytes threshold, Bytes max, double pmax, std::uint64_t seed)
      : k_min_(threshold.count()), k_max_(max.count()), pmax_(pmax), seed_(seed) {}

  // Whether a packet arriving at a queue of `queued` bytes is marked CE.
  bool mark(std::int64_t queued) {
    if (queued < k_min_) return false;
    if (k_max_ <= k_min_ || queued >= k_max_) return true;
    const double p =
        pmax_ * static_cast<double>(queued - k_min_) / static_cast<double>(k_max_ - k_min_);
    const std::uint64_t draw = mix_hash(seed_ ^ mix_hash(++draws_));
    return static_cast<double>(draw >> 11) * 0x1.0p-53 < p;
  }

 private:
  std::int64_t k_min_;
  std::int64_t k_max_;
  double pmax_;
  std::uint64_t seed_;
  std::uint64_t draws_ = 0;
};

}  // namespace mfabric::net::packet
