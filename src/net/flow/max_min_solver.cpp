#include "net/flow/max_min_solver.h"

#include <algorithm>

namespace mfabric::net::flow {

namespace {

// Rounds of growing the re-filled set before re-filling the whole connected set instead, and
// the size from which a set that more than doubles in one round goes there at once.
constexpr int kMaxExpansions = 8;
constexpr std::size_t kLargeSet = 32;
// Water-filling scans for the smallest share level by level (cheap when there are few distinct
// levels, as usual) for at most this many levels, then continues with a heap.
constexpr int kScanLevels = 32;

}  // namespace

// Stamps: a counter per kind; marks equal to the counter are current. On wrap-around every
// mark is cleared so that no old mark equals a new value.
void MaxMinSolver::next_epoch() {
  if (++epoch == 0) {
    for (Hot& f : hot)
      f.mark = 0;
    for (Chan& c : chans)
      c.mark = 0;
    for (ChanStamps& st : stamps)
      st.gathered = 0;
    epoch = 1;
  }
}
void MaxMinSolver::next_fill() {
  if (++fill_stamp == 0) {
    for (Hot& f : hot)
      f.frozen = 0;
    for (ChanStamps& s : stamps)
      s.raised = 0;
    fill_stamp = 1;
  }
}
void MaxMinSolver::next_check() {
  if (++check_stamp == 0) {
    for (Hot& f : hot)
      f.checked = 0;
    for (ChanStamps& s : stamps)
      s.bchecked = s.maxed = 0;
    check_stamp = 1;
  }
}

// --- Rate recomputation ---------------------------------------------------------------------
//
// Which flows can change. Progressive filling raises all rates together and freezes a flow
// when one of its channels fills. Removing a flow of rate r, or adding one whose rate will be
// at least r (a flow's rate is at least min over its channels of capacity / flows, because it
// is the largest flow on its bottleneck), leaves the filling below level r untouched, so every
// flow slower than r keeps its rate exactly (a link rate change sets the level to 0).
//
// Which flows do change is usually far fewer: re-filling only a set V (at first the flows on
// the changed channels) with every other flow held at its rate, the result is the max-min
// allocation if and only if every flow has a bottleneck, a full channel on which no flow is
// faster (Bertsekas & Gallager, Data Networks, 6.5). V's flows have one by construction if no
// held flow is faster on it; a held flow can only lose its own where V's flows slowed down or
// sped up. Flows failing either test join V and the filling runs again. If V keeps growing,
// the whole connected set of flows at or above the level is re-filled instead, which needs no
// test.

void MaxMinSolver::add_variable(std::int32_t s) {
  Hot& f = hot_of(s);
  f.mark = epoch;
  weighted_v = weighted_v || f.weighted;
  comp_flows.push_back(s);
  const ChannelId* p = path_of(s);
  for (std::int32_t i = 0; i < f.len; ++i) {
    Chan& ch = chan(p[i]);
    if (ch.mark != epoch) {
      ch.mark = epoch;
      ch.v_count = 0;
      ch.v_old = 0;
      ch.v_head = -1;
      comp_channels.push_back(p[i]);
    }
    ++ch.v_count;
    ch.v_old += f.rate;
    vnodes.push_back({s, ch.v_head, i});
    ch.v_head = static_cast<std::int32_t>(vnodes.size() - 1);
  }
}

// Every flow connected to V through shared channels, at or above the level.
void MaxMinSolver::close_component(double fixed_below) {
  for (std::size_t head = 0; head < comp_channels.size(); ++head) {
    solver.flows_visited += static_cast<std::int64_t>(flows_on(comp_channels[head]).size());
    for (std::int32_t s : flows_on(comp_channels[head])) {
      const Hot& f = hot_of(s);
      if (f.mark == epoch || (!f.fresh && f.rate < fixed_below)) continue;
      add_variable(s);
    }
  }
}

// Water-filling of V over its channels; flows outside V keep their rates and use capacity.
// Sets new_rate and bneck of V's flows and new_load of V's channels.
void MaxMinSolver::water_fill() {
  bind();
  next_fill();
  ++solver.water_fills;
  solver.channels_filled += static_cast<std::int64_t>(comp_channels.size());
  shares.clear();
  if (weighted_v) weigh_channels();
  for (ChannelId c : comp_channels) {
    Chan& ch = chan(c);
    // Capacity held by flows outside V: the channel's load less V's part of it.
    const bool all_v = static_cast<std::size_t>(ch.v_count) == flows_on(c).size();
    const double held = all_v ? 0.0 : std::max(0.0, ch.load - ch.v_old);
    ch.residual = std::max(0.0, ch.cap - held);
    ch.unfrozen = ch.v_count;
    ch.new_load = held;
    shares.push_back({weighted_v ? share<true>(c) : ch.residual / ch.v_count, c});
  }
  if (weighted_v) {
    if (!fill_by_scan<true>()) fill_by_heap<true>();
  } else {
    if (!fill_by_scan<false>()) fill_by_heap<false>();
  }
}

// With a weighted flow in V: V's coefficients on each of its channels, and its load there
// (v_old) as the sum of its flows' rates times their coefficients.
void MaxMinSolver::weigh_channels() {
  for (ChannelId c : comp_channels) {
    Chan& ch = chan(c);
    double v = 0;
    double load = 0;
    for (std::int32_t n = ch.v_head; n >= 0; n = vnodes[static_cast<std::size_t>(n)].next) {
      const VNode& node = vnodes[static_cast<std::size_t>(n)];
      const Hot& f = hot_of(node.flow);
      const double a = f.weighted ? static_cast<double>(coef_of(node.flow)[node.at]) : 1.0;
      v += a;
      load += a * f.rate;
    }
    ch.v_old = load;
    weights[static_cast<std::size_t>(c)] = {v, v};
  }
}

// A channel's fair share: its residual capacity over its unfrozen flows (their coefficients).
template <bool Weighted>
double MaxMinSolver::share(ChannelId c) const {
  const Chan& ch = chan_[c];
  if constexpr (Weighted) {
    // Coefficients are at least kMinCoefficient; the floor only absorbs rounding.
    return ch.residual / std::max(weights[static_cast<std::size_t>(c)].unfrozen, 1e-6);
  } else {
    return ch.residual / ch.unfrozen;
  }
}

// Gives every unfrozen V flow on channel c the rate x.
template <bool Weighted>
void MaxMinSolver::freeze_channel(ChannelId c, double x) {
  const std::uint32_t fill = fill_stamp;
  Chan& ch = chan(c);
  for (std::int32_t n = ch.v_head; n >= 0; n = vnodes[static_cast<std::size_t>(n)].next) {
    const std::int32_t s = vnodes[static_cast<std::size_t>(n)].flow;
    Hot& f = hot_of(s);
    if (f.frozen == fill) continue;
    f.frozen = fill;
    f.new_rate = x;
    f.bneck = c;
    const bool raised = x > f.rate * (1.0 + kRel) + kAbs;
    const ChannelId* p = path_of(s);
    if constexpr (Weighted) {
      const float* a = f.weighted ? coef_of(s) : nullptr;
      for (std::int32_t i = 0; i < f.len; ++i) {
        Chan& d = chan(p[i]);
        const double w = a == nullptr ? 1.0 : static_cast<double>(a[i]);
        d.new_load += w * x;
        if (raised) stamps[static_cast<std::size_t>(p[i])].raised = fill;
        if (p[i] == c) continue;
        d.residual = std::max(0.0, d.residual - w * x);
        --d.unfrozen;
        weights[static_cast<std::size_t>(p[i])].unfrozen -= w;
      }
    } else {
      for (std::int32_t i = 0; i < f.len; ++i) {
        Chan& d = chan(p[i]);
        d.new_load += x;
        if (raised) stamps[static_cast<std::size_t>(p[i])].raised = fill;
        if (p[i] == c) continue;
        d.residual = std::max(0.0, d.residual - x);
        --d.unfrozen;
      }
    }
  }
  ch.unfrozen = 0;
}

// Each round finds the smallest fair share with a scan (no data-dependent branches to
// mispredict, unlike a heap) and fills every channel at that level. Returns false, with the
// channels left in `shares`, when there are more levels than kScanLevels.
template <bool Weighted>
bool MaxMinSolver::fill_by_scan() {
  for (int round = 0;; ++round) {
    double m = kInf;
    std::size_t w = 0;
    for (const ShareEntry& e : shares) {
      const Chan& ch = chan(e.channel);
      if (ch.unfrozen == 0) continue;
      shares[w++] = e;
      m = std::min(m, share<Weighted>(e.channel));
    }
    shares.resize(w);
    if (w == 0) return true;
    if (round == kScanLevels) return false;
    // Channels at the same level (to rounding) fill together; each at its own current share,
    // which earlier channels of the round can only have raised.
    const double level_now = m + m * 1e-12;
    for (const ShareEntry& e : shares) {
      const Chan& ch = chan(e.channel);
      if (ch.unfrozen == 0) continue;
      const double x = share<Weighted>(e.channel);
      if (x <= level_now) freeze_channel<Weighted>(e.channel, x);
    }
  }
}

// Many levels: a heap of channels by fair share. A channel's share never falls while flows
// freeze elsewhere (a flow freezes at the smallest share, at most this channel's), so each
// channel sits in the heap once, and an entry found below its channel's current share is
// pushed back with the new value instead of every freeze pushing one.
template <bool Weighted>
void MaxMinSolver::fill_by_heap() {
  for (ShareEntry& e : shares)
    e.share = share<Weighted>(e.channel);
  std::make_heap(shares.begin(), shares.end(), ShareLater{});
  while (!shares.empty()) {
    std::pop_heap(shares.begin(), shares.end(), ShareLater{});
    const ShareEntry e = shares.back();
    shares.pop_back();
    const Chan& ch = chan(e.channel);
    if (ch.unfrozen == 0) continue;
    const double x = share<Weighted>(e.channel);
    if (x > e.share) {
      shares.push_back({x, e.channel});
      std::push_heap(shares.begin(), shares.end(), ShareLater{});
      continue;
    }
    freeze_channel<Weighted>(e.channel, x);
  }
}

// Whether channel c is full in the tentative allocation, and if so the largest rate on it;
// worked out once per channel and expand() call.
double MaxMinSolver::fastest_if_full(ChannelId c) {
  Chan& ch = chan(c);
  ChanStamps& st = stamps[static_cast<std::size_t>(c)];
  if (st.maxed != check_stamp) {
    st.maxed = check_stamp;
    const double used = ch.mark == epoch ? ch.new_load : ch.load;
    double m = kInf;  // not full: nobody's bottleneck
    if (used >= ch.cap * (1.0 - kRel) - kAbs) {
      m = 0;
      solver.flows_visited += static_cast<std::int64_t>(flows_on(c).size());
      for (std::int32_t s : flows_on(c))
        m = std::max(m, tentative(hot_of(s)));
    }
    st.max_rate = m;
  }
  return st.max_rate;
}

// Whether a flow outside V still has a bottleneck in the tentative allocation. The margins
// absorb rounding; a false "no" only costs a larger V.
bool MaxMinSolver::has_bottleneck(std::int32_t s) {
  Hot& g = hot_of(s);
  const double r = g.rate * (1.0 + kRel) + kAbs;
  if (g.bneck >= 0 && fastest_if_full(g.bneck) <= r) return true;
  const ChannelId* p = path_of(s);
  for (std::int32_t i = 0; i < g.len; ++i) {
    if (p[i] != g.bneck && fastest_if_full(p[i]) <= r) {
      g.bneck = p[i];
      return true;
    }
  }
  return false;
}

// Flows outside V that break the max-min conditions of the tentative allocation join V.
// Returns how many did.
std::size_t MaxMinSolver::expand(double fixed_below) {
  next_check();
  const std::uint32_t check = check_stamp;
  victims.clear();
  // A V flow's bottleneck is full and no V flow on it is faster; no held flow may be either.
  // Every V flow that froze there froze at the same rate, so each is looked at once.
  for (std::int32_t s : comp_flows) {
    const Hot& f = hot_of(s);
    ChanStamps& st = stamps[static_cast<std::size_t>(f.bneck)];
    if (st.bchecked == check) continue;
    st.bchecked = check;
    const Chan& b = chan(f.bneck);
    if (static_cast<std::size_t>(b.v_count) == flows_on(f.bneck).size()) continue;
    const double r = f.new_rate * (1.0 + kRel) + kAbs;
    // All held flows together are no faster (a weighted flow may use a channel less than once).
    if (!weighted_v && b.load - b.v_old <= r) continue;
    solver.flows_visited += static_cast<std::int64_t>(flows_on(f.bneck).size());
    for (std::int32_t o : flows_on(f.bneck)) {
      Hot& g = hot_of(o);
      if (g.mark == epoch || g.checked == check || g.rate < fixed_below || g.rate <= r) continue;
      g.checked = check;
      victims.push_back(o);
    }
  }
  // A held flow keeps its bottleneck unless, on one of V's channels, a full channel's load
  // fell or a flow on a full channel got faster (a channel that is not full is nobody's
  // bottleneck). Flows slower than the level provably keep theirs.
  for (ChannelId c : comp_channels) {
    const Chan& ch = chan(c);
    if (static_cast<std::size_t>(ch.v_count) == flows_on(c).size()) continue;
    const double full = ch.cap * (1.0 - kRel) - kAbs;
    const bool fell = ch.load >= full && ch.new_load < ch.load - (ch.cap * kRel + kAbs);
    const bool raised =
        ch.new_load >= full && stamps[static_cast<std::size_t>(c)].raised == fill_stamp;
    if (!fell && !raised) continue;
    solver.flows_visited += static_cast<std::int64_t>(flows_on(c).size());
    for (std::int32_t o : flows_on(c)) {
      Hot& g = hot_of(o);
      if (g.mark == epoch || g.checked == check || g.rate < fixed_below) continue;
      g.checked = check;
      if (!has_bottleneck(o)) victims.push_back(o);
    }
  }
  for (std::int32_t s : victims)
    add_variable(s);
  return victims.size();
}

// V: the flows on the channels `from`, except those below `fixed_below` (not fresh) and, with
// `own_bottleneck`, those whose bottleneck is another channel. Returns whether V has any.
bool MaxMinSolver::gather(const std::vector<ChannelId>& from, double fixed_below,
                          bool own_bottleneck) {
  bind();
  next_epoch();
  weighted_v = false;
  comp_channels.clear();
  comp_flows.clear();
  vnodes.clear();
  for (ChannelId c : from) {
    // A channel is named once per change on it: a thousand transfers finishing (or starting)
    // together on a NIC name it a thousand times. Its list is scanned once: a scan per name
    // made such a timestamp cost (transfers on the channel) x (changes), and a run of equal
    // transfers quadratic in the transfers per channel (issue 24).
    auto& gathered = stamps[static_cast<std::size_t>(c)].gathered;
    if (gathered == epoch) continue;
    gathered = epoch;
    solver.flows_visited += static_cast<std::int64_t>(flows_on(c).size());
    for (std::int32_t s : flows_on(c)) {
      const Hot& f = hot_of(s);
      if (f.mark == epoch || (!f.fresh && f.rate < fixed_below)) continue;
      if (own_bottleneck && f.bneck != c) continue;
      add_variable(s);
    }
  }
  return !comp_flows.empty();
}

void MaxMinSolver::solve(double fixed_below) {
  bind();
  int rounds = 0;
  bool closed = false;
  for (;;) {
    water_fill();
    if (closed) break;  // the closed component needs no test
    const std::size_t before = comp_flows.size();
    const std::size_t added = expand(fixed_below);
    if (added == 0) break;
    // A large set that more than doubles is heading for the whole component: fill that now.
    if (++rounds >= kMaxExpansions || (added > before && before >= kLargeSet)) {
      close_component(fixed_below);
      ++solver.closures;
      closed = true;
    }
  }
}

}  // namespace mfabric::net::flow
