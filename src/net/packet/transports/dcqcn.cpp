#include "net/packet/transports/dcqcn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "fabric/topology.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

namespace {
const std::vector<std::string> kDcqcnFields = {"variant",           "g",
                                               "alpha_timer",       "rate_timer",
                                               "byte_counter",      "fast_recovery_steps",
                                               "additive_increase", "hyper_increase",
                                               "cnp_interval",      "min_rate"};
}  // namespace

const char* to_string(DcqcnVariant v) {
  switch (v) {
    case DcqcnVariant::Paper:
      return "paper";
    case DcqcnVariant::Ns3Rdma:
      return "ns3-rdma";
  }
  return "?";
}

std::optional<DcqcnVariant> parse_dcqcn_variant(std::string_view name) {
  if (name == "paper") return DcqcnVariant::Paper;
  if (name == "ns3-rdma") return DcqcnVariant::Ns3Rdma;
  return std::nullopt;
}

DcqcnOptions DcqcnOptions::for_variant(DcqcnVariant v) {
  DcqcnOptions o;
  o.variant = v;
  if (v == DcqcnVariant::Ns3Rdma) {
    // github.com/bobzhuyb/ns3-rdma, windows/ns-3-dev/mix/config.txt: RP_TIMER 60, BYTE_COUNTER
    // 300000.
    o.rate_timer = Time::microseconds(60);
    o.byte_counter = Bytes(300'000);
  }
  return o;
}

SettingsBlock dcqcn_block() {
  return {"dcqcn", "DCQCN settings"};
}

void parse_dcqcn(const Fields& simulation, DcqcnOptions& q) {
  if (!simulation.has("dcqcn")) return;
  const Fields d(simulation.get("dcqcn"), simulation.source(), simulation.field("dcqcn"),
                 kDcqcnFields);
  if (d.has("variant")) {
    const std::string v = *d.optional_string("variant");
    const auto variant = parse_dcqcn_variant(v);
    if (!variant) {
      throw Error(d.source(), d.field("variant"),
                  fmt::format("'paper' or 'ns3-rdma', got '{}'", v));
    }
    // The variant's defaults first; the fields given override them.
    q = DcqcnOptions::for_variant(*variant);
  }
  q.g = d.optional_double("g").value_or(q.g);
  q.alpha_timer = d.optional_time("alpha_timer").value_or(q.alpha_timer);
  q.rate_timer = d.optional_time("rate_timer").value_or(q.rate_timer);
  q.byte_counter = d.optional_bytes("byte_counter").value_or(q.byte_counter);
  q.fast_recovery_steps = d.optional_int("fast_recovery_steps").value_or(q.fast_recovery_steps);
  q.additive_increase = d.optional_rate("additive_increase").value_or(q.additive_increase);
  q.hyper_increase = d.optional_rate("hyper_increase").value_or(q.hyper_increase);
  q.cnp_interval = d.optional_time("cnp_interval").value_or(q.cnp_interval);
  q.min_rate = d.optional_rate("min_rate").value_or(q.min_rate);
}

void check_dcqcn(const DcqcnOptions& q, const std::string& file, const std::string& prefix) {
  const auto field = [&](const char* name) { return prefix + ".dcqcn." + name; };
  if (!(q.g > 0 && q.g <= 1)) {
    throw Error(file, field("g"), fmt::format("in (0, 1], got {}", q.g));
  }
  if (q.alpha_timer.ps() <= 0) {
    throw Error(file, field("alpha_timer"), "a positive time");
  }
  if (q.rate_timer.ps() <= 0) {
    throw Error(file, field("rate_timer"), "a positive time");
  }
  if (q.byte_counter.count() < 1) {
    throw Error(file, field("byte_counter"),
                fmt::format("at least 1 byte, got {}", q.byte_counter.count()));
  }
  if (q.fast_recovery_steps < 0 || q.fast_recovery_steps > 1000) {
    throw Error(file, field("fast_recovery_steps"),
                fmt::format("0 to 1000, got {}", q.fast_recovery_steps));
  }
  if (!(q.additive_increase.bps() >= 0)) {
    throw Error(file, field("additive_increase"), "a rate, not negative");
  }
  if (!(q.hyper_increase.bps() >= 0)) {
    throw Error(file, field("hyper_increase"), "a rate, not negative");
  }
  if (q.cnp_interval.ps() < 0) {
    throw Error(file, field("cnp_interval"), "a time, not negative");
  }
  if (!(q.min_rate.bps() > 0)) {
    throw Error(file, field("min_rate"), "a positive rate");
  }
}

void check_dcqcn(const DcqcnOptions& q, const PacketBackendOptions& o,
                 const PacketLinkLimits& limits, const std::string& file,
                 const std::string& prefix) {
  const auto field = [&](const char* name) { return prefix + ".dcqcn." + name; };
  const std::string one_packet = one_packet_at_slowest_link(o, limits);
  check_packet_timer(file, field("alpha_timer"), q.alpha_timer, limits.packet_time,
                     one_packet + ": marks, and so CNPs, come at most once a packet");
  if (q.variant == DcqcnVariant::Ns3Rdma) {
    check_packet_timer(file, field("rate_timer"), q.rate_timer, limits.packet_time * 2,
                       "twice " + one_packet +
                           ": the ns3-rdma variant halves the timer in hyper increase, and pacing "
                           "changes the rate at most once a packet");
  } else {
    check_packet_timer(file, field("rate_timer"), q.rate_timer, limits.packet_time,
                       one_packet + ": pacing changes the rate at most once a packet");
  }
  // 0 is a CNP for every marked packet; a flow's packets arrive at most once a packet time, so
  // an interval between 0 and that is 0 written another way.
  if (q.cnp_interval != Time::zero()) {
    check_packet_timer(file, field("cnp_interval"), q.cnp_interval, limits.packet_time,
                       one_packet +
                           ": a flow's packets arrive at most once a packet; 0 sends a CNP for "
                           "every marked packet");
  }
  const std::int64_t wire = o.mtu.count() + o.header.count();
  if (q.byte_counter.count() < wire) {
    throw Error(file, field("byte_counter"),
                fmt::format("at least one packet on the wire, {} bytes (mtu + header): the "
                            "counter advances once a packet sent, got {}",
                            wire, q.byte_counter.count()));
  }
  const Rate fastest = limits.fastest;
  if (q.min_rate < fabric::kMinLinkRate || q.min_rate > fastest) {
    throw Error(file, field("min_rate"),
                fmt::format("between {} (the slowest rate a link may have) and the fastest "
                            "network link's {} (no flow's line rate is higher: a floor above "
                            "it would never let DCQCN cut), got {}",
                            mfabric::to_string(fabric::kMinLinkRate), mfabric::to_string(fastest),
                            mfabric::to_string(q.min_rate)));
  }
  const Rate least_step = fastest * kMinIncreaseFraction;
  for (const auto& [name, step] : {std::pair{"additive_increase", q.additive_increase},
                                   std::pair{"hyper_increase", q.hyper_increase}}) {
    if (step < least_step || step > fastest) {
      throw Error(file, field(name),
                  fmt::format("between {} (a millionth of the fastest network link's {}: "
                              "with smaller steps a cut flow needs more than a million "
                              "rate-increase steps to climb back) and {} (one step to the line "
                              "rate), got {}",
                              mfabric::to_string(least_step), mfabric::to_string(fastest),
                              mfabric::to_string(fastest), mfabric::to_string(step)));
    }
  }
}

}  // namespace mfabric::net

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
