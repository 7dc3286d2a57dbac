#include "net/flow_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "net/flow/channel_ledger.h"
#include "net/flow/completion_batching.h"
#include "net/flow/completion_queues.h"
#include "net/flow/flow_records.h"
#include "net/flow/flow_table.h"
#include "net/flow/max_min_solver.h"
#include "net/flow/pcie_mirror.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::Topology;

namespace {

// Rates within this relative distance are the same rate: the flow keeps its completion event.
constexpr double kSameRate = 1e-9;

using flow::Chan;
using flow::ChannelLedger;
using flow::Cold;
using flow::CompletionBatching;
using flow::Delivery;
using flow::DeliveryLater;
using flow::drain_ps;
using flow::DrainQueue;
using flow::FlowState;
using flow::FlowTable;
using flow::Hot;
using flow::kBytesPerBitPs;
using flow::kInf;
using flow::kRel;
using flow::MaxMinSolver;

}  // namespace

// The backend's lifecycle of flows: started, routed onto the table, given rates by the solver,
// drained, delivered, paused, moved. The records are the table's (flow_table.h) and the
// ledger's (channel_ledger.h); the rates the solver's (max_min_solver.h).
struct FlowBackend::State {
  const Topology& topo;
  LinkTable links;
  Router router;
  Route route;  // scratch
  std::int64_t now = 0;
  std::int64_t events = 0;
  TransferId next_id = 0;
  std::size_t active = 0;
  SolverStats solver;
  TransferTotals totals;
  std::vector<std::int32_t> paused;  // slots, in the order they paused
  // Per link: down (rate 0) and not a free circuit slot; and how many are, so that
  // reroute_down() costs nothing while no link is down.
  std::vector<std::uint8_t> down;
  std::size_t links_down = 0;

  ChannelLedger channels;
  FlowTable table;
  flow::PcieMirror mirrors;
  std::vector<std::int32_t> scratch;

  // Pending recomputation: channels whose flows changed, flows without a rate yet, and the
  // level below which no rate can change (see flush()). `forced`: something other than
  // completions asked for it, so it runs at once (see CompletionBatching).
  std::vector<ChannelId> seeds;
  std::vector<std::int32_t> fresh;
  double level = kInf;
  bool dirty = false;
  bool forced = false;
  CompletionBatching batching;
  // Whether the last apply_rates() lowered a rate.
  bool lowered = false;

  MaxMinSolver max_min{table.hot_records(), channels.records(),   table.flows_per_channel(),
                       table.routes(),      table.route_stride(), solver};
  std::vector<std::int32_t> victims;  // scratch of pause_off() and reroute_off()

  DrainQueue drains;
  std::vector<Delivery> deliveries;
  // Bytes per channel per time bin, when record_timeline() asked for them.
  std::unique_ptr<LinkTimeline> timeline;

  State(const Topology& t, const FlowBackendOptions& o)
      : topo(t), links(t), router(links), batching(o.completion_batching) {
    sync();
  }

  Hot& hot_of(std::int32_t s) { return table.hot(s); }
  Cold& cold_of(std::int32_t s) { return table.cold(s); }
  Chan& chan(ChannelId c) { return channels.chan(c); }
  void settle(ChannelId c) { channels.settle(c, now); }
  // Recompute at once (a start, a rate change, a circuit), from level `from`.
  void force(double from) {
    level = std::min(level, from);
    dirty = true;
    forced = true;
  }

