// The flow-level (fluid) network backend. Every active transfer is a fluid flow over its route's
// channels; flows share channels max-min fairly (water-filling), and rates are recomputed only
// when something changes: transfers starting or finishing, links changing rate. Everything that
// happens at one timestamp is one batch with one recomputation, and a recomputation only touches
// the flows whose rates can change (docs/network.md explains why that set is exact).
//
// Timing of one transfer: its bytes drain at its (changing) rate; once the last byte has left,
// the transfer completes after latency_hops x the route's latency. Zero-byte transfers complete
// after the latency alone; a transfer from a GPU to itself completes at once.
//
// Link failures (rate 0): a transfer crossing the link moves to another route of equal cost
// (same number of proxy GPUs and network links, ECMP re-hashed over the links still up) if there
// is one, and otherwise stalls at rate 0 on its route until the link comes back. A transfer
// started while no route is up starts stalled on a route over down links; no route at all is
// an mfabric::Error naming both GPUs.
//
// Not re-entrant: completion callbacks may call start(), set_link_rate() and the queries, but not
// advance().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "net/backend.h"
#include "net/router.h"

namespace mfabric::net {

// Work counters of the rate solver, for benchmarks and tuning.
struct SolverStats {
  std::int64_t recomputations = 0;
  std::int64_t flows_recomputed = 0;  // summed over recomputations
  std::int64_t largest_recomputation = 0;
  std::int64_t rerouted = 0;
};

class FlowBackend final : public Backend {
 public:
  // The topology must outlive the backend. Links (not nodes) may be appended to it later, e.g.
  // optical circuits; they are picked up at the next start() or set_link_rate().
  explicit FlowBackend(const fabric::Topology& topology);
  ~FlowBackend() override;
  FlowBackend(const FlowBackend&) = delete;
  FlowBackend& operator=(const FlowBackend&) = delete;

  TransferId start(const collective::Transfer& t, DoneCallback on_done) override;
  void set_link_rate(fabric::LinkId link, Rate rate) override;
  Time now() const override;
  std::optional<Time> next_event_time() const override;
  void advance(Time t) override;
  std::size_t active_transfers() const override;
  std::int64_t events_processed() const override;
  const std::vector<ChannelStats>& channel_stats() const override;

  // Diagnostics, O(active transfers): the current rate and channels of a transfer still moving
  // bytes (nullopt / empty once its bytes are done).
  std::optional<Rate> rate_of(TransferId id) const;
  std::vector<ChannelId> channels_of(TransferId id) const;
  SolverStats solver_stats() const;
  const Router& router() const;

 private:
  struct State;
  // Behind a pointer so that the const queries (next_event_time, channel_stats) can bring the
  // lazily updated state up to date.
  std::unique_ptr<State> s_;
};

}  // namespace mfabric::net
