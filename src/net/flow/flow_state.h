// The state of a FlowBackend (flow_backend.h) and the lifecycle of its flows: started, routed
// onto the table, given rates by the solver, drained, delivered, paused, moved. Its own header
// so that the backend's methods can live in one file per job (flow_backend.cpp: the core;
// flow_backend_circuits.cpp: circuits and re-routing; flow_backend_stats.cpp: statistics and
// timelines) while the per-event work stays inline where the event loop calls it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "net/flow/channel_ledger.h"
#include "net/flow/completion_batching.h"
#include "net/flow/completion_queues.h"
#include "net/flow/flow_backend.h"
#include "net/flow/flow_records.h"
#include "net/flow/flow_table.h"
#include "net/flow/max_min_solver.h"
#include "net/flow/pcie_mirror.h"

namespace mfabric::net {

// The records are the table's (flow_table.h) and the ledger's (channel_ledger.h); the rates the
// solver's (max_min_solver.h).
struct FlowBackend::State {
  using Chan = flow::Chan;
  using ChannelLedger = flow::ChannelLedger;
  using Cold = flow::Cold;
  using CompletionBatching = flow::CompletionBatching;
  using Delivery = flow::Delivery;
  using DeliveryLater = flow::DeliveryLater;
  using DrainQueue = flow::DrainQueue;
  using FlowState = flow::FlowState;
  using FlowTable = flow::FlowTable;
  using Hot = flow::Hot;
  using MaxMinSolver = flow::MaxMinSolver;
  using LinkId = fabric::LinkId;
  static constexpr double kInf = flow::kInf;
  static constexpr double kRel = flow::kRel;
  // Rates within this relative distance are the same rate: the flow keeps its completion event.
  static constexpr double kSameRate = 1e-9;

  const fabric::Topology& topo;
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

  MaxMinSolver max_min{table.hot_records(),  channels.records(),   table.flows_per_channel(),
                       table.routes(),       table.route_stride(), solver,
                       &table.coefficients()};

  // Coflows (start_coflow), by slot: the transfers a weighted flow stands for. Its Cold record
  // counts `remaining` in units of its average member's bytes, and its rate is that member's:
  // member i moves at rate x size_i / unit, so all of them finish together, and a channel
  // carries x (bytes of its members there) / unit, the coefficient its route entry holds.
  struct CoflowMember {
    TransferId id = -1;
    net::Transfer transfer;
    DoneCallback on_done;
  };
  struct Coflow {
    std::vector<CoflowMember> members;
    double unit = 0;
  };
  // A member's bytes on a channel below this share of the average member's count as this share
  // (the solver divides by the coefficients; a tiny one would only add rounding).
  static constexpr double kMinCoefficient = 1e-3;
  // By slot (a slot's entry is kept, with its vector's room, for the slot's next coflow).
  std::vector<Coflow> coflows;
  std::size_t active_coflows = 0;
  Coflow& coflow_of(std::int32_t slot) { return coflows[static_cast<std::size_t>(slot)]; }
  std::vector<double> channel_bytes;  // start_coflow's scratch, per channel
  std::vector<ChannelId> touched;     // the channels it wrote
  std::vector<double> detached_coef;  // detach()'s scratch
  std::vector<Route> coflow_routes;   // start_coflow()'s scratch
  std::vector<std::size_t> coflow_members;
  std::vector<std::int32_t> victims;  // scratch of pause_off() and reroute_off()

  DrainQueue drains;
  std::vector<Delivery> deliveries;
  // Bytes per channel per time bin, when record_timeline() asked for them.
  std::unique_ptr<LinkTimeline> timeline;