  void sync() {
    const std::size_t old = channels.size();
    if (2 * links.size() == old) return;
    router.sync();
    channels.grow(links, now);
    const std::size_t count = channels.size();
    max_min.resize_channels(count);
    down.resize(count / 2, 0);
    for (std::size_t l = old / 2; l < count / 2; ++l) {
      const fabric::Link& k = links.link(static_cast<LinkId>(l));
      if (k.a != fabric::kNoNode && !(k.rate.bps() > 0)) mark_down(static_cast<LinkId>(l), true);
    }
    table.resize_channels(count);
    mirrors.resize(count);
    if (old == 0) {
      mirrors.find(topo, channels.records());
      return;
    }
    // A link appended at a NIC may give it a second way out: its PCIe stops mirroring.
    for (std::size_t l = old / 2; l < count / 2; ++l) {
      for (fabric::NodeId v :
           {links.link(static_cast<LinkId>(l)).a, links.link(static_cast<LinkId>(l)).b}) {
        if (topo.node(v).kind != fabric::NodeKind::Nic) continue;
        for (LinkId k : topo.links_of(v)) {
          if (topo.link(k).kind == fabric::LinkKind::Pcie) unmirror(k);
        }
      }
    }
  }

  void mark_down(LinkId l, bool is_down) {
    auto& d = down[static_cast<std::size_t>(l)];
    const std::uint8_t v = is_down ? 1 : 0;
    if (d == v) return;
    d = v;
    if (is_down) {
      ++links_down;
    } else {
      --links_down;
    }
  }

  // Ends the mirroring of a PCIe link's channels, if any (pcie_mirror.h): the PCIe channel
  // goes back into its flows' routes, next to the cable.
  void unmirror(LinkId pcie) {
    for (ChannelId p : {2 * pcie, 2 * pcie + 1}) {
      const ChannelId c = mirrors.cable_of(p);
      if (c < 0) continue;
      channels.take_over(p, c, now);
      // From the GPU into the NIC, the PCIe comes before the cable; the other way, after.
      const bool before = topo.node(flow::from_node(links, p)).kind == fabric::NodeKind::Gpu;
      scratch = table.flows_on(c);
      for (std::int32_t s : scratch) {
        const ChannelId* q = table.path(s);
        std::int32_t at = 0;
        while (q[at] != c)
          ++at;
        table.insert(s, before ? at : at + 1, p);
      }
      mirrors.unpair(p, c);
    }
  }

  // The route's channels as routed: mirrored PCIe channels put back in place.
  std::vector<ChannelId> full_path(std::int32_t slot) const {
    return mirrors.full_path(table.path(slot), table.hot(slot).len, topo, links);
  }

  void attach(std::int32_t slot, const Route& r) {
    table.reserve_route(static_cast<std::int32_t>(r.channels.size()));
    Hot& f = hot_of(slot);
    f.bneck = -1;
    f.fresh = true;
    f.len = 0;
    for (ChannelId c : r.channels) {
      if (mirrors.cable_of(c) >= 0) continue;  // mirrored: the cable stands for it
      table.append(slot, c);
      seeds.push_back(c);
    }
    fresh.push_back(slot);
    force(kInf);
  }

  // Takes a flow off its channels, bringing their statistics up to date first.
  void detach(std::int32_t slot) {
    const Hot& f = hot_of(slot);
    const ChannelId* p = table.path(slot);
    // At cluster scale the channels are rarely in cache: ask for all of them at once, so that
    // their misses overlap instead of following one another.
    for (std::int32_t i = 0; i < f.len; ++i) {
      __builtin_prefetch(&chan(p[i]), 1);
      __builtin_prefetch(&table.flows_on(p[i]));
      __builtin_prefetch(channels.stats_address(p[i]), 1);
    }
    const double rate = f.rate;
    table.remove_route(slot, [&](ChannelId c, const std::vector<std::int32_t>& left) {
      settle(c);
      Chan& ch = chan(c);
      ch.load = left.empty() ? 0.0 : ch.load - rate;
      seeds.push_back(c);
    });
    level = std::min(level, rate);
    dirty = true;
  }

  // The bytes the flow has left now: what it had at its last update, less what its rate has
  // sent since.
  double remaining_now(std::int32_t s) const {
    const double rate = table.hot(s).rate;
    const Cold& c = table.cold(s);
    if (!(rate > 0) || now <= c.last) return c.remaining;
    return std::max(0.0, c.remaining - rate * static_cast<double>(now - c.last) * kBytesPerBitPs);
  }

  // The flow's remaining bytes brought up to now.
  void catch_up(std::int32_t s) {
    Cold& c = cold_of(s);
    c.remaining = remaining_now(s);
    c.last = now;
  }

