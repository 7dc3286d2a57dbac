#include "net/flow_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::Topology;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Seconds per picosecond over bits per byte: bytes = rate_bps * ps * kBytesPerBitPs.
constexpr double kBytesPerBitPs = 1e-12 / 8.0;
// Rates within this relative distance are the same rate: the flow keeps its completion event.
constexpr double kSameRate = 1e-9;
// A channel carrying less than this is idle (guards sums that cancel to rounding noise).
constexpr double kIdleBps = 1e-3;

enum class FlowState : std::uint8_t { Free, Active, Delivering };

struct DrainEvent {
  std::int64_t t;
  std::int32_t slot;
  std::uint32_t version;
};
struct DrainLater {
  bool operator()(const DrainEvent& x, const DrainEvent& y) const {
    return x.t != y.t ? x.t > y.t : x.slot > y.slot;
  }
};

struct Delivery {
  std::int64_t t;
  TransferId id;
  std::int32_t slot;
};
struct DeliveryLater {
  bool operator()(const Delivery& x, const Delivery& y) const {
    return x.t != y.t ? x.t > y.t : x.id > y.id;
  }
};

struct ShareEntry {
  double share;
  std::int32_t channel;
  std::uint32_t version;
};
struct ShareLater {
  bool operator()(const ShareEntry& x, const ShareEntry& y) const {
    return x.share != y.share ? x.share > y.share : x.channel > y.channel;
  }
};

// Picoseconds to drain `bytes` at `bps`, rounded up so that a transfer never finishes before its
// last bit; a slack far below a picosecond absorbs floating-point noise on exact quotients.
std::int64_t drain_ps(double bytes, double bps) {
  const double ps = bytes * 8.0 / bps * 1e12;
  if (!(ps < 4e18)) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::ceil(ps - ps * 1e-13 - 1e-6));
}

}  // namespace

struct FlowBackend::State {
  struct Flow {
    double rate = 0;
    double new_rate = 0;
    double remaining = 0;  // bytes still to send as of `last`
    std::int64_t last = 0;
    std::int64_t latency_ps = 0;  // route latency x latency_hops
    std::uint32_t mark = 0;       // epoch: in the current recomputation
    std::uint32_t frozen = 0;     // epoch: rate fixed in the current water-filling
    std::uint32_t version = 0;    // drain events of other versions are stale
    std::int32_t len = 0;         // channels on the route
    FlowState state = FlowState::Free;
    bool fresh = false;  // started or re-routed since the last recomputation
    TransferId id = -1;
    fabric::NodeId src = fabric::kNoNode;
    fabric::NodeId dst = fabric::kNoNode;
    std::uint64_t hash = 0;
    int latency_hops = 1;
    RouteCost cost;
  };

  const Topology& topo;
  Router router;
  Route route;  // scratch
  std::int64_t now = 0;
  std::int64_t events = 0;
  TransferId next_id = 0;
  std::size_t active = 0;
  SolverStats solver;

  // Per channel.
  std::vector<double> cap;
  std::vector<std::vector<std::int32_t>> on;  // active flows (slots) crossing the channel
  std::vector<double> load;                   // sum of their rates
  std::vector<std::int64_t> settled;          // stats are up to date until this time
  std::vector<ChannelStats> stats;
  std::vector<std::uint32_t> mark;
  // Water-filling scratch.
  std::vector<double> residual;
  std::vector<std::int32_t> unfrozen;
  std::vector<std::uint32_t> share_version;
  std::vector<double> new_load;

  // Per flow slot. Routes live in one flat array with a fixed stride (grown when a longer route
  // appears) so that starting a transfer allocates nothing once the arrays are warm.
  std::vector<Flow> flows;
  std::vector<DoneCallback> callbacks;
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

  std::uint32_t epoch = 0;
  std::vector<ChannelId> comp_channels;
  std::vector<std::int32_t> comp_flows;
  std::vector<ShareEntry> shares;
  std::vector<std::int32_t> victims;

  std::vector<DrainEvent> drains;
  std::vector<Delivery> deliveries;

  explicit State(const Topology& t) : topo(t), router(t) { sync(); }