  State(const fabric::Topology& t, const FlowBackendOptions& o)
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
        // A coflow uses the PCIe as often as the cable: the same members cross both.
        const auto a = static_cast<float>(table.coefficient(s, at));
        table.insert(s, before ? at : at + 1, p, a);
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
    if (f.weighted) {
      detached_coef.clear();
      for (std::int32_t i = 0; i < f.len; ++i)
        detached_coef.push_back(table.coefficient(slot, i));
      std::size_t i = 0;
      table.remove_route(slot, [&](ChannelId c, const std::vector<std::int32_t>& left) {
        settle(c);
        Chan& ch = chan(c);
        ch.load = left.empty() ? 0.0 : ch.load - rate * detached_coef[i++];
        seeds.push_back(c);
      });
    } else {
      table.remove_route(slot, [&](ChannelId c, const std::vector<std::int32_t>& left) {
        settle(c);
        Chan& ch = chan(c);
        ch.load = left.empty() ? 0.0 : ch.load - rate;
        seeds.push_back(c);
      });
    }
    level = std::min(level, rate);
    dirty = true;
  }

  // The bytes the flow has left now: what it had at its last update, less what its rate has
  // sent since.
  double remaining_now(std::int32_t s) const {
    const double rate = table.hot(s).rate;
    const Cold& c = table.cold(s);
    if (!(rate > 0) || now <= c.last) return c.remaining;
    return std::max(0.0,
                    c.remaining - rate * static_cast<double>(now - c.last) * flow::kBytesPerBitPs);
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
    const std::int64_t d = flow::drain_ps(c.remaining, hot_of(slot).rate);
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
    // A fresh flow's rate is at least cap / flows on some channel of its route only where every
    // flow counts once: with coflows about, no level is known.
    if (active_coflows > 0) lvl = 0;
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
      if (f.weighted) {
        for (std::int32_t i = 0; i < f.len; ++i)
          chan(p[i]).new_load += keep * table.coefficient(s, i);
      } else {
        for (std::int32_t i = 0; i < f.len; ++i) {
          chan(p[i]).new_load += keep;
        }
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
    dissolve_on(link);
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
    if (hot_of(d.slot).weighted) {
      fire_coflow(d.slot);
      return;
    }
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
    dissolve_on(link);
    gather_victims(link);
    for (std::int32_t s : victims) {
      const Cold& c = cold_of(s);
      if (!router.find(c.src, c.dst, c.hash, route, false) || route.cost != c.cost) continue;
      move_to(s, route);
    }
  }

  // Puts transfer `t` (id `id`, `remaining` of its bytes still to send) on its route now.
  void place(TransferId id, const net::Transfer& t, double remaining, DoneCallback on_done) {
    router.route(t.src, t.dst, t.flow_hash, route);
    const std::int32_t slot = table.allocate();
    Cold& c = cold_of(slot);
    c.id = id;
    c.size = t.size.count();
    c.src = t.src;
    c.dst = t.dst;
    c.hash = t.flow_hash;
    c.cost = route.cost;
    c.latency_hops = t.latency_hops;
    c.latency_ps = route.latency.ps() * t.latency_hops;
    c.remaining = remaining;
    c.last = now;
    c.started = now;
    c.last_v = 0;
    c.on_done = std::move(on_done);
    Hot& f = hot_of(slot);
    f.rate = 0;
    f.len = 0;
    f.weighted = false;
    if (!(remaining > 0) || route.channels.empty()) {
      // Nothing to drain (or nothing to cross): only the latency remains.
      deliver_at(slot, now + (route.channels.empty() ? 0 : c.latency_ps));
      return;
    }
    f.state = FlowState::Active;
    attach(slot, route);
  }

  void count_start(const net::Transfer& t) {
    ++active;
    ++events;
    ++totals.started;
    totals.bytes_sent += t.size.count();
  }

  // Coflows (flow_backend_coflows.cpp): made by start_coflow(), re-routed whole, split back into
  // their members, completed.
  std::vector<TransferId> start_coflow(std::span<const net::Transfer> transfers,
                                       std::vector<DoneCallback>& on_done);
  void add_coflow(const std::vector<std::size_t>& members, std::span<const net::Transfer> transfers,
                  const std::vector<TransferId>& ids, std::vector<DoneCallback>& on_done,
                  double total, std::int64_t latency);
  void add_member_bytes(const net::Transfer& t, const Route& r);
  void append_coflow_route(std::int32_t slot, double unit);
  void clear_channel_bytes();
  void dissolve(std::int32_t slot);
  void reroute_coflow(std::int32_t slot);
  void dissolve_on(LinkId link);
  void fire_coflow(std::int32_t slot);
};

}  // namespace mfabric::net
