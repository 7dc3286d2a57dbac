// A Transfer is the unit of data movement between two GPUs that a network backend simulates.
// Collectives are lowered to steps of transfers (collective/lowering.h); the backend routes each
// transfer over the fabric and reports when its last byte has arrived.
#pragma once

#include <cstdint>

#include "core/units.h"
#include "fabric/topology.h"

namespace mfabric::net {

// A backend's name for a transfer it started, in start order from 0.
using TransferId = std::int64_t;

struct Transfer {
  fabric::NodeId src = fabric::kNoNode;  // a GPU node
  fabric::NodeId dst = fabric::kNoNode;  // a GPU node
  Bytes size;
  // Propagation paid on top of the path's own latency: a pipelined ring of k steps pays k path
  // latencies once, not per byte (lowering.h).
  int latency_hops = 1;
  // Spreads transfers of one collective over equal-cost paths (ECMP); deterministic.
  std::uint64_t flow_hash = 0;
};

}  // namespace mfabric::net