  void deliver_at(std::int32_t slot, std::int64_t t) {
    hot_of(slot).state = FlowState::Delivering;
    deliveries.push_back({t, cold_of(slot).id, slot});
    std::push_heap(deliveries.begin(), deliveries.end(), DeliveryLater{});
  }

  void push_drain(std::int32_t slot) {
    const Cold& c = cold_of(slot);
    const std::int64_t d = drain_ps(c.remaining, hot_of(slot).rate);
    // Stalled (rate 0) or draining past the end of the picosecond clock: no event. If nothing
    // else changes its rate, the engine ends with the transfer unfinished and asks
    // stalled_transfers() why.
    if (d == std::numeric_limits<std::int64_t>::max() ||
        d > std::numeric_limits<std::int64_t>::max() - now) {
      drains.erase(slot);
      return;
    }
    drains.set(slot, now + d);
  }

  // A deferred recomputation is an event only while some flow still drains: with none left
  // (or only stalled ones) there is no rate for it to change.
  bool deferred() const {
    return dirty && !forced && batching.due() != CompletionBatching::kNever && !drains.empty();
  }

  std::optional<std::int64_t> peek() const {
    std::optional<std::int64_t> t;
    if (!drains.empty()) t = drains.top_time();
    if (!deliveries.empty() && (!t || deliveries.front().t < *t)) t = deliveries.front().t;
    if (deferred() && (!t || batching.due() < *t)) t = batching.due();
    return t;
  }

  // Completion batching, before the batch is due: the flows whose bottleneck was a completed
  // flow's bottleneck (at or above its rate) are re-filled, once, with every other flow held at
  // its rate. The result is feasible and uses the freed capacity where it was freed; the exact
  // recomputation at `due` then starts from every channel these fills touched. Flows below the
  // level were not touched, so the level bound still holds for it, unless a fill lowered a
  // rate: then it starts at level 0.
  void refill_locally() {
    const double fixed_below = batching.take_local_level() * (1.0 - kRel);
    // Only the flows held back by the freed channel itself can use what it freed.
    const bool any = max_min.gather(batching.local_seeds(), fixed_below, true);
    batching.local_seeds().clear();
    if (!any) return;
    max_min.water_fill();
    ++solver.local_fills;
    apply_rates(false);
    batching.refilled(max_min.channels(), lowered, channels.size());
  }

  void flush() {
    if (!dirty) return;
    // Only completions since the last recomputation, and their batch is not due yet.
    if (!forced && batching.waits(now, !drains.empty())) {
      refill_locally();
      return;
    }
    dirty = false;
    forced = false;
    if (batching.close(seeds)) level = 0;
    double lvl = level;
    for (std::int32_t s : fresh) {
      const Hot& f = hot_of(s);
      if (!f.fresh || f.state != FlowState::Active) continue;
      const ChannelId* p = table.path(s);
      for (std::int32_t i = 0; i < f.len; ++i) {
        lvl = std::min(lvl, chan(p[i]).cap / static_cast<double>(table.flows_on(p[i]).size()));
      }
    }
    fresh.clear();
    level = kInf;
    // Rates computed on different occasions may differ in the last bits; a margin keeps a flow
    // at the level itself among the flows re-filled.
    const double fixed_below = lvl * (1.0 - kRel);
    const bool any = max_min.gather(seeds, fixed_below);
    seeds.clear();
    if (!any) return;
    max_min.solve(fixed_below);
    apply_rates(true);
    ++events;
    ++solver.recomputations;
    solver.flows_recomputed += static_cast<std::int64_t>(max_min.flows().size());
    solver.channels_recomputed += static_cast<std::int64_t>(max_min.channels().size());
    solver.largest_recomputation =
        std::max(solver.largest_recomputation, static_cast<std::int64_t>(max_min.flows().size()));
  }

