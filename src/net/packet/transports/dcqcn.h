// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the
// rate control that RoCEv2 NICs run, shared by the RoCE and IRN transports (roce_dcqcn.h, irn.h).
//
// Reaction point (DcqcnRate, at the sender), per flow: the current rate Rc, paced per packet, a
// target rate Rt and alpha, an estimate of how congested the path is.
//   - A CNP: Rt = Rc; Rc = Rc (1 - alpha / 2); alpha = (1 - g) alpha + g. It restarts the
//     rate-increase timer, the byte counter and their counts T and BC, and alpha's decay.
//   - alpha decays, alpha = (1 - g) alpha, every alpha_timer without a CNP.
//   - Rate increase, on each expiry of the timer (every rate_timer, T += 1) or of the byte
//     counter (every byte_counter bytes sent, BC += 1):
//       fast recovery while max(T, BC) <= F:   Rc = (Rt + Rc) / 2
//       hyper increase once min(T, BC) > F:    Rt += R_HAI, then Rc = (Rt + Rc) / 2
//       additive increase otherwise:           Rt += R_AI,  then Rc = (Rt + Rc) / 2
//     so a flow that keeps sending recovers half its lost rate per step for F steps, then
//     probes linearly, and faster once both the timer and the byte counter have passed F.
//   Rates start at the flow's line rate, never exceed it and never fall below min_rate.
//   Before its first CNP a flow sends at line rate with alpha = 1 and no timers running, and
//   once it is back at line rate its increase timer stops (nothing left to recover).
//
// The variant of the authors' simulator (`DcqcnVariant::Ns3Rdma`; github.com/bobzhuyb/ns3-rdma,
// QbbNetDevice's rpr_* functions, read for its design) differs in four ways:
//   - alpha starts at 0.5, and a CNP updates alpha before it cuts with it;
//   - the flow is in one stage at a time (fast recovery, additive, hyper): in fast recovery an
//     expiry of either counter recovers while that counter is below F, then the flow moves on
//     to additive increase, or to hyper increase once both counters have reached F; in additive
//     increase only a timer expiry can move it to hyper;
//   - hyper increase grows: Rt += R_HAI x (min(T, BC) - F + 1), and in hyper increase the timer
//     runs at half its period and the byte counter at half its bytes;
//   - the target rate is not capped at the line rate (the rate is), and the byte counter starts
//     again from zero at each expiry.
// (Its rule that divides a target above 10x the rate by 8 cannot fire with the target set to
// the rate at every CNP, as its configuration does, CLAMP_TARGET_RATE 1; it is left out.)
// Its default counters differ too (DcqcnOptions::for_variant).
//
// Timers are kept as deadlines, not events: alpha's decay is computed when alpha is used (a CNP
// or a query), exactly as a periodic timer restarted at each CNP would leave it, and the
// increase steps whose deadlines have passed are applied (in order) by advance(), which every
// other call makes first. A transport therefore needs the increase deadline only while the flow
// waits for its pacing time: an increase may let it send earlier (next_deadline()).
//
// Notification point (DcqcnNotificationPoint, at the receiver): a CNP for a flow when a packet
// arrives marked CE, at most one per flow per cnp_interval.
//
// Its options (DcqcnOptions) are the `simulation.dcqcn` block, which both transports read:
// parse_dcqcn and check_dcqcn are their YAML and checks, for each of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "net/packet/transport.h"
#include "net/packet/transport_settings.h"

namespace mfabric::net {

// Which DCQCN reaction point: the paper's algorithm (its Figure 7 and section 3), or the one in
// its authors' simulator (ns3-rdma), which differs in its counters and in how fast it climbs
// back (the differences above).
enum class DcqcnVariant { Paper, Ns3Rdma };
const char* to_string(DcqcnVariant v);
std::optional<DcqcnVariant> parse_dcqcn_variant(std::string_view name);

// DCQCN rate control (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015): the reaction point at the sender, the notification point at the receiver.
// Defaults are the paper's where it gives one; each says where it comes from, and the comment
// above how it is used. `for_variant(Ns3Rdma)` takes the counters of the authors' simulator
// instead.
struct DcqcnOptions {
  DcqcnVariant variant = DcqcnVariant::Paper;
  // The defaults of a variant: the ones below for the paper; for ns3-rdma its config.txt's
  // RP_TIMER (60 us) and BYTE_COUNTER (300,000 bytes), the rest as below (its config gives the
  // same g, alpha timer, CNP interval, F, R_AI and R_HAI).
  static DcqcnOptions for_variant(DcqcnVariant v);
  // alpha's gain: 1/256 (the paper's g).
  double g = 1.0 / 256.0;
  // alpha decays, alpha = (1 - g) alpha, every 55 us without a CNP (the paper's K).
  Time alpha_timer = Time::microseconds(55);
  // Rate-increase timer: a step every 55 us (the paper's T).
  Time rate_timer = Time::microseconds(55);
  // Rate-increase byte counter: a step every 10 MB sent (the paper's B, in decimal megabytes).
  Bytes byte_counter = Bytes(10000000);
  // Fast-recovery steps before additive increase: 5 (the paper's F).
  int fast_recovery_steps = 5;
  // Additive increase of the target rate per step: 40 Mb/s (the paper's R_AI).
  Rate additive_increase = Rate::gbps(0.04);
  // Hyper increase per step: 200 Mb/s. The paper gives no value for R_HAI; 200 Mb/s is what its
  // authors' simulator runs with R_AI = 40 Mb/s (github.com/bobzhuyb/ns3-rdma,
  // windows/ns-3-dev/mix/config.txt, RATE_HAI).
  Rate hyper_increase = Rate::gbps(0.2);
  // Notification point: at most one CNP per flow per 50 us (the paper's N).
  Time cnp_interval = Time::microseconds(50);
  // The rate never falls below 100 Mb/s (the same simulator's MinRate; the paper gives none), or
  // below the line rate of a route slower than that.
  Rate min_rate = Rate::gbps(0.1);
};

// The `simulation.dcqcn` block, read by the transports that run DCQCN.
SettingsBlock dcqcn_block();
// Reads `simulation.dcqcn`, if there, into q: a variant first brings its defaults, then the
// fields given override them.
void parse_dcqcn(const Fields& simulation, DcqcnOptions& q);
// mfabric::Error(file, `prefix`.dcqcn.key, expectation) for a setting out of range; without a
// topology, then against the limits of a fabric's links (timers from limits.packet_time, the
// byte counter at least a packet, the rates at most the fastest link's).
void check_dcqcn(const DcqcnOptions& q, const std::string& file, const std::string& prefix);
void check_dcqcn(const DcqcnOptions& q, const PacketBackendOptions& o,
                 const PacketLinkLimits& limits, const std::string& file,
                 const std::string& prefix);

}  // namespace mfabric::net