  ChannelId* path_of(std::int32_t slot) {
    return path.data() + static_cast<std::ptrdiff_t>(slot) * stride;
  }
  std::int32_t* pos_of(std::int32_t slot) {
    return pos.data() + static_cast<std::ptrdiff_t>(slot) * stride;
  }

  void sync() {
    const std::size_t channels = 2 * topo.links().size();
    if (channels == cap.size()) return;
    const std::size_t old = cap.size();
    router.sync();
    cap.resize(channels);
    for (std::size_t c = old; c < channels; ++c) {
      cap[c] = topo.links()[c / 2].rate.bps();
    }
    on.resize(channels);
    load.resize(channels, 0.0);
    settled.resize(channels, now);
    stats.resize(channels);
    mark.resize(channels, 0);
    residual.resize(channels, 0.0);
    unfrozen.resize(channels, 0);
    share_version.resize(channels, 0);
    new_load.resize(channels, 0.0);
  }

  void settle(ChannelId c) {
    const auto i = static_cast<std::size_t>(c);
    const std::int64_t dt = now - settled[i];
    if (dt <= 0) return;
    if (load[i] > kIdleBps) {
      stats[i].bytes += load[i] * static_cast<double>(dt) * kBytesPerBitPs;
      stats[i].busy += Time::picoseconds(dt);
    }
    settled[i] = now;
  }

  void settle_all() {
    for (std::size_t c = 0; c < cap.size(); ++c) {
      settle(static_cast<ChannelId>(c));
    }
  }