  // V's new rates take effect (new_rate, new_load from the last water-filling).
  // `exact`: V is the max-min recomputation (not a local re-fill).
  void apply_rates(bool exact) {
    lowered = false;
    const std::vector<std::int32_t>& comp_flows = max_min.flows();
    const auto v = static_cast<std::int32_t>(comp_flows.size());
    // A flow whose rate barely moved keeps it (and its completion event); the loads must then
    // count the rate it keeps, or the difference would pile up in channels that never empty.
    for (std::int32_t s : comp_flows) {
      Hot& f = hot_of(s);
      if (f.fresh || std::abs(f.new_rate - f.rate) > kSameRate * std::max(f.new_rate, f.rate)) {
        continue;
      }
      const double keep = f.rate - f.new_rate;
      f.new_rate = f.rate;
      const ChannelId* p = table.path(s);
      for (std::int32_t i = 0; i < f.len; ++i) {
        chan(p[i]).new_load += keep;
      }
    }
    for (ChannelId c : max_min.channels()) {
      settle(c);
      Chan& ch = chan(c);
      ch.load = table.flows_on(c).empty() ? 0.0 : ch.new_load;
    }
    for (std::int32_t s : comp_flows) {
      Hot& f = hot_of(s);
      const double r = f.new_rate;
      if (!f.fresh && r == f.rate) continue;
      if (r < f.rate) lowered = true;
      catch_up(s);
      if (exact) cold_of(s).last_v = v;
      ++solver.rates_changed;
      f.rate = r;
      f.fresh = false;
      if (r > 0) {
        push_drain(s);
      } else {
        drains.erase(s);
      }
    }
  }

  void finish_draining(std::int32_t slot) {
    const double rate = hot_of(slot).rate;
    detach(slot);
    hot_of(slot).rate = 0;
    Cold& c = cold_of(slot);
    batching.completed(hot_of(slot), c, rate, now);
    c.remaining = 0;
    deliver_at(slot, now + c.latency_ps);
  }

  // The flows crossing either channel of a link, in victims.
  void gather_victims(LinkId link) {
    victims.clear();
    for (ChannelId c : {2 * link, 2 * link + 1}) {
      const auto& list = table.flows_on(c);
      victims.insert(victims.end(), list.begin(), list.end());
    }
  }

  // Takes the flows crossing a circuit off their routes and pauses them (disconnect()).
  void pause_off(LinkId link) {
    gather_victims(link);
    std::sort(victims.begin(), victims.end());
    victims.erase(std::unique(victims.begin(), victims.end()), victims.end());
    for (std::int32_t s : victims) {
      catch_up(s);
      detach(s);
      hot_of(s).rate = 0;
      hot_of(s).state = FlowState::Paused;
      drains.erase(s);
      paused.push_back(s);
    }
  }

  void fire(const Delivery& d) {
    Cold& c = cold_of(d.slot);
    DoneCallback cb = std::move(c.on_done);
    c.on_done = nullptr;
    hot_of(d.slot).state = FlowState::Free;
    c.id = -1;
    ++totals.delivered;
    totals.bytes_delivered += c.size;
    table.release(d.slot);
    --active;
    ++events;
    if (cb) cb(d.id, Time::picoseconds(now));
  }

  // Moves an active flow onto route `r`: the bytes it has sent stay sent, the rest go over `r`,
  // with r's latency.
  void move_to(std::int32_t s, const Route& r) {
    catch_up(s);
    detach(s);
    hot_of(s).rate = 0;
    drains.erase(s);
    Cold& c = cold_of(s);
    c.cost = r.cost;
    c.latency_ps = r.latency.ps() * c.latency_hops;
    attach(s, r);
    ++solver.rerouted;
  }

  bool crosses_down_link(std::int32_t s) const {
    const ChannelId* p = table.path(s);
    const std::int32_t len = table.hot(s).len;
    for (std::int32_t i = 0; i < len; ++i) {
      if (!router.link_up(link_of_channel(p[i]))) return true;
    }
    return false;
  }

