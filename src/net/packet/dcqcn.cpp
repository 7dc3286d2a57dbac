#include "net/packet/dcqcn.h"

#include <algorithm>
#include <cmath>

namespace mfabric::net::packet {

namespace {
// Fast recovery halves the gap to the target rate per step, which in floating point reaches the
// line rate only after many steps (or never, by rounding); within this fraction of it the flow
// counts as recovered, so that its increase timer stops.
constexpr double kRecoveredFraction = 1e-9;
}  // namespace

DcqcnRate::DcqcnRate(const DcqcnOptions& options) : o_(options) {}

void DcqcnRate::open(FlowSlot f, Rate line_rate) {
  const auto i = static_cast<std::size_t>(f);
  if (i >= flows_.size()) flows_.resize(i + 1);
  Flow& s = flows_[i];
  s = Flow{};
  s.line = std::max(0.0, line_rate.bps());
  s.floor = std::min(o_.min_rate.bps(), s.line);
  s.rc = s.line;
  s.rt = s.line;
  if (o_.variant == DcqcnVariant::Ns3Rdma) s.alpha = 0.5;
}

double DcqcnRate::alpha_at(const Flow& s, Time now) const {
  if (!s.decaying || now <= s.alpha_since) return s.alpha;
  const std::int64_t periods = (now - s.alpha_since).ps() / o_.alpha_timer.ps();
  return s.alpha * std::pow(1.0 - o_.g, static_cast<double>(periods));
}

double DcqcnRate::alpha(FlowSlot f, Time now) const {
  return alpha_at(flow(f), now);
}

void DcqcnRate::increase(Flow& s) const {
  const int most = std::max(s.timer_steps, s.byte_steps);
  const int least = std::min(s.timer_steps, s.byte_steps);
  if (most > o_.fast_recovery_steps) {
    s.rt += least > o_.fast_recovery_steps ? o_.hyper_increase.bps() : o_.additive_increase.bps();
    s.rt = std::min(s.rt, s.line);
  }
  s.rc = std::min((s.rt + s.rc) / 2.0, s.line);
  if (s.rt >= s.line) stop_if_recovered(s);
}

void DcqcnRate::stop_if_recovered(Flow& s) const {
  if (s.line - s.rc > s.line * kRecoveredFraction) return;
  s.rc = s.line;
  s.increasing = false;
  s.increase_at = Time::max();
}

void DcqcnRate::ns3_adjust(Flow& s, double raise) const {
  s.rt += raise;
  s.rc = std::min((s.rt + s.rc) / 2.0, s.line);
  // Once the rate is at the line rate the target is at or above it, and every later step
  // leaves the rate there: the timer can stop.
  stop_if_recovered(s);
}

void DcqcnRate::ns3_expiry(Flow& s, bool timer) const {
  using Stage = Flow::Stage;
  const int f = o_.fast_recovery_steps;
  const Stage was = s.stage;
  int& mine = timer ? s.timer_steps : s.byte_steps;
  ++mine;
  const auto additive = [&] {
    ns3_adjust(s, o_.additive_increase.bps());
    s.stage = Stage::Additive;
  };
  const auto hyper = [&] {
    const int times = std::min(s.byte_steps, s.timer_steps) - f + 1;
    ns3_adjust(s, o_.hyper_increase.bps() * static_cast<double>(times));
    s.stage = Stage::Hyper;
  };
  const auto select = [&] {
    if (s.byte_steps < f || s.timer_steps < f) {
      additive();
    } else {
      hyper();
    }
  };
  switch (was) {
    case Stage::FastRecovery:
      if (mine < f) {
        ns3_adjust(s, 0.0);
      } else {
        select();
      }
      break;
    case Stage::Additive:
      if (timer) {
        select();
      } else {
        additive();
      }
      break;
    case Stage::Hyper:
      hyper();
      break;
  }
  // The next period is set by the stage the expiry was handled in.
  if (timer) {
    s.timer_period =
        was == Stage::Hyper ? Time::picoseconds(o_.rate_timer.ps() / 2) : o_.rate_timer;
  } else {
    s.byte_period = was == Stage::Hyper ? o_.byte_counter.count() / 2 : o_.byte_counter.count();
  }
}

void DcqcnRate::advance(FlowSlot f, Time now) {
  Flow& s = flow(f);
  if (o_.variant == DcqcnVariant::Ns3Rdma) {
    while (s.increasing && s.increase_at <= now) {
      const Time at = s.increase_at;
      ns3_expiry(s, true);
      if (s.increasing) s.increase_at = at + s.timer_period;
    }
    return;
  }
  while (s.increasing && s.increase_at <= now) {
    s.increase_at += o_.rate_timer;
    ++s.timer_steps;
    increase(s);
  }
}

void DcqcnRate::on_sent(FlowSlot f, Bytes wire, Time now) {
  advance(f, now);
  Flow& s = flow(f);
  s.last_start = now;
  s.last_wire = wire.count();
  if (!s.increasing) return;
  s.bytes_counted += wire.count();
  if (o_.variant == DcqcnVariant::Ns3Rdma) {
    // One expiry per packet at most, and the count starts again from zero.
    if (s.bytes_counted >= s.byte_period) {
      s.bytes_counted = 0;
      ns3_expiry(s, false);
    }
    return;
  }
  while (s.increasing && s.bytes_counted >= o_.byte_counter.count()) {
    s.bytes_counted -= o_.byte_counter.count();
    ++s.byte_steps;
    increase(s);
  }
}

void DcqcnRate::on_cnp(FlowSlot f, Time now) {
  Flow& s = flow(f);
  if (s.line <= 0) return;
  advance(f, now);
  const double a = alpha_at(s, now);
  s.rt = s.rc;
  s.alpha = (1.0 - o_.g) * a + o_.g;
  // The paper cuts with alpha as it was; ns3-rdma with alpha after this CNP's update.
  const double cut_with = o_.variant == DcqcnVariant::Ns3Rdma ? s.alpha : a;
  s.rc = std::max(s.floor, s.rc * (1.0 - cut_with / 2.0));
  s.alpha_since = now;
  s.decaying = true;
  s.timer_steps = 0;
  s.byte_steps = 0;
  s.bytes_counted = 0;
  s.increasing = true;
  s.increase_at = now + o_.rate_timer;
  s.stage = Flow::Stage::FastRecovery;
  s.timer_period = o_.rate_timer;
  s.byte_period = o_.byte_counter.count();
}

Time DcqcnRate::next_send(FlowSlot f) const {
  const Flow& s = flow(f);
  if (s.last_wire == 0 || s.rc <= 0) return Time::zero();
  const double gap_ps = static_cast<double>(s.last_wire) * 8e12 / s.rc;
  return s.last_start + Time::picoseconds(static_cast<std::int64_t>(std::floor(gap_ps)));
}

Time DcqcnRate::next_deadline(FlowSlot f) const {
  return flow(f).increase_at;
}

void DcqcnNotificationPoint::open(FlowSlot f) {
  const auto i = static_cast<std::size_t>(f);
  if (i >= flows_.size()) flows_.resize(i + 1);
  flows_[i] = Flow{};
}

bool DcqcnNotificationPoint::on_arrival(FlowSlot f, bool ce, Time now) {
  if (!ce) return false;
  Flow& s = flows_[static_cast<std::size_t>(f)];
  if (s.sent && now - s.last < interval_) return false;
  s.sent = true;
  s.last = now;
  return true;
}

}  // namespace mfabric::net::packet
