// The flow-level (fluid) network backend (docs/network.md). Every active transfer is a fluid
// flow over its route's channels (router.h); flows share channels max-min fairly. Rates are
// recomputed only when something changes (transfers starting or finishing, link rates), once per
// timestamp however many changes it has, and only for the flows the change can reach: a small
// set is re-filled and the max-min conditions are checked around it, growing it where they fail.
//
// Timing of one transfer: its bytes drain at its (changing) rate; once the last byte has left,
// the transfer completes after latency_hops x the route's latency (times in whole picoseconds,
// rounded up). Zero-byte transfers complete after the latency alone; a transfer from a GPU to
// itself completes at once.
//
// Link failures (rate 0): a transfer crossing the link moves to another route of equal cost
// (same number of proxy GPUs and network links, ECMP re-hashed over the links still up) if there
// is one, and otherwise stalls at rate 0 on its route until the link comes back, or until
// reroute_down() finds it a route of any cost over the links up then. A stalled transfer has no
// next event: next_event_time() can be empty while transfers are active. A transfer started
// while no route is up starts stalled on a route over down links; no route at all is an
// mfabric::Error naming both GPUs.
//
// Circuits (backend.h): connect() adds a NIC-NIC link in a circuit slot (link_table.h), up at
// once; disconnect() takes the transfers crossing it off their route and pauses them, without
// losing bytes; resume_paused() routes them again over what is up then. A paused transfer has no
// next event; a run that ends with one reports it (StalledTransfer::Why::Paused).
//
// Not re-entrant: completion callbacks may call start(), set_link_rate() and the queries, but not
// advance().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/backend.h"
#include "net/backend_stats.h"
#include "net/circuits.h"
#include "net/link_timeline.h"
#include "net/router.h"

namespace mfabric::net {

// Work counters of the rate solver, for benchmarks and tuning (docs/network.md). "V" is the set
// of flows a recomputation re-fills; sums are over all recomputations.
struct SolverStats {
  std::int64_t recomputations = 0;
  std::int64_t flows_recomputed = 0;       // sum of |V|
  std::int64_t channels_recomputed = 0;    // sum of V's channels
  std::int64_t largest_recomputation = 0;  // largest |V|
  std::int64_t rates_changed = 0;          // flows whose rate changed
  std::int64_t water_fills = 0;            // >= recomputations: V may grow and be re-filled
  std::int64_t channels_filled = 0;        // channels over all water-fillings
  std::int64_t closures = 0;               // recomputations that re-filled a whole component
  std::int64_t local_fills = 0;  // completion batching: local re-fills before a batch is due
  std::int64_t rerouted = 0;     // transfers moved to another route (any reason)
  // Entries of the channels' transfer lists the solver scanned (gathering V, closing a
  // component, checking bottlenecks): each channel a change names is scanned once per
  // recomputation however many changes name it (tests/net/solver_work_test.cpp).
  std::int64_t flows_visited = 0;
};

// Completion batching (docs/network.md, "Completion batching"). With 0, rates are recomputed
// exactly at every timestamp at which something changed: the max-min evolution. With b > 0, a
// completion whose last exact recomputation was large (a flow of a big all-to-all, whose every
// completion re-fills thousands of flows) gets a cheap local re-fill at once: the flows on its
// bottleneck channel share the freed capacity, every other flow keeps its rate (feasible, as
// completions only free capacity). The exact recomputation follows within b x the completed
// transfer's age (time since start()), one for all completions of that window. Starts, link
// changes and circuits still recompute exactly at once. Bytes are conserved as always; finish
// times differ slightly from the exact evolution (measured in docs/network.md).
struct FlowBackendOptions {
  double completion_batching = 0;
};
inline constexpr double kMaxCompletionBatching = 0.1;
// mfabric::Error(file, field, expectation) unless 0 <= fraction <= kMaxCompletionBatching: the
// one check of the option, for the backend and for the experiment field that sets it.
void check_completion_batching(double fraction, const std::string& file = "",
                               const std::string& field = "completion_batching");

class FlowBackend final : public Backend,
                          public Circuits,
                          public BackendStats,
                          public TimelineRecorder {
 public:
  // The topology must outlive the backend. Links (not nodes) may be appended to it later (tests
  // do) while it has no optical NICs; they are picked up at the next start() or set_link_rate().
  // Circuits go through connect() and disconnect(). mfabric::Error for options out of range.
  explicit FlowBackend(const fabric::Topology& topology, const FlowBackendOptions& options = {});
  ~FlowBackend() override;
  FlowBackend(const FlowBackend&) = delete;
  FlowBackend& operator=(const FlowBackend&) = delete;

  TransferId start(const net::Transfer& t, DoneCallback on_done) override;
  // One weighted flow for the transfers with bytes to cross the network (docs/shortcuts.md,
  // "Coflows"): each moves at a rate in proportion to its bytes, and the coflow shares each
  // channel as its members there would together at its average member's rate. A torn-down
  // circuit or a link down splits it back into its members (with their shares of the bytes
  // left); reroute() moves it whole. rate_of() and channels_of() of a member give the coflow's.
  std::vector<TransferId> start_coflow(std::span<const net::Transfer> transfers,
                                       std::vector<DoneCallback> on_done) override;
  void set_link_rate(fabric::LinkId link, Rate rate) override;
  // O(1) while no link is down; otherwise O(active transfers x route length) plus a route search
  // per transfer crossing a down link.
  void reroute_down() override;
  Time now() const override;
  std::optional<Time> next_event_time() const override;
  void advance(Time t) override;
  std::size_t active_transfers() const override;
  std::int64_t events_processed() const override;
  const std::vector<ChannelStats>& channel_stats() const override;

  std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const override;
  TransferTotals totals() const override;
  // Bins filled as channels settle (channel_ledger.h): a load held from t0 to t1 adds its bytes
  // to each bin of [t0, t1) in proportion to the overlap.
  void record_timeline(const TimelineOptions& options) override;
  std::optional<LinkTimeline> take_timeline() override;

  Capabilities capabilities() override {
    return {.circuits = this, .stats = this, .timeline = this};
  }

  // Circuits
  fabric::LinkId connect(fabric::NodeId nic_a, fabric::NodeId nic_b) override;
  void disconnect(fabric::LinkId circuit) override;
  fabric::NodeId circuit_peer(fabric::NodeId nic) const override;
  void resume_paused() override;
  void resume_paused(std::span<const fabric::NodeId> nics) override;
  void reroute(std::span<const fabric::NodeId> nics) override;
  std::size_t paused_transfers() const override;

  // The links routed over, circuits included.
  const LinkTable& links() const;

  // Diagnostics, O(active transfers): the current rate and channels of a transfer still moving
  // bytes (nullopt / empty once its bytes are done).
  std::optional<Rate> rate_of(TransferId id) const;
  std::vector<ChannelId> channels_of(TransferId id) const;
  SolverStats solver_stats() const;
  const Router& router() const;

 private:
  struct State;
  // Resumes the paused transfers with either end on a server flagged in `servers`.
  void resume_paused_on(const std::vector<bool>& servers);
  // Behind a pointer so that the const queries (next_event_time, channel_stats) can bring the
  // lazily updated state up to date.
  std::unique_ptr<State> s_;
};

}  // namespace mfabric::net