  // Moves the flows off a link that just went down onto equal-cost routes, where there are any.
  void reroute_off(LinkId link) {
    gather_victims(link);
    for (std::int32_t s : victims) {
      const Cold& c = cold_of(s);
      if (!router.find(c.src, c.dst, c.hash, route, false) || route.cost != c.cost) continue;
      move_to(s, route);
    }
  }
};

void check_completion_batching(double fraction, const std::string& file, const std::string& field) {
  if (!(fraction >= 0 && fraction <= kMaxCompletionBatching)) {
    throw Error(
        file, field,
        fmt::format("must be a fraction of a transfer's age between 0 (exact) and {}, got {}",
                    kMaxCompletionBatching, fraction));
  }
}

FlowBackend::FlowBackend(const Topology& topology, const FlowBackendOptions& options)
    : s_(std::make_unique<State>(topology, options)) {
  check_completion_batching(options.completion_batching);
}

FlowBackend::~FlowBackend() = default;

TransferId FlowBackend::start(const net::Transfer& t, DoneCallback on_done) {
  State& s = *s_;
  s.sync();
  check_transfer(t);
  s.router.route(t.src, t.dst, t.flow_hash, s.route);

  const std::int32_t slot = s.table.allocate();
  const TransferId id = s.next_id++;
  Cold& c = s.cold_of(slot);
  c.id = id;
  c.size = t.size.count();
  c.src = t.src;
  c.dst = t.dst;
  c.hash = t.flow_hash;
  c.cost = s.route.cost;
  c.latency_hops = t.latency_hops;
  c.latency_ps = s.route.latency.ps() * t.latency_hops;
  c.remaining = static_cast<double>(t.size.count());
  c.last = s.now;
  c.started = s.now;
  c.last_v = 0;
  Hot& f = s.hot_of(slot);
  f.rate = 0;
  f.len = 0;
  s.cold_of(slot).on_done = std::move(on_done);
  ++s.active;
  ++s.events;
  ++s.totals.started;
  s.totals.bytes_sent += t.size.count();
  if (t.size.count() == 0 || s.route.channels.empty()) {
    // Nothing to drain (or nothing to cross): only the latency remains.
    s.deliver_at(slot, s.now + (s.route.channels.empty() ? 0 : c.latency_ps));
    return id;
  }
  f.state = FlowState::Active;
  s.attach(slot, s.route);
  return id;
}

void FlowBackend::set_link_rate(LinkId link, Rate rate) {
  State& s = *s_;
  s.sync();
  check_link_rate(s.links, link, rate);
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    s.settle(c);
    s.chan(c).cap = rate.bps();
    s.seeds.push_back(c);
  }
  // A mirrored PCIe channel must stay at least as fast as its cable.
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    const ChannelId t = s.mirrors.cable_of(c);
    if (t >= 0 && s.chan(c).cap < s.chan(t).cap) s.unmirror(link);
    const ChannelId m = s.mirrors.pcie_of(c);
    if (m >= 0 && s.chan(m).cap < s.chan(c).cap) s.unmirror(link_of_channel(m));
  }
  s.force(0);
  const bool was_up = s.router.link_up(link);
  const bool is_up = rate.bps() > 0;
  s.mark_down(link, !is_up);
  if (was_up == is_up) return;
  s.router.set_link_up(link, is_up);
  if (!is_up) s.reroute_off(link);
}

Time FlowBackend::now() const {
  return Time::picoseconds(s_->now);
}

std::optional<Time> FlowBackend::next_event_time() const {
  s_->flush();
  const auto t = s_->peek();
  if (!t) return std::nullopt;
  return Time::picoseconds(*t);
}