  std::int32_t allocate_slot() {
    if (!free_slots.empty()) {
      const std::int32_t s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    const auto s = static_cast<std::int32_t>(flows.size());
    flows.emplace_back();
    callbacks.emplace_back();
    path.resize(path.size() + static_cast<std::size_t>(stride));
    pos.resize(pos.size() + static_cast<std::size_t>(stride));
    return s;
  }

  void grow_stride(std::int32_t len) {
    const std::int32_t wider = std::max(len, 2 * stride);
    std::vector<ChannelId> p(flows.size() * static_cast<std::size_t>(wider));
    std::vector<std::int32_t> q(p.size());
    for (std::size_t s = 0; s < flows.size(); ++s) {
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
    flows[static_cast<std::size_t>(slot)].len = len;
    ChannelId* p = path_of(slot);
    std::int32_t* q = pos_of(slot);
    for (std::int32_t i = 0; i < len; ++i) {
      const ChannelId c = r.channels[static_cast<std::size_t>(i)];
      auto& list = on[static_cast<std::size_t>(c)];
      p[i] = c;
      q[i] = static_cast<std::int32_t>(list.size());
      list.push_back(slot);
      seeds.push_back(c);
    }
    flows[static_cast<std::size_t>(slot)].fresh = true;
    fresh.push_back(slot);
    dirty = true;
  }

  // Takes a flow off its channels, bringing their statistics up to date first.
  void detach(std::int32_t slot) {
    Flow& f = flows[static_cast<std::size_t>(slot)];
    const ChannelId* p = path_of(slot);
    const std::int32_t* q = pos_of(slot);
    for (std::int32_t i = 0; i < f.len; ++i) {
      const ChannelId c = p[i];
      const auto ci = static_cast<std::size_t>(c);
      settle(c);
      auto& list = on[ci];
      const std::int32_t at = q[i];
      const std::int32_t moved = list.back();
      list[static_cast<std::size_t>(at)] = moved;
      list.pop_back();
      if (moved != slot) {
        // Fix the moved flow's back-pointer for this channel.
        const ChannelId* mp = path_of(moved);
        std::int32_t* mq = pos_of(moved);
        const std::int32_t mlen = flows[static_cast<std::size_t>(moved)].len;
        for (std::int32_t j = 0; j < mlen; ++j) {
          if (mp[j] == c) {
            mq[j] = at;
            break;
          }
        }
      }
      load[ci] = list.empty() ? 0.0 : load[ci] - f.rate;
      seeds.push_back(c);
    }
    level = std::min(level, f.rate);
    dirty = true;
    f.len = 0;
  }

  // Bytes sent since the flow's last update are taken off what it has left.
  void catch_up(Flow& f) {
    if (f.rate > 0 && now > f.last) {
      f.remaining =
          std::max(0.0, f.remaining - f.rate * static_cast<double>(now - f.last) * kBytesPerBitPs);
    }
    f.last = now;
  }

  void deliver_at(std::int32_t slot, std::int64_t t) {
    Flow& f = flows[static_cast<std::size_t>(slot)];
    f.state = FlowState::Delivering;
    deliveries.push_back({t, f.id, slot});
    std::push_heap(deliveries.begin(), deliveries.end(), DeliveryLater{});
  }

  void push_drain(std::int32_t slot) {
    const Flow& f = flows[static_cast<std::size_t>(slot)];
    const std::int64_t d = drain_ps(f.remaining, f.rate);
    if (d == std::numeric_limits<std::int64_t>::max()) return;
    drains.push_back({now + d, slot, f.version});
    std::push_heap(drains.begin(), drains.end(), DrainLater{});
  }

  bool stale(const DrainEvent& e) const {
    const Flow& f = flows[static_cast<std::size_t>(e.slot)];
    return f.state != FlowState::Active || f.version != e.version;
  }

  std::optional<std::int64_t> peek() {
    while (!drains.empty() && stale(drains.front())) {
      std::pop_heap(drains.begin(), drains.end(), DrainLater{});
      drains.pop_back();
    }
    std::optional<std::int64_t> t;
    if (!drains.empty()) t = drains.front().t;
    if (!deliveries.empty() && (!t || deliveries.front().t < *t)) t = deliveries.front().t;
    return t;
  }

  // Drops stale events when they outnumber live ones, so that the heap stays proportional to
  // the active flows however often rates change.
  void compact_drains() {
    if (drains.size() < 1024 || drains.size() < 4 * active) return;
    std::erase_if(drains, [&](const DrainEvent& e) { return stale(e); });
    std::make_heap(drains.begin(), drains.end(), DrainLater{});
  }

  void next_epoch() {
    if (++epoch == 0) {
      // Wrapped: clear every stamp so that no old stamp equals a new epoch.
      std::fill(mark.begin(), mark.end(), 0);
      for (Flow& f : flows) {
        f.mark = f.frozen = 0;
      }
      epoch = 1;
    }
  }

  void push_share(ChannelId c) {
    const auto i = static_cast<std::size_t>(c);
    shares.push_back({residual[i] / unfrozen[i], c, ++share_version[i]});
    std::push_heap(shares.begin(), shares.end(), ShareLater{});
  }

  // Recomputes max-min fair rates after the changes recorded since the last call.
  //
  // Which flows can change: progressive filling raises all rates together and freezes a flow
  // when one of its channels fills. Removing a flow of rate r, or adding one whose rate will be
  // at least r (a flow's rate is at least min over its channels of capacity / flows, because it
  // is the largest flow on its bottleneck), leaves the filling below level r untouched, so every
  // flow slower than r keeps its rate exactly. The others are re-filled on the capacity the
  // slower ones leave, and only those connected to a changed channel through shared channels
  // can change. A link rate change sets the level to 0.
  void flush() {
    if (!dirty) return;
    dirty = false;
    double lvl = level;
    for (std::int32_t s : fresh) {
      const Flow& f = flows[static_cast<std::size_t>(s)];
      if (!f.fresh || f.state != FlowState::Active) continue;
      const ChannelId* p = path_of(s);
      for (std::int32_t i = 0; i < f.len; ++i) {
        const auto c = static_cast<std::size_t>(p[i]);
        lvl = std::min(lvl, cap[c] / static_cast<double>(on[c].size()));
      }
    }
    fresh.clear();
    level = kInf;
    // Rates computed on different occasions may differ in the last bits; a margin keeps a flow
    // at the level itself among the flows re-filled.
    const double fixed_below = lvl * (1.0 - 1e-9);

    next_epoch();
    const std::uint32_t ep = epoch;
    comp_channels.clear();
    comp_flows.clear();
    for (ChannelId c : seeds) {
      if (mark[static_cast<std::size_t>(c)] == ep) continue;
      mark[static_cast<std::size_t>(c)] = ep;
      comp_channels.push_back(c);
    }
    seeds.clear();
    for (std::size_t head = 0; head < comp_channels.size(); ++head) {
      const ChannelId c = comp_channels[head];
      for (std::int32_t s : on[static_cast<std::size_t>(c)]) {
        Flow& f = flows[static_cast<std::size_t>(s)];
        if (f.mark == ep || (!f.fresh && f.rate < fixed_below)) continue;
        f.mark = ep;
        comp_flows.push_back(s);
        const ChannelId* p = path_of(s);
        for (std::int32_t i = 0; i < f.len; ++i) {
          const auto d = static_cast<std::size_t>(p[i]);
          if (mark[d] == ep) continue;
          mark[d] = ep;
          comp_channels.push_back(p[i]);
        }
      }
    }
    if (comp_flows.empty() && comp_channels.empty()) return;

    // Water-filling over the component: flows outside it keep their rates and use capacity.
    shares.clear();
    for (ChannelId c : comp_channels) {
      const auto i = static_cast<std::size_t>(c);
      settle(c);
      double fixed = 0;
      std::int32_t n = 0;
      for (std::int32_t s : on[i]) {
        const Flow& f = flows[static_cast<std::size_t>(s)];
        if (f.mark == ep) {
          ++n;
        } else {
          fixed += f.rate;
        }
      }
      residual[i] = std::max(0.0, cap[i] - fixed);
      unfrozen[i] = n;
      new_load[i] = fixed;
      if (n > 0) push_share(c);
    }
    while (!shares.empty()) {
      std::pop_heap(shares.begin(), shares.end(), ShareLater{});
      const ShareEntry e = shares.back();
      shares.pop_back();
      const auto ci = static_cast<std::size_t>(e.channel);
      if (unfrozen[ci] == 0 || share_version[ci] != e.version) continue;
      const double x = e.share;
      for (std::int32_t s : on[ci]) {
        Flow& f = flows[static_cast<std::size_t>(s)];
        if (f.mark != ep || f.frozen == ep) continue;
        f.frozen = ep;
        f.new_rate = x;
        const ChannelId* p = path_of(s);
        for (std::int32_t i = 0; i < f.len; ++i) {
          const auto d = static_cast<std::size_t>(p[i]);
          new_load[d] += x;
          if (d == ci) continue;
          residual[d] = std::max(0.0, residual[d] - x);
          if (--unfrozen[d] > 0) push_share(p[i]);
        }
      }
      unfrozen[ci] = 0;
    }

    for (ChannelId c : comp_channels) {
      const auto i = static_cast<std::size_t>(c);
      load[i] = on[i].empty() ? 0.0 : new_load[i];
    }
    for (std::int32_t s : comp_flows) {
      Flow& f = flows[static_cast<std::size_t>(s)];
      const double r = f.new_rate;
      if (!f.fresh && std::abs(r - f.rate) <= kSameRate * std::max(r, f.rate)) continue;
      catch_up(f);
      f.rate = r;
      f.fresh = false;
      ++f.version;
      if (r > 0) push_drain(s);
    }
    ++events;
    ++solver.recomputations;
    solver.flows_recomputed += static_cast<std::int64_t>(comp_flows.size());
    solver.largest_recomputation =
        std::max(solver.largest_recomputation, static_cast<std::int64_t>(comp_flows.size()));
    compact_drains();
  }

  void finish_draining(std::int32_t slot) {
    detach(slot);
    Flow& f = flows[static_cast<std::size_t>(slot)];
    f.remaining = 0;
    f.rate = 0;
    deliver_at(slot, now + f.latency_ps);
  }

  void fire(const Delivery& d) {
    DoneCallback cb = std::move(callbacks[static_cast<std::size_t>(d.slot)]);
    callbacks[static_cast<std::size_t>(d.slot)] = nullptr;
    Flow& f = flows[static_cast<std::size_t>(d.slot)];
    f.state = FlowState::Free;
    f.id = -1;
    free_slots.push_back(d.slot);
    --active;
    ++events;
    if (cb) cb(d.id, Time::picoseconds(now));
  }

  // Moves the flows off a link that just went down onto equal-cost routes, where there are any.
  void reroute_off(LinkId link) {
    victims.clear();
    for (ChannelId c : {2 * link, 2 * link + 1}) {
      const auto& list = on[static_cast<std::size_t>(c)];
      victims.insert(victims.end(), list.begin(), list.end());
    }
    for (std::int32_t s : victims) {
      Flow& f = flows[static_cast<std::size_t>(s)];
      if (!router.find(f.src, f.dst, f.hash, route, false) || route.cost != f.cost) continue;
      catch_up(f);
      detach(s);
      Flow& g = flows[static_cast<std::size_t>(s)];
      g.rate = 0;
      ++g.version;
      g.latency_ps = route.latency.ps() * g.latency_hops;
      attach(s, route);
      ++solver.rerouted;
    }
  }

  std::int32_t find_active(TransferId id) const {
    for (std::size_t s = 0; s < flows.size(); ++s) {
      if (flows[s].id == id && flows[s].state == FlowState::Active) {
        return static_cast<std::int32_t>(s);
      }
    }
    return -1;
  }
};

FlowBackend::FlowBackend(const Topology& topology) : s_(std::make_unique<State>(topology)) {}

FlowBackend::~FlowBackend() = default;

TransferId FlowBackend::start(const collective::Transfer& t, DoneCallback on_done) {
  State& s = *s_;
  s.sync();
  if (t.size.count() < 0) {
    throw Error("", "transfer", fmt::format("size must not be negative, got {}", t.size.count()));
  }
  if (t.latency_hops < 0) {
    throw Error("", "transfer",
                fmt::format("latency_hops must not be negative, got {}", t.latency_hops));
  }
  s.router.route(t.src, t.dst, t.flow_hash, s.route);

  const std::int32_t slot = s.allocate_slot();
  const TransferId id = s.next_id++;
  State::Flow& f = s.flows[static_cast<std::size_t>(slot)];
  f.id = id;
  f.src = t.src;
  f.dst = t.dst;
  f.hash = t.flow_hash;
  f.cost = s.route.cost;
  f.latency_hops = t.latency_hops;
  f.latency_ps = s.route.latency.ps() * t.latency_hops;
  f.remaining = static_cast<double>(t.size.count());
  f.rate = 0;
  f.last = s.now;
  f.len = 0;
  ++f.version;
  s.callbacks[static_cast<std::size_t>(slot)] = std::move(on_done);
  ++s.active;
  ++s.events;
  if (t.size.count() == 0 || s.route.channels.empty()) {
    // Nothing to drain (or nothing to cross): only the latency remains.
    s.deliver_at(slot, s.now + (s.route.channels.empty() ? 0 : f.latency_ps));
    return id;
  }
  f.state = FlowState::Active;
  s.attach(slot, s.route);
  return id;
}

void FlowBackend::set_link_rate(LinkId link, Rate rate) {
  State& s = *s_;
  s.sync();
  if (link < 0 || static_cast<std::size_t>(link) >= s.topo.links().size()) {
    throw Error("", "link", fmt::format("no link {} in the topology", link));
  }
  if (!(rate.bps() >= 0) || !std::isfinite(rate.bps())) {
    throw Error("", "link", fmt::format("rate must be finite and not negative, got {}", rate.bps()));
  }
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    s.settle(c);
    s.cap[static_cast<std::size_t>(c)] = rate.bps();
    s.seeds.push_back(c);
  }
  s.level = 0;
  s.dirty = true;
  const bool was_up = s.router.link_up(link);
  const bool is_up = rate.bps() > 0;
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
    while (!s.drains.empty() && s.drains.front().t == s.now) {
      std::pop_heap(s.drains.begin(), s.drains.end(), DrainLater{});
      const DrainEvent e = s.drains.back();
      s.drains.pop_back();
      if (!s.stale(e)) s.finish_draining(e.slot);
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
  return Rate::bits_per_second(s_->flows[static_cast<std::size_t>(slot)].rate);
}

std::vector<ChannelId> FlowBackend::channels_of(TransferId id) const {
  const std::int32_t slot = s_->find_active(id);
  if (slot < 0) return {};
  const ChannelId* p = s_->path_of(slot);
  return {p, p + s_->flows[static_cast<std::size_t>(slot)].len};
}

SolverStats FlowBackend::solver_stats() const {
  return s_->solver;
}

const Router& FlowBackend::router() const {
  return s_->router;
}

}  // namespace mfabric::net