namespace mfabric::net::packet {

class DcqcnRate {
 public:
  explicit DcqcnRate(const DcqcnOptions& options);

  // A new flow in slot f (its state is reset) at `line_rate`. A line rate of 0 (no link of the
  // route is up) leaves the flow unpaced: it has no rate to start from.
  void open(FlowSlot f, Rate line_rate);
  // Applies the rate-increase timer expiries due at or before `now`.
  void advance(FlowSlot f, Time now);
  // The flow started a packet of `wire` bytes at `now` (counts towards the byte counter).
  void on_sent(FlowSlot f, Bytes wire, Time now);
  // A CNP arrived for the flow at `now`.
  void on_cnp(FlowSlot f, Time now);

  // The earliest time the flow may start its next packet: the previous one's start plus its
  // wire bytes at the current rate Rc (Time::zero() before the first packet). Rounded down to
  // the picosecond, so a flow at line rate never waits on its own port's serialisation (which
  // the backend rounds up).
  Time next_send(FlowSlot f) const;
  // The next rate-increase timer expiry, Time::max() when none is pending.
  Time next_deadline(FlowSlot f) const;

  Rate rate(FlowSlot f) const { return Rate::bits_per_second(flow(f).rc); }
  Rate target_rate(FlowSlot f) const { return Rate::bits_per_second(flow(f).rt); }
  Rate line_rate(FlowSlot f) const { return Rate::bits_per_second(flow(f).line); }
  // alpha at `now` (with the decay due by then).
  double alpha(FlowSlot f, Time now) const;

 private:
  struct Flow {
    double line = 0;   // bits/s
    double floor = 0;  // min_rate, or the line rate when that is lower
    double rc = 0;
    double rt = 0;
    double alpha = 1.0;  // as of alpha_since
    Time alpha_since;
    bool decaying = false;  // a CNP has arrived: alpha decays from alpha_since
    Time last_start;
    std::int64_t last_wire = 0;  // bytes of the previous packet; 0 before the first
    bool increasing = false;     // a CNP cut the rate and it has not recovered to line rate
    Time increase_at = Time::max();
    std::int64_t bytes_counted = 0;  // sent since the byte counter last expired
    int timer_steps = 0;             // T
    int byte_steps = 0;              // BC
    // ns3-rdma only: the stage, and the period of the increase timer and the bytes of the byte
    // counter (both halve in hyper increase).
    enum class Stage : std::uint8_t { FastRecovery, Additive, Hyper } stage = Stage::FastRecovery;
    Time timer_period;
    std::int64_t byte_period = 0;
  };
  const Flow& flow(FlowSlot f) const { return flows_[static_cast<std::size_t>(f)]; }
  Flow& flow(FlowSlot f) { return flows_[static_cast<std::size_t>(f)]; }
  void increase(Flow& s) const;
  // ns3-rdma: an expiry of the timer (`timer`) or of the byte counter.
  void ns3_expiry(Flow& s, bool timer) const;
  void ns3_adjust(Flow& s, double raise) const;
  void stop_if_recovered(Flow& s) const;
  double alpha_at(const Flow& s, Time now) const;

  DcqcnOptions o_;
  std::vector<Flow> flows_;
};

class DcqcnNotificationPoint {
 public:
  explicit DcqcnNotificationPoint(Time cnp_interval) : interval_(cnp_interval) {}

  void open(FlowSlot f);
  // A data packet of flow f arrived at `now`, marked CE or not: whether to send a CNP.
  bool on_arrival(FlowSlot f, bool ce, Time now);

 private:
  struct Flow {
    bool sent = false;
    Time last;
  };
  Time interval_;
  std::vector<Flow> flows_;
};

}  // namespace mfabric::net::packet