void FlowBackend::advance(Time t) {
  State& s = *s_;
  if (t.ps() < s.now) {
    throw std::logic_error(
        fmt::format("FlowBackend::advance: time {} ps is before now ({} ps)", t.ps(), s.now));
  }
  s.flush();
  for (;;) {
    const auto next = s.peek();
    if (!next || *next > t.ps()) break;
    s.now = *next;
    // Everything at this timestamp is one batch: flows whose bytes are done leave their
    // channels, completions fire (their callbacks may start transfers), then one recomputation.
    while (!s.drains.empty() && s.drains.top_time() == s.now) {
      const std::int32_t slot = s.drains.top();
      s.drains.erase(slot);
      s.finish_draining(slot);
    }
    while (!s.deliveries.empty() && s.deliveries.front().t == s.now) {
      std::pop_heap(s.deliveries.begin(), s.deliveries.end(), DeliveryLater{});
      const Delivery d = s.deliveries.back();
      s.deliveries.pop_back();
      s.fire(d);
    }
    s.flush();
  }
  s.now = t.ps();
}

std::size_t FlowBackend::active_transfers() const {
  return s_->active;
}

std::int64_t FlowBackend::events_processed() const {
  return s_->events;
}

const std::vector<ChannelStats>& FlowBackend::channel_stats() const {
  return s_->channels.settle_all(s_->now, s_->mirrors);
}

void FlowBackend::record_timeline(const TimelineOptions& options) {
  State& s = *s_;
  s.sync();
  s.timeline = std::make_unique<LinkTimeline>(s.links, options);
  s.channels.count_into(s.timeline.get(), s.now);
}

std::optional<LinkTimeline> FlowBackend::take_timeline() {
  State& s = *s_;
  if (!s.timeline) return std::nullopt;
  s.channels.settle_all(s.now, s.mirrors);
  // A PCIe channel mirroring its NIC's cable was never in a route: it carried what the cable did.
  for (std::size_t c = 0; c < s.timeline->channels(); ++c) {
    const ChannelId cable = s.mirrors.cable_of(static_cast<ChannelId>(c));
    if (cable >= 0) s.timeline->copy(cable, static_cast<ChannelId>(c));
  }
  s.channels.count_into(nullptr, s.now);
  s.timeline->close();
  std::optional<LinkTimeline> out(std::move(*s.timeline));
  s.timeline.reset();
  return out;
}

std::optional<Rate> FlowBackend::rate_of(TransferId id) const {
  s_->flush();
  const std::int32_t slot = s_->table.find_active(id);
  if (slot < 0) return std::nullopt;
  return Rate::bits_per_second(s_->hot_of(slot).rate);
}

std::vector<ChannelId> FlowBackend::channels_of(TransferId id) const {
  const std::int32_t slot = s_->table.find_active(id);
  if (slot < 0) return {};
  return s_->full_path(slot);
}

std::vector<StalledTransfer> FlowBackend::stalled_transfers(std::size_t limit) const {
  State& s = *s_;
  s.flush();
  std::vector<StalledTransfer> out;
  for (std::size_t i = 0; i < s.table.slots() && out.size() < limit; ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    const bool paused = s.table.hot(slot).state == FlowState::Paused;
    if (!paused && (s.table.hot(slot).state != FlowState::Active || s.drains.contains(slot)))
      continue;
    StalledTransfer st;
    const Cold& c = s.table.cold(slot);
    st.id = c.id;
    st.src = c.src;
    st.dst = c.dst;
    st.rate = Rate::bits_per_second(s.table.hot(slot).rate);
    st.remaining = Bytes(static_cast<std::int64_t>(std::min(s.remaining_now(slot), 9e18)));
    st.why =
        st.rate.bps() > 0 ? StalledTransfer::Why::PastTimeRange : StalledTransfer::Why::LinkDown;
    if (paused) st.why = StalledTransfer::Why::Paused;
    for (ChannelId ch : s.full_path(slot)) {
      if (!s.router.link_up(link_of_channel(ch))) {
        st.down_link = link_of_channel(ch);
        break;
      }
    }
    out.push_back(st);
  }
  return out;
}

TransferTotals FlowBackend::totals() const {
  return s_->totals;
}

LinkId FlowBackend::connect(fabric::NodeId nic_a, fabric::NodeId nic_b) {
  State& s = *s_;
  s.sync();
  const LinkId id = s.links.connect(nic_a, nic_b);
  const double rate = s.links.link(id).rate.bps();
  for (ChannelId c : {2 * id, 2 * id + 1}) {
    s.settle(c);
    s.chan(c).cap = rate;
  }
  s.router.set_link_up(id, rate > 0);
  s.mark_down(id, !(rate > 0));
  return id;
}

