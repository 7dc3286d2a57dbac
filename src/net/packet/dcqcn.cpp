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
  if (s.rt >= s.line && s.line - s.rc <= s.line * kRecoveredFraction) {
    s.rc = s.line;
    s.increasing = false;
    s.increase_at = Time::max();
  }
}

void DcqcnRate::advance(FlowSlot f, Time now) {
  Flow& s = flow(f);
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
  s.rc = std::max(s.floor, s.rc * (1.0 - a / 2.0));
  s.alpha = (1.0 - o_.g) * a + o_.g;
  s.alpha_since = now;
  s.decaying = true;
  s.timer_steps = 0;
  s.byte_steps = 0;
  s.bytes_counted = 0;
  s.increasing = true;
  s.increase_at = now + o_.rate_timer;
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
