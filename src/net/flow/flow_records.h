// The flow backend's per-flow and per-channel records (flow_state.h), shared by its flow
// table and its max-min solver (max_min_solver.h). Laid out for the solver's loops: what it
// touches per flow in a small record, per channel in one cache line.
#pragma once

#include <cstdint>
#include <limits>

#include "net/backend.h"
#include "net/router.h"

namespace mfabric::net::flow {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// Margins of the max-min checks (relative, absolute in bits/s): far above rounding noise, far
// below any rate difference that matters.
inline constexpr double kRel = 1e-9;
inline constexpr double kAbs = 1e-6;
// Seconds per picosecond over bits per byte: bytes = rate_bps * ps * kBytesPerBitPs.
inline constexpr double kBytesPerBitPs = 1e-12 / 8.0;
// A channel carrying less than this is idle (guards sums that cancel to rounding noise).
inline constexpr double kIdleBps = 1e-3;

// Paused: taken off a circuit that was torn down; no route until resume_paused().
enum class FlowState : std::uint8_t { Free, Active, Delivering, Paused };

// What the rate solver touches, kept small so that many flows share a cache line.
struct Hot {
  double rate = 0;
  double new_rate = 0;        // in the current water-filling
  std::uint32_t mark = 0;     // == epoch: in V, the set being re-filled
  std::uint32_t frozen = 0;   // == fill_stamp: rate set in the current water-filling
  std::uint32_t checked = 0;  // == check_stamp: looked at in the current expand()
  ChannelId bneck = -1;       // a channel where the flow was last found to be a bottleneck
  std::int32_t len = 0;       // channels on the route
  bool fresh = false;         // started or re-routed since the last recomputation
  FlowState state = FlowState::Free;
  // A coflow (FlowBackend::start_coflow): its rate is its average member's, and it uses each
  // channel of its route that many times over as the table's coefficient says (flow_table.h).
  bool weighted = false;
};
struct alignas(64) Cold {
  // First what a completion reads (fire()), so that it is one cache line.
  TransferId id = -1;
  std::int64_t size = 0;
  Backend::DoneCallback on_done;
  double remaining = 0;  // bytes still to send as of `last`
  std::int64_t last = 0;
  std::int64_t started = 0;  // when start() was called (completion batching)
  // |V| of the exact recomputation that last changed the flow's rate: what its completion is
  // likely to cost if recomputed at once (completion batching).
  std::int32_t last_v = 0;
  std::int64_t latency_ps = 0;  // route latency x latency_hops
  fabric::NodeId src = fabric::kNoNode;
  fabric::NodeId dst = fabric::kNoNode;
  std::uint64_t hash = 0;
  int latency_hops = 1;
  RouteCost cost;
};
// Per channel, what a recomputation reads and writes, kept together in one cache line (with
// the time its statistics were last brought up to date, which a completion reads too).
struct alignas(64) Chan {
  std::int64_t settled = 0;  // channel statistics are up to date until then
  double cap = 0;
  double load = 0;      // sum of the rates of the flows on it
  double residual = 0;  // water-filling: capacity not yet given out
  double new_load = 0;  // water-filling: load in the tentative allocation
  double v_old = 0;     // sum of the current rates of its V flows
  std::int32_t unfrozen = 0;
  std::int32_t v_count = 0;  // its V flows
  std::int32_t v_head = -1;  // their list in vnodes
  std::uint32_t mark = 0;    // == epoch: a channel of V
};

}  // namespace mfabric::net::flow