void FlowBackend::disconnect(LinkId circuit) {
  State& s = *s_;
  if (!s.links.connected(circuit)) {
    throw Error("", "circuit", fmt::format("link {} is not a connected circuit", circuit));
  }
  s.flush();  // rates as of now, so that paused flows keep exactly the bytes they have left
  s.pause_off(circuit);
  for (ChannelId c : {2 * circuit, 2 * circuit + 1}) {
    s.settle(c);
    s.chan(c).cap = 0;
  }
  s.router.set_link_up(circuit, false);
  s.mark_down(circuit, false);  // a free slot: no route crosses it
  s.links.disconnect(circuit);
  s.force(0);
}

void FlowBackend::resume_paused() {
  resume_paused_on(std::vector<bool>(static_cast<std::size_t>(s_->topo.cluster().servers), true));
}

void FlowBackend::resume_paused(std::span<const fabric::NodeId> nics) {
  resume_paused_on(servers_of_nics(s_->topo, nics));
}

void FlowBackend::resume_paused_on(const std::vector<bool>& servers) {
  State& s = *s_;
  std::vector<std::int32_t> slots;
  std::vector<std::int32_t> still;
  // A transfer relayed to or from a server cut off from the EPS crosses a circuit of the other
  // end's region: either end on the servers resumes it.
  const auto inside = [&](fabric::NodeId gpu) {
    return servers[static_cast<std::size_t>(s.topo.node(gpu).server)];
  };
  for (std::int32_t slot : s.paused) {
    const Cold& c = s.cold_of(slot);
    (inside(c.src) || inside(c.dst) ? slots : still).push_back(slot);
  }
  s.paused.swap(still);
  for (std::int32_t slot : slots) {
    Cold& c = s.cold_of(slot);
    s.router.route(c.src, c.dst, c.hash, s.route);
    c.cost = s.route.cost;
    c.latency_ps = s.route.latency.ps() * c.latency_hops;
    c.last = s.now;
    s.hot_of(slot).state = FlowState::Active;
    s.attach(slot, s.route);
  }
}

void FlowBackend::reroute(std::span<const fabric::NodeId> nics) {
  State& s = *s_;
  const std::vector<bool> servers = servers_of_nics(s.topo, nics);
  s.flush();  // rates up to date before the bytes sent so far are counted
  for (std::size_t i = 0; i < s.table.slots(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.table.hot(slot).state != FlowState::Active) continue;
    Cold& c = s.cold_of(slot);
    if (!servers[static_cast<std::size_t>(s.topo.node(c.src).server)]) continue;
    if (!s.router.find(c.src, c.dst, c.hash, s.route, false) || !(s.route.cost < c.cost)) continue;
    s.move_to(slot, s.route);
  }
}

void FlowBackend::reroute_down() {
  State& s = *s_;
  s.sync();
  if (s.links_down == 0) return;
  // In slot order, for determinism; a transfer with no route over up links stays where it is.
  for (std::size_t i = 0; i < s.table.slots(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.table.hot(slot).state != FlowState::Active || !s.crosses_down_link(slot)) continue;
    const Cold& c = s.cold_of(slot);
    if (!s.router.find(c.src, c.dst, c.hash, s.route, false)) continue;
    s.move_to(slot, s.route);
  }
}

std::size_t FlowBackend::paused_transfers() const {
  return s_->paused.size();
}

fabric::NodeId FlowBackend::circuit_peer(fabric::NodeId nic) const {
  const fabric::LinkId c = links().circuit_at(nic);
  return c < 0 ? fabric::kNoNode : links().other_end(c, nic);
}

const LinkTable& FlowBackend::links() const {
  return s_->links;
}

SolverStats FlowBackend::solver_stats() const {
  return s_->solver;
}

const Router& FlowBackend::router() const {
  return s_->router;
}

}  // namespace mfabric::net
