#include "net/flow_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "net/flow/completion_queues.h"
#include "net/flow/flow_records.h"
#include "net/flow/max_min_solver.h"
#include "net/flow/pcie_mirror.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::Topology;

namespace {

// Seconds per picosecond over bits per byte: bytes = rate_bps * ps * kBytesPerBitPs.
constexpr double kBytesPerBitPs = 1e-12 / 8.0;
// Rates within this relative distance are the same rate: the flow keeps its completion event.
constexpr double kSameRate = 1e-9;
// A channel carrying less than this is idle (guards sums that cancel to rounding noise).
constexpr double kIdleBps = 1e-3;
// Completion batching applies to completions whose last exact recomputation re-filled at least
// this many flows.
constexpr std::int32_t kBatchFrom = 256;

using flow::Chan;
using flow::Cold;
using flow::Delivery;
using flow::DeliveryLater;
using flow::drain_ps;
using flow::DrainQueue;
using flow::FlowState;
using flow::Hot;
using flow::kAbs;
using flow::kInf;
using flow::kRel;
using flow::MaxMinSolver;

}  // namespace

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

  std::vector<Chan> chans;
  std::vector<std::vector<std::int32_t>> on;  // active flows (slots) crossing each channel
  std::vector<ChannelStats> stats;
  flow::PcieMirror mirrors;
  std::vector<std::int32_t> scratch;

  // Per flow slot. Routes live in one flat array with a fixed stride (grown when a longer route
  // appears) so that starting a transfer allocates nothing once the arrays are warm.
  std::vector<Hot> hot;
  std::vector<Cold> cold;
  std::int32_t stride = 12;
  std::vector<ChannelId> path;
  std::vector<std::int32_t> pos;  // index of the flow in on[path[...]]
  std::vector<std::int32_t> free_slots;

  // Pending recomputation: channels whose flows changed, flows without a rate yet, and the
  // level below which no rate can change (see flush()).
  std::vector<ChannelId> seeds;
  std::vector<std::int32_t> fresh;
  double level = kInf;
  bool dirty = false;
  // Completion batching (FlowBackendOptions): while only completions are pending (`forced`
  // unset), the recomputation waits until `due`; anything else recomputes at once.
  double batching = 0;
  bool forced = false;
  std::int64_t due = std::numeric_limits<std::int64_t>::max();
  std::vector<ChannelId> batched_seeds;  // channels refill_locally() touched since the last flush
  std::vector<std::uint8_t> in_batch;    // per channel: in batched_seeds
  // The bottlenecks of the flows completed since the last local re-fill, and their lowest rate.
  std::vector<ChannelId> local_seeds;
  double local_level = kInf;
  // Whether the last apply_rates() lowered a rate; whether a local re-fill since the last flush
  // did (the level argument then no longer holds for the flush, see refill_locally()).
  bool lowered = false;
  bool local_lowered = false;

  MaxMinSolver max_min{hot, chans, on, path, stride, solver};
  std::vector<std::int32_t> victims;  // scratch of pause_off() and reroute_off()

  DrainQueue drains;
  std::vector<Delivery> deliveries;

  State(const Topology& t, const FlowBackendOptions& o)
      : topo(t), links(t), router(links), batching(o.completion_batching) {
    sync();
  }

  ChannelId* path_of(std::int32_t slot) {
    return path.data() + static_cast<std::ptrdiff_t>(slot) * stride;
  }
  std::int32_t* pos_of(std::int32_t slot) {
    return pos.data() + static_cast<std::ptrdiff_t>(slot) * stride;
  }
  Hot& hot_of(std::int32_t s) { return hot[static_cast<std::size_t>(s)]; }
  Cold& cold_of(std::int32_t s) { return cold[static_cast<std::size_t>(s)]; }
  Chan& chan(ChannelId c) { return chans[static_cast<std::size_t>(c)]; }
  std::vector<std::int32_t>& flows_on(ChannelId c) { return on[static_cast<std::size_t>(c)]; }

  void sync() {
    const std::size_t channels = 2 * links.size();
    if (channels == chans.size()) return;
    const std::size_t old = chans.size();
    router.sync();
    chans.resize(channels);
    for (std::size_t c = old; c < channels; ++c) {
      chans[c].settled = now;
      chans[c].cap = links.link(static_cast<LinkId>(c / 2)).rate.bps();
    }
    max_min.resize_channels(channels);
    down.resize(channels / 2, 0);
    for (std::size_t l = old / 2; l < channels / 2; ++l) {
      const fabric::Link& k = links.link(static_cast<LinkId>(l));
      if (k.a != fabric::kNoNode && !(k.rate.bps() > 0)) mark_down(static_cast<LinkId>(l), true);
    }
    on.resize(channels);
    stats.resize(channels);
    mirrors.resize(channels);
    if (old == 0) {
      mirrors.find(topo, chans);
      return;
    }
    // A link appended at a NIC may give it a second way out: its PCIe stops mirroring.
    for (std::size_t l = old / 2; l < channels / 2; ++l) {
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

  // --- Mirrored PCIe channels -----------------------------------------------------------------
  //
  // A NIC with one PCIe link and one network link (a cable to a switch or another NIC; cables
  // to an OCS or patch panel carry no route) passes every flow of its PCIe channel on to its
  // cable and back: a NIC is never transit. If the PCIe is at least as fast, its channels can
  // never be a bottleneck and always carry exactly what the cable carries, so the solver leaves
  // them out (a third of the channels of a cross-server route) and their statistics are the
  // cable's. The mirroring ends, for good, if the NIC gains a link or the PCIe becomes slower;
  // the flows then get the PCIe channel back.

  // Ends the mirroring of a PCIe link's channels, if any.
  void unmirror(LinkId pcie) {
    for (ChannelId p : {2 * pcie, 2 * pcie + 1}) {
      const ChannelId c = mirrors.cable_of(p);
      if (c < 0) continue;
      settle(c);
      const auto pi = static_cast<std::size_t>(p);
      stats[pi] = stats[static_cast<std::size_t>(c)];  // mirrored since the start
      chans[pi].settled = now;
      chan(p).load = chan(c).load;
      // From the GPU into the NIC, the PCIe comes before the cable; the other way, after.
      const bool before = topo.node(flow::from_node(links, p)).kind == fabric::NodeKind::Gpu;
      scratch = flows_on(c);
      for (std::int32_t s : scratch) {
        const ChannelId* q = path_of(s);
        std::int32_t at = 0;
        while (q[at] != c)
          ++at;
        insert_channel(s, before ? at : at + 1, p);
      }
      mirrors.unpair(p, c);
    }
  }

  void insert_channel(std::int32_t slot, std::int32_t at, ChannelId c) {
    if (hot_of(slot).len + 1 > stride) grow_stride(hot_of(slot).len + 1);
    Hot& f = hot_of(slot);
    ChannelId* p = path_of(slot);
    std::int32_t* q = pos_of(slot);
    for (std::int32_t j = f.len; j > at; --j) {
      p[j] = p[j - 1];
      q[j] = q[j - 1];
    }
    auto& list = flows_on(c);
    p[at] = c;
    q[at] = static_cast<std::int32_t>(list.size());
    list.push_back(slot);
    ++f.len;
  }

  // The route's channels as routed: mirrored PCIe channels put back in place.
  std::vector<ChannelId> full_path(std::int32_t slot) {
    return mirrors.full_path(path_of(slot), hot_of(slot).len, topo, links);
  }

  void settle(ChannelId c) {
    const auto i = static_cast<std::size_t>(c);
    const std::int64_t dt = now - chans[i].settled;
    if (dt <= 0) return;
    const double load = chans[i].load;
    if (load > kIdleBps) {
      stats[i].bytes += load * static_cast<double>(dt) * kBytesPerBitPs;
      stats[i].busy += Time::picoseconds(dt);
    }
    chans[i].settled = now;
  }

  void settle_all() {
    for (std::size_t c = 0; c < chans.size(); ++c) {
      settle(static_cast<ChannelId>(c));
    }
    for (std::size_t c = 0; c < chans.size(); ++c) {
      const ChannelId cable = mirrors.cable_of(static_cast<ChannelId>(c));
      if (cable >= 0) stats[c] = stats[static_cast<std::size_t>(cable)];
    }
  }

  std::int32_t allocate_slot() {
    if (!free_slots.empty()) {
      const std::int32_t s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    const auto s = static_cast<std::int32_t>(hot.size());
    hot.emplace_back();
    cold.emplace_back();
    path.resize(path.size() + static_cast<std::size_t>(stride));
    pos.resize(pos.size() + static_cast<std::size_t>(stride));
    return s;
  }

  void grow_stride(std::int32_t len) {
    const std::int32_t wider = std::max(len, 2 * stride);
    std::vector<ChannelId> p(hot.size() * static_cast<std::size_t>(wider));
    std::vector<std::int32_t> q(p.size());
    for (std::size_t s = 0; s < hot.size(); ++s) {
      std::copy_n(path.begin() + static_cast<std::ptrdiff_t>(s) * stride, stride,
                  p.begin() + static_cast<std::ptrdiff_t>(s) * wider);
      std::copy_n(pos.begin() + static_cast<std::ptrdiff_t>(s) * stride, stride,
                  q.begin() + static_cast<std::ptrdiff_t>(s) * wider);
    }
    path.swap(p);
    pos.swap(q);
    stride = wider;
  }

  void attach(std::int32_t slot, const Route& r) {
    const auto len = static_cast<std::int32_t>(r.channels.size());
    if (len > stride) grow_stride(len);
    Hot& f = hot_of(slot);
    f.bneck = -1;
    f.fresh = true;
    ChannelId* p = path_of(slot);
    std::int32_t* q = pos_of(slot);
    std::int32_t n = 0;
    for (std::int32_t i = 0; i < len; ++i) {
      const ChannelId c = r.channels[static_cast<std::size_t>(i)];
      if (mirrors.cable_of(c) >= 0) continue;  // mirrored: the cable stands for it
      auto& list = flows_on(c);
      p[n] = c;
      q[n] = static_cast<std::int32_t>(list.size());
      list.push_back(slot);
      seeds.push_back(c);
      ++n;
    }
    f.len = n;
    fresh.push_back(slot);
    dirty = true;
    forced = true;
  }

  // Takes a flow off its channels, bringing their statistics up to date first.
  void detach(std::int32_t slot) {
    Hot& f = hot_of(slot);
    const ChannelId* p = path_of(slot);
    const std::int32_t* q = pos_of(slot);
    // At cluster scale the channels are rarely in cache: ask for all of them at once, so that
    // their misses overlap instead of following one another.
    for (std::int32_t i = 0; i < f.len; ++i) {
      const auto c = static_cast<std::size_t>(p[i]);
      __builtin_prefetch(&chans[c], 1);
      __builtin_prefetch(&on[c]);
      __builtin_prefetch(&stats[c], 1);
    }
    for (std::int32_t i = 0; i < f.len; ++i) {
      const ChannelId c = p[i];
      settle(c);
      auto& list = flows_on(c);
      const std::int32_t at = q[i];
      const std::int32_t moved = list.back();
      list[static_cast<std::size_t>(at)] = moved;
      list.pop_back();
      if (moved != slot) {
        // Fix the moved flow's back-pointer for this channel.
        const ChannelId* mp = path_of(moved);
        std::int32_t* mq = pos_of(moved);
        const std::int32_t mlen = hot_of(moved).len;
        for (std::int32_t j = 0; j < mlen; ++j) {
          if (mp[j] == c) {
            mq[j] = at;
            break;
          }
        }
      }
      Chan& ch = chan(c);
      ch.load = list.empty() ? 0.0 : ch.load - f.rate;
      seeds.push_back(c);
    }
    level = std::min(level, f.rate);
    dirty = true;
    f.len = 0;
  }

  // Bytes sent since the flow's last update are taken off what it has left.
  void catch_up(std::int32_t s) {
    const double rate = hot_of(s).rate;
    Cold& c = cold_of(s);
    if (rate > 0 && now > c.last) {
      c.remaining =
          std::max(0.0, c.remaining - rate * static_cast<double>(now - c.last) * kBytesPerBitPs);
    }
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
    return dirty && !forced && due != std::numeric_limits<std::int64_t>::max() && !drains.empty();
  }

  std::optional<std::int64_t> peek() const {
    std::optional<std::int64_t> t;
    if (!drains.empty()) t = drains.top_time();
    if (!deliveries.empty() && (!t || deliveries.front().t < *t)) t = deliveries.front().t;
    if (deferred() && (!t || due < *t)) t = due;
    return t;
  }

  // Completion batching, before the batch is due: the flows whose bottleneck was a completed
  // flow's bottleneck (at or above its rate) are re-filled, once, with every other flow held at
  // its rate. The result is feasible and uses the freed capacity where it was freed; the exact
  // recomputation at `due` then starts from every channel these fills touched. Flows below the
  // level were not touched, so the level bound still holds for it, unless a fill lowered a
  // rate: then it starts at level 0.
  void refill_locally() {
    const double fixed_below = local_level * (1.0 - kRel);
    local_level = kInf;
    // Only the flows held back by the freed channel itself can use what it freed.
    const bool any = max_min.gather(local_seeds, fixed_below, true);
    local_seeds.clear();
    if (!any) return;
    max_min.water_fill();
    ++solver.local_fills;
    apply_rates(false);
    local_lowered = local_lowered || lowered;
    if (in_batch.size() < chans.size()) in_batch.resize(chans.size(), 0);
    for (ChannelId c : max_min.channels()) {
      auto& b = in_batch[static_cast<std::size_t>(c)];
      if (b == 0) batched_seeds.push_back(c);
      b = 1;
    }
  }

  void flush() {
    if (!dirty) return;
    // Only completions since the last recomputation, and their batch is not due yet.
    if (!forced && now < due && !drains.empty()) {
      refill_locally();
      return;
    }
    dirty = false;
    forced = false;
    due = std::numeric_limits<std::int64_t>::max();
    if (!batched_seeds.empty()) {
      seeds.insert(seeds.end(), batched_seeds.begin(), batched_seeds.end());
      for (ChannelId c : batched_seeds)
        in_batch[static_cast<std::size_t>(c)] = 0;
      batched_seeds.clear();
      if (local_lowered) level = 0;
      local_lowered = false;
    }
    local_seeds.clear();
    local_level = kInf;
    double lvl = level;
    for (std::int32_t s : fresh) {
      const Hot& f = hot_of(s);
      if (!f.fresh || f.state != FlowState::Active) continue;
      const ChannelId* p = path_of(s);
      for (std::int32_t i = 0; i < f.len; ++i) {
        lvl = std::min(lvl, chan(p[i]).cap / static_cast<double>(flows_on(p[i]).size()));
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
      const ChannelId* p = path_of(s);
      for (std::int32_t i = 0; i < f.len; ++i) {
        chan(p[i]).new_load += keep;
      }
    }
    for (ChannelId c : max_min.channels()) {
      settle(c);
      Chan& ch = chan(c);
      ch.load = flows_on(c).empty() ? 0.0 : ch.new_load;
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
    // The recomputation for this completion may wait `batching` x the transfer's age (rounded
    // down: 0 recomputes at once, as without batching).
    // Only completions whose exact recomputation is likely to be large are batched; the rest
    // recompute at once (for them batching would cost more than it saves).
    const bool batch = batching > 0 && c.last_v >= kBatchFrom;
    const double wait = batch ? batching * static_cast<double>(now - c.started) : 0.0;
    if (batch && hot_of(slot).bneck >= 0) {
      local_seeds.push_back(hot_of(slot).bneck);
      local_level = std::min(local_level, rate);
    }
    due = std::min(due, now + static_cast<std::int64_t>(std::min(wait, 1e18)));
    c.remaining = 0;
    deliver_at(slot, now + c.latency_ps);
  }

  // Takes the flows crossing a circuit off their routes and pauses them (disconnect()).
  void pause_off(LinkId link) {
    victims.clear();
    for (ChannelId c : {2 * link, 2 * link + 1}) {
      const auto& list = flows_on(c);
      victims.insert(victims.end(), list.begin(), list.end());
    }
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
    DoneCallback cb = std::move(cold_of(d.slot).on_done);
    cold_of(d.slot).on_done = nullptr;
    hot_of(d.slot).state = FlowState::Free;
    cold_of(d.slot).id = -1;
    ++totals.delivered;
    totals.bytes_delivered += cold_of(d.slot).size;
    free_slots.push_back(d.slot);
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
    const ChannelId* p = path.data() + static_cast<std::ptrdiff_t>(s) * stride;
    const std::int32_t len = hot[static_cast<std::size_t>(s)].len;
    for (std::int32_t i = 0; i < len; ++i) {
      if (!router.link_up(link_of_channel(p[i]))) return true;
    }
    return false;
  }

  // Moves the flows off a link that just went down onto equal-cost routes, where there are any.
  void reroute_off(LinkId link) {
    victims.clear();
    for (ChannelId c : {2 * link, 2 * link + 1}) {
      const auto& list = flows_on(c);
      victims.insert(victims.end(), list.begin(), list.end());
    }
    for (std::int32_t s : victims) {
      const Cold& c = cold_of(s);
      if (!router.find(c.src, c.dst, c.hash, route, false) || route.cost != c.cost) continue;
      move_to(s, route);
    }
  }

  std::int32_t find_active(TransferId id) const {
    for (std::size_t s = 0; s < hot.size(); ++s) {
      if (cold[s].id == id && hot[s].state == FlowState::Active) {
        return static_cast<std::int32_t>(s);
      }
    }
    return -1;
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

  const std::int32_t slot = s.allocate_slot();
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
  s.level = 0;
  s.dirty = true;
  s.forced = true;
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
  s_->settle_all();
  return s_->stats;
}

std::optional<Rate> FlowBackend::rate_of(TransferId id) const {
  s_->flush();
  const std::int32_t slot = s_->find_active(id);
  if (slot < 0) return std::nullopt;
  return Rate::bits_per_second(s_->hot_of(slot).rate);
}

std::vector<ChannelId> FlowBackend::channels_of(TransferId id) const {
  const std::int32_t slot = s_->find_active(id);
  if (slot < 0) return {};
  return s_->full_path(slot);
}

std::vector<StalledTransfer> FlowBackend::stalled_transfers(std::size_t limit) const {
  State& s = *s_;
  s.flush();
  std::vector<StalledTransfer> out;
  for (std::size_t i = 0; i < s.hot.size() && out.size() < limit; ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    const bool paused = s.hot[i].state == FlowState::Paused;
    if (!paused && (s.hot[i].state != FlowState::Active || s.drains.contains(slot))) continue;
    StalledTransfer st;
    const Cold& c = s.cold[i];
    st.id = c.id;
    st.src = c.src;
    st.dst = c.dst;
    st.rate = Rate::bits_per_second(s.hot[i].rate);
    st.remaining = Bytes(static_cast<std::int64_t>(std::min(
        c.remaining - st.rate.bps() / 8.0 * static_cast<double>(s.now - c.last) * 1e-12, 9e18)));
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
  s.level = 0;
  s.dirty = true;
  s.forced = true;
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
  for (std::size_t i = 0; i < s.hot.size(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.hot[i].state != FlowState::Active) continue;
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
  for (std::size_t i = 0; i < s.hot.size(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.hot[i].state != FlowState::Active || !s.crosses_down_link(slot)) continue;
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
