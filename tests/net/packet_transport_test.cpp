// The RDMA transports of the packet backend on their own: DCQCN's rate control (dcqcn.h),
// RoCEv2 go-back-N (roce_dcqcn.h) and IRN (irn.h), driven by a fake host, and for whole transfers
// by a one-flow network in this file (one port at the line rate, a fixed latency each way, losses
// and CE marks chosen per packet). Expected values are worked out by hand next to each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <vector>

#include "net/packet/transports/dcqcn.h"
#include "net/packet/transports/dctcp.h"
#include "net/packet/transports/irn.h"
#include "net/packet/transports/roce_dcqcn.h"

namespace mfabric::net::packet {
namespace transport_test {

constexpr Bytes kMtu(4096);
constexpr Bytes kHeader(64);
constexpr Bytes kWire(4160);
// A 4160-byte packet at 100 Gb/s: 4160 x 8 / 100e9 s = 332.8 ns.
constexpr Time kWireTime100G = Time::picoseconds(332800);
const Rate k100G = Rate::gbps(100);

constexpr double kGbps = 1e9;

// Records what a transport asks of its host; the test sets the time.
class FakeHost final : public TransportHost {
 public:
  Time now() const override { return time; }
  void wake(FlowSlot f) override { wakes.push_back(f); }
  void set_timer(FlowSlot f, Time at) override { timers[f] = at; }
  Time timer(FlowSlot f) const {
    const auto it = timers.find(f);
    return it == timers.end() ? Time::max() : it->second;
  }

  Time time;
  std::vector<FlowSlot> wakes;
  std::map<FlowSlot, Time> timers;
};

// ---------------------------------------------------------------------------------------------
// A one-flow network: the sender's port serialises each packet of kWire bytes at `rate` (as the
// backend does, rounded up to a picosecond); a packet arrives `latency` after its last bit, and
// an answer reaches the sender `latency` after the receiver sends it. As in the backend, wake()
// starts a packet at once when the port is free, and a flow stays in the port's round robin
// while can_send() says so.
struct Path {
  Rate rate = k100G;
  Time latency = Time::microseconds(2);
  // Whether the network loses this packet; `sent_before` is how often this packet was sent.
  std::function<bool(std::int32_t seq, int sent_before)> drop;
  std::function<bool(std::int32_t seq)> ce;
};

struct Send {
  Time at;
  std::int32_t seq = 0;
};

struct Answer {
  Time at;  // when it reached the sender
  Ack ack;
};

struct Trace {
  std::vector<Send> sends;
  std::vector<Answer> answers;
  std::vector<int> arrivals;  // per packet, how often it reached the receiver
  Time complete = Time::max();
  std::int32_t max_in_flight = 0;  // one past the highest packet sent, less the cumulative ack
  std::int64_t dropped = 0;

  std::vector<std::int32_t> seqs() const {
    std::vector<std::int32_t> out;
    for (const Send& s : sends)
      out.push_back(s.seq);
    return out;
  }
};

class OneFlowNetwork final : public TransportHost {
 public:
  explicit OneFlowNetwork(Path path) : path_(std::move(path)) {}

  Time now() const override { return now_; }
  void wake(FlowSlot /*f*/) override {
    if (!live_) return;
    ready_ = true;
    if (!port_busy_) pull();
  }
  void set_timer(FlowSlot /*f*/, Time at) override { timer_ = at; }

  // Runs a flow of `packets` packets (opened with `rtt`) to completion or `limit`.
  Trace run(Transport& t, std::int32_t packets, Time rtt, Time limit = Time::milliseconds(100)) {
    transport_ = &t;
    trace_ = Trace{};
    trace_.arrivals.assign(static_cast<std::size_t>(packets), 0);
    sent_.assign(static_cast<std::size_t>(packets), 0);
    live_ = true;
    t.open(0, packets, rtt, path_.rate);
    wake(0);
    while (live_) {
      const Time next_event = events_.empty() ? Time::max() : events_.top().at;
      const Time at = std::min(next_event, timer_);
      if (at == Time::max() || at > limit) break;
      now_ = at;
      if (next_event <= timer_) {
        const Event e = events_.top();
        events_.pop();
        process(e);
      } else {
        timer_ = Time::max();
        transport_->on_timer(0);
      }
    }
    return trace_;
  }

 private:
  enum class Kind { PortFree, Deliver, Answer };
  struct Event {
    Time at;
    std::uint64_t order = 0;
    Kind kind = Kind::PortFree;
    std::int32_t seq = 0;
    Ack ack;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at > b.at || (a.at == b.at && a.order > b.order);
    }
  };
  void push(Time at, Kind kind, std::int32_t seq = 0, Ack ack = {}) {
    events_.push(Event{at, order_++, kind, seq, ack});
  }

  void pull() {
    const std::int32_t seq = transport_->next_packet(0);
    if (seq < 0) {
      ready_ = false;
      return;
    }
    trace_.sends.push_back(Send{now_, seq});
    highest_ = std::max(highest_, seq + 1);
    trace_.max_in_flight = std::max(trace_.max_in_flight, highest_ - cumulative_);
    const int sent_before = sent_[static_cast<std::size_t>(seq)]++;
    const Time serialisation = transmission_time(kWire, path_.rate);
    port_busy_ = true;
    push(now_ + serialisation, Kind::PortFree);
    if (path_.drop && path_.drop(seq, sent_before)) {
      ++trace_.dropped;
    } else {
      push(now_ + serialisation + path_.latency, Kind::Deliver, seq);
    }
    ready_ = transport_->can_send(0);
  }

  void process(const Event& e) {
    switch (e.kind) {
      case Kind::PortFree:
        port_busy_ = false;
        if (ready_) pull();
        break;
      case Kind::Deliver: {
        ++trace_.arrivals[static_cast<std::size_t>(e.seq)];
        Ack ack;
        bool complete = false;
        const bool ce = path_.ce && path_.ce(e.seq);
        const bool answer = transport_->on_data(0, e.seq, ce, ack, complete);
        if (complete) {
          trace_.complete = now_;
          live_ = false;
          transport_->close(0);
          return;
        }
        if (answer) push(now_ + path_.latency, Kind::Answer, e.seq, ack);
        break;
      }
      case Kind::Answer:
        trace_.answers.push_back(Answer{now_, e.ack});
        cumulative_ = std::max(cumulative_, e.ack.cumulative);
        transport_->on_ack(0, e.ack);
        break;
    }
  }

  Path path_;
  Transport* transport_ = nullptr;
  Trace trace_;
  std::vector<int> sent_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t order_ = 0;
  Time now_;
  Time timer_ = Time::max();
  bool live_ = false;
  bool ready_ = false;
  bool port_busy_ = false;
  std::int32_t highest_ = 0;
  std::int32_t cumulative_ = 0;
};

// The unloaded round trip of a Path: one packet's serialisation and the latency both ways.
Time round_trip(const Path& p) {
  return transmission_time(kWire, p.rate) + p.latency * 2;
}

// ---------------------------------------------------------------------------------------------
// DCQCN reaction point

TEST(DcqcnRate, CnpCutsThenFastRecoveryThenAdditiveThenHyperIncrease) {
  DcqcnOptions o;
  o.byte_counter = Bytes(100000);  // one on_sent of this many bytes is one byte-counter step
  DcqcnRate r(o);
  r.open(0, k100G);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 100 * kGbps);
  EXPECT_EQ(r.next_deadline(0), Time::max());  // nothing to recover: no timer

  // alpha starts at 1: a CNP halves the rate and sets the target to the old rate. alpha stays
  // 1 ((1 - g) 1 + g). A second CNP halves again: Rt = 50, Rc = 25.
  r.on_cnp(0, Time::zero());
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), 100 * kGbps);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 50 * kGbps);
  EXPECT_DOUBLE_EQ(r.alpha(0, Time::zero()), 1.0);
  r.on_cnp(0, Time::zero());
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), 50 * kGbps);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 25 * kGbps);
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(55));

  // Fast recovery, F = 5 byte-counter steps: Rc halves its distance to Rt = 50 each time.
  for (double expected : {37.5, 43.75, 46.875, 48.4375, 49.21875}) {
    r.on_sent(0, o.byte_counter, Time::zero());
    EXPECT_DOUBLE_EQ(r.rate(0).bps(), expected * kGbps);
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), 50 * kGbps);
  }
  // Sixth byte-counter step (BC = 6 > F, T = 0): additive increase, Rt += 40 Mb/s.
  double rt = 50.04 * kGbps;
  double rc = (rt + 49.21875 * kGbps) / 2;
  r.on_sent(0, o.byte_counter, Time::zero());
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc);

  // Timer steps at 55, 110, ... 275 us (T = 1..5): min(T, BC) <= F, still additive.
  for (int step = 1; step <= 5; ++step) {
    r.advance(0, Time::microseconds(55 * step) - Time::picoseconds(1));
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt) << "no step before the deadline";
    r.advance(0, Time::microseconds(55 * step));
    rt += 0.04 * kGbps;
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt) << "timer step " << step;
    EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc) << "timer step " << step;
  }
  // T = 6 at 330 us: both counters past F, hyper increase, Rt += 200 Mb/s.
  r.advance(0, Time::microseconds(330));
  rt += 0.2 * kGbps;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc);
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(385));
}

TEST(DcqcnRate, Ns3RdmaVariantMovesThroughStagesWithAGrowingHyperIncrease) {
  // The reaction point of the DCQCN authors' simulator (dcqcn.h): its counters, alpha from 0.5
  // updated before the cut, one stage at a time, R_HAI x (min(T, BC) - F + 1) in hyper
  // increase with the timer at half its period and the byte counter at half its bytes.
  DcqcnOptions o = DcqcnOptions::for_variant(DcqcnVariant::Ns3Rdma);
  EXPECT_EQ(o.rate_timer, Time::microseconds(60));
  EXPECT_EQ(o.byte_counter, Bytes(300000));
  o.byte_counter = Bytes(100000);  // one on_sent of this many bytes is one byte-counter expiry
  DcqcnRate r(o);
  r.open(0, k100G);
  EXPECT_DOUBLE_EQ(r.alpha(0, Time::zero()), 0.5);
  const double g = o.g;
  const double ai = 0.04 * kGbps;
  const double hai = 0.2 * kGbps;

  // Two CNPs: each updates alpha, then cuts by the new alpha / 2; the target is the old rate.
  double alpha = 0.5;
  double rt = 0;
  double rc = 100 * kGbps;
  for (int cnp = 0; cnp < 2; ++cnp) {
    r.on_cnp(0, Time::zero());
    alpha = (1 - g) * alpha + g;
    rt = rc;
    rc *= 1 - alpha / 2;
    EXPECT_DOUBLE_EQ(r.alpha(0, Time::zero()), alpha);
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
    EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc);
  }
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(60));

  // Fast recovery while the expiring counter is below F = 5: byte-counter expiries 1 to 4.
  for (int bc = 1; bc <= 4; ++bc) {
    r.on_sent(0, o.byte_counter, Time::zero());
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc) << "BC " << bc;
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt) << "BC " << bc;
  }
  // BC = 5 reaches F, T = 0 has not: additive increase; BC = 6, in additive increase: additive.
  for (int bc = 5; bc <= 6; ++bc) {
    r.on_sent(0, o.byte_counter, Time::zero());
    rt += ai;
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt) << "BC " << bc;
    EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc) << "BC " << bc;
  }
  // Timer expiries at 60 to 240 us (T = 1 to 4): additive.
  for (int t = 1; t <= 4; ++t) {
    r.advance(0, Time::microseconds(60 * t));
    rt += ai;
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt) << "T " << t;
  }
  // T = 5 at 300 us: both counters have reached F, hyper increase by R_HAI x (5 - 5 + 1). The
  // expiry was handled in additive increase, so the timer keeps its full period: next at 360.
  r.advance(0, Time::microseconds(300));
  rt += hai;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc);
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(360));
  // T = 6 at 360 us, in hyper increase: 2 x R_HAI (min(6, 6) - 4), and half periods from now.
  r.advance(0, Time::microseconds(360));
  rt += 2 * hai;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(390));
  // A byte-counter expiry in hyper increase (BC = 7): 2 x R_HAI; the counter is now 50,000
  // bytes, so 49,999 bytes are not an expiry and one more byte is (BC = 8: min(8, 6) - 4 = 2).
  r.on_sent(0, o.byte_counter, Time::microseconds(360));
  rt += 2 * hai;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  r.on_sent(0, Bytes(49999), Time::microseconds(360));
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  r.on_sent(0, Bytes(1), Time::microseconds(360));
  rt += 2 * hai;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), rc);
  // T = 7 at 390 us: 3 x R_HAI (min(8, 7) - 4).
  r.advance(0, Time::microseconds(390));
  rt += 3 * hai;
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), rt);
  // A CNP starts fast recovery again with the full timer period.
  r.on_cnp(0, Time::microseconds(400));
  EXPECT_EQ(r.next_deadline(0), Time::microseconds(460));
}

TEST(DcqcnRate, Ns3RdmaVariantStopsAtTheLineRateWithATargetAboveIt) {
  // The target is not capped at the line rate in this variant; the rate is, and once the rate
  // is there the increase timer stops.
  DcqcnOptions o = DcqcnOptions::for_variant(DcqcnVariant::Ns3Rdma);
  DcqcnRate r(o);
  r.open(0, k100G);
  r.on_cnp(0, Time::zero());
  Time t = Time::zero();
  while (r.next_deadline(0) != Time::max() && t < Time::milliseconds(100)) {
    t = r.next_deadline(0);
    r.advance(0, t);
  }
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 100 * kGbps);
  EXPECT_GE(r.target_rate(0).bps(), 100 * kGbps);
  EXPECT_EQ(r.next_deadline(0), Time::max());
  EXPECT_LT(t, Time::milliseconds(100));
}

TEST(DcqcnRate, AlphaDecaysByOneMinusGPerTimerWithoutCnps) {
  DcqcnOptions o;
  o.g = 1.0 / 16.0;  // a large gain, to see the decay
  DcqcnRate r(o);
  r.open(0, k100G);
  r.on_cnp(0, Time::zero());  // alpha = (1 - g) 1 + g = 1
  EXPECT_DOUBLE_EQ(r.alpha(0, Time::microseconds(54)), 1.0);
  EXPECT_DOUBLE_EQ(r.alpha(0, Time::microseconds(55)), 15.0 / 16.0);
  EXPECT_DOUBLE_EQ(r.alpha(0, Time::microseconds(110)), 225.0 / 256.0);
  // A CNP at 165 us cuts by alpha / 2 with alpha = (15/16)^3, then alpha = (1 - g) alpha + g.
  const Time t = Time::microseconds(165);
  r.advance(0, t);
  const double before = r.rate(0).bps();
  const double a = std::pow(15.0 / 16.0, 3);
  r.on_cnp(0, t);
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), before * (1 - a / 2));
  EXPECT_DOUBLE_EQ(r.target_rate(0).bps(), before);
  EXPECT_DOUBLE_EQ(r.alpha(0, t), 15.0 / 16.0 * a + 1.0 / 16.0);
  // The decay restarts at the CNP.
  EXPECT_DOUBLE_EQ(r.alpha(0, t + Time::microseconds(54)), 15.0 / 16.0 * a + 1.0 / 16.0);
  EXPECT_DOUBLE_EQ(r.alpha(0, t + Time::microseconds(55)),
                   15.0 / 16.0 * (15.0 / 16.0 * a + 1.0 / 16.0));
}

TEST(DcqcnRate, RateStaysBetweenMinRateAndLineRate) {
  DcqcnOptions o;
  DcqcnRate r(o);
  r.open(0, k100G);
  // CNPs every 10 us: halving (alpha stays near 1) reaches the 100 Mb/s floor in 10 cuts.
  for (int k = 0; k < 40; ++k) {
    r.on_cnp(0, Time::microseconds(10 * k));
    EXPECT_GE(r.rate(0).bps(), 0.1 * kGbps);
  }
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 0.1 * kGbps);
  // Then no CNPs, sending all the while (hyper increase once both counters pass F): the rate
  // climbs back to the line rate and stops there, and so does its timer.
  Time t = Time::microseconds(400);
  for (int k = 0; k < 400000 && r.next_deadline(0) != Time::max(); ++k) {
    t += Time::microseconds(10);
    r.on_sent(0, Bytes(1000000), t);
    EXPECT_LE(r.rate(0).bps(), 100 * kGbps);
    EXPECT_LE(r.target_rate(0).bps(), 100 * kGbps);
  }
  EXPECT_DOUBLE_EQ(r.rate(0).bps(), 100 * kGbps);
  EXPECT_EQ(r.next_deadline(0), Time::max());

  // A line slower than min_rate is its own floor.
  r.open(1, Rate::gbps(0.05));
  r.on_cnp(1, Time::zero());
  EXPECT_DOUBLE_EQ(r.rate(1).bps(), 0.05 * kGbps);
}

TEST(DcqcnRate, PacesEachPacketByItsWireBytesAtTheCurrentRate) {
  DcqcnRate r(DcqcnOptions{});
  r.open(0, k100G);
  EXPECT_EQ(r.next_send(0), Time::zero());
  const Time t = Time::microseconds(1);
  r.on_sent(0, kWire, t);
  EXPECT_EQ(r.next_send(0), t + kWireTime100G);
  // A CNP halves the rate: the same packet now holds the flow twice as long.
  r.on_cnp(0, t);
  EXPECT_EQ(r.next_send(0), t + Time::picoseconds(665600));
}

TEST(DcqcnRate, TwoFlowsSharingALinkConverge) {
  // A fluid model of one 100G bottleneck, in 5 us slots: each flow sends its rate's worth of
  // bytes into a queue drained at 100G; the queue marks packets with RED probability (the
  // paper's fluid model: 0 below Kmin = 5 KB, rising to Pmax = 1% at Kmax = 200 KB, 1 above);
  // a flow whose packets in the slot carry a mark gets a CNP if its notification point allows
  // (one per 50 us). Flow 0 starts at line rate, flow 1 cut to 6.25G (four CNPs).
  //
  // Marks per packet are what makes DCQCN fair: the faster flow is more likely to be marked in
  // each CNP interval. Giving both flows a CNP whenever the link is overloaded keeps their
  // ratio through every cut (both rates scale by the same factor) and closes the gap only when
  // a cut lands during fast recovery: with the paper's parameters that model still had them at
  // 78 and 20 Gb/s after 200 ms and 55 and 43 after 1 s.
  DcqcnOptions o;
  DcqcnRate r(o);
  DcqcnNotificationPoint np(o.cnp_interval);
  for (FlowSlot f : {0, 1}) {
    r.open(f, k100G);
    np.open(f);
  }
  for (int k = 0; k < 4; ++k)
    r.on_cnp(1, Time::zero());
  EXPECT_DOUBLE_EQ(r.rate(1).bps(), 6.25 * kGbps);

  const double capacity = 100 * kGbps;
  const double k_min = 5e3;
  const double k_max = 200e3;
  const double p_max = 0.01;
  // Marks are drawn from a fixed-seed linear congruential generator (Knuth's MMIX constants),
  // so the run is the same every time.
  std::uint64_t state = 1;
  const auto uniform = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  const Time slot = Time::microseconds(5);
  const int slots = 60000;     // 300 ms
  const int averaged = 20000;  // the last 100 ms
  double queue = 0;
  double sum[2] = {0, 0};
  Time t;
  for (int k = 0; k < slots; ++k) {
    t += slot;
    double rates[2];
    for (FlowSlot f : {0, 1}) {
      r.advance(f, t);
      rates[f] = r.rate(f).bps();
      r.on_sent(f, Bytes(static_cast<std::int64_t>(rates[f] * slot.seconds() / 8)), t);
    }
    queue = std::max(0.0, queue + (rates[0] + rates[1] - capacity) * slot.seconds() / 8);
    const double p = queue <= k_min   ? 0.0
                     : queue >= k_max ? 1.0
                                      : p_max * (queue - k_min) / (k_max - k_min);
    for (FlowSlot f : {0, 1}) {
      const double packets = rates[f] * slot.seconds() / kWire.bits();
      const double marked = 1 - std::pow(1 - p, packets);
      if (uniform() < marked && np.on_arrival(f, true, t)) r.on_cnp(f, t);
    }
    if (k >= slots - averaged) {
      sum[0] += rates[0];
      sum[1] += rates[1];
    }
  }
  const double mean0 = sum[0] / averaged;
  const double mean1 = sum[1] / averaged;
  EXPECT_NEAR(mean0 / mean1, 1.0, 0.2) << mean0 / kGbps << " vs " << mean1 / kGbps << " Gb/s";
  EXPECT_NEAR(mean0, capacity / 2, capacity * 0.1);
  EXPECT_NEAR(mean1, capacity / 2, capacity * 0.1);
  EXPECT_GT(mean0 + mean1, capacity * 0.9);  // and together they keep the link busy
}

TEST(DcqcnNotificationPoint, AtMostOneCnpPerFlowPerInterval) {
  DcqcnNotificationPoint np(Time::microseconds(50));
  np.open(0);
  np.open(1);
  EXPECT_FALSE(np.on_arrival(0, false, Time::zero()));  // unmarked: no CNP
  EXPECT_TRUE(np.on_arrival(0, true, Time::zero()));
  EXPECT_FALSE(np.on_arrival(0, true, Time::microseconds(10)));
  EXPECT_TRUE(np.on_arrival(1, true, Time::microseconds(10)));  // per flow
  EXPECT_FALSE(np.on_arrival(0, true, Time::microseconds(50) - Time::picoseconds(1)));
  EXPECT_TRUE(np.on_arrival(0, true, Time::microseconds(50)));
  EXPECT_FALSE(np.on_arrival(0, false, Time::microseconds(200)));
  EXPECT_TRUE(np.on_arrival(0, true, Time::microseconds(201)));
}

// ---------------------------------------------------------------------------------------------
// RoCE

TEST(Roce, InOrderDeliveryCompletesAtLineRate) {
  Path path;
  OneFlowNetwork net(path);
  Roce roce(net, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  EXPECT_STREQ(roce.name(), "roce-dcqcn");
  const Trace trace = net.run(roce, 50, round_trip(path));
  std::vector<std::int32_t> in_order(50);
  for (std::int32_t k = 0; k < 50; ++k)
    in_order[static_cast<std::size_t>(k)] = k;
  EXPECT_EQ(trace.seqs(), in_order);
  EXPECT_EQ(roce.retransmissions(), 0);
  // Back to back at line rate: the last packet's last bit leaves at 50 x 332.8 ns and arrives
  // 2 us later.
  EXPECT_EQ(trace.complete, kWireTime100G * 50 + Time::microseconds(2));
  for (const Answer& a : trace.answers) {
    EXPECT_FALSE(a.ack.nack);
    EXPECT_EQ(a.ack.cumulative, a.ack.seq + 1);
  }
}

TEST(Roce, LostPacketIsNackedAndTheSenderGoesBackToIt) {
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq == 10 && sent_before == 0; };
  OneFlowNetwork net(path);
  Roce roce(net, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(roce, 100, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  // Packet 11 is the first out of order: its last bit arrives at 12 x 332.8 ns + 2 us, the NACK
  // (cumulative 10) 2 us later, at 7.9936 us. Packets 0..24 had started by then (24 x 332.8 ns
  // = 7.9872 us); when packet 24 is done, the sender goes back to 10 and sends 10..24 again
  // before 25..99: 15 retransmissions.
  int nacks = 0;
  for (const Answer& a : trace.answers) {
    if (!a.ack.nack) continue;
    ++nacks;
    EXPECT_EQ(a.ack.cumulative, 10);
    EXPECT_EQ(a.ack.seq, 11);
    EXPECT_EQ(a.at, kWireTime100G * 12 + Time::microseconds(4));
  }
  EXPECT_EQ(nacks, 1);
  std::vector<std::int32_t> expected;
  for (std::int32_t k = 0; k <= 24; ++k)
    expected.push_back(k);
  for (std::int32_t k = 10; k < 100; ++k)
    expected.push_back(k);
  EXPECT_EQ(trace.seqs(), expected);
  EXPECT_EQ(roce.retransmissions(), 15);
  EXPECT_EQ(trace.sends[25].at, kWireTime100G * 25);
  EXPECT_EQ(roce.timeouts(), 0);
}

TEST(Roce, TimeoutGoesBackToTheFirstUnacknowledgedPacket) {
  // The last three packets are lost: no later packet arrives to be NACKed, so only the timeout
  // finds them, 1 ms after the last progress (the ACK of packet 16, at 17 x 332.8 ns + 4 us).
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq >= 17 && sent_before == 0; };
  OneFlowNetwork net(path);
  RoceOptions o;
  Roce roce(net, o, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(roce, 20, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(roce.timeouts(), 1);
  EXPECT_EQ(roce.retransmissions(), 3);
  ASSERT_EQ(trace.sends.size(), 23U);
  const Time resend = kWireTime100G * 17 + Time::microseconds(4) + o.rto;
  EXPECT_EQ(trace.sends[20].seq, 17);
  EXPECT_EQ(trace.sends[20].at, resend);
  EXPECT_EQ(trace.sends[21].seq, 18);
  EXPECT_EQ(trace.sends[22].seq, 19);
  EXPECT_EQ(trace.complete, resend + kWireTime100G * 3 + Time::microseconds(2));
}

TEST(Roce, PacingSpacesPacketsByWireBytesOverTheRate) {
  FakeHost host;
  Roce roce(host, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  roce.open(3, 10, Time::microseconds(10), k100G);
  // A CNP before the first packet halves the rate: 4160 bytes at 50G take 665.6 ns.
  Ack cnp;
  cnp.cnp = true;
  roce.on_ack(3, cnp);
  EXPECT_DOUBLE_EQ(roce.rate_control().rate(3).bps(), 50 * kGbps);
  const Time gap = Time::picoseconds(665600);
  EXPECT_EQ(roce.next_packet(3), 0);
  EXPECT_TRUE(roce.can_send(3));  // pacing aside
  EXPECT_EQ(roce.next_packet(3), -1);
  EXPECT_EQ(host.timer(3), gap);  // before the timeout (1 ms) and the rate increase (55 us)
  host.time = gap - Time::picoseconds(1);
  EXPECT_EQ(roce.next_packet(3), -1);
  host.time = gap;
  host.wakes.clear();
  roce.on_timer(3);
  EXPECT_EQ(host.wakes, std::vector<FlowSlot>{3});
  EXPECT_EQ(roce.next_packet(3), 1);
  EXPECT_EQ(roce.next_packet(3), -1);
  EXPECT_EQ(host.timer(3), gap * 2);
}

TEST(Roce, ReceiverDropsOutOfOrderPacketsAndNacksTheFirst) {
  FakeHost host;
  Roce roce(host, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  roce.open(0, 5, Time::microseconds(10), k100G);
  Ack ack;
  bool complete = false;
  ASSERT_TRUE(roce.on_data(0, 0, false, ack, complete));
  EXPECT_EQ(ack.cumulative, 1);
  EXPECT_FALSE(ack.nack);
  // 2 before 1: dropped and NACKed (expected 1); 3 dropped without an answer.
  ack = Ack{};
  ASSERT_TRUE(roce.on_data(0, 2, false, ack, complete));
  EXPECT_TRUE(ack.nack);
  EXPECT_EQ(ack.cumulative, 1);
  EXPECT_EQ(ack.seq, 2);
  ack = Ack{};
  EXPECT_FALSE(roce.on_data(0, 3, false, ack, complete));
  // ... unless it carries a CNP.
  ack = Ack{};
  ASSERT_TRUE(roce.on_data(0, 3, true, ack, complete));
  EXPECT_TRUE(ack.cnp);
  EXPECT_FALSE(ack.nack);
  // 1 in order; then 3 out of order again (2 was dropped): a new NACK, for 2.
  ack = Ack{};
  ASSERT_TRUE(roce.on_data(0, 1, false, ack, complete));
  EXPECT_EQ(ack.cumulative, 2);
  ack = Ack{};
  ASSERT_TRUE(roce.on_data(0, 3, true, ack, complete));
  EXPECT_TRUE(ack.nack);
  EXPECT_EQ(ack.cumulative, 2);
  EXPECT_FALSE(ack.cnp);  // the last CNP was less than 50 us ago
  for (std::int32_t seq = 2; seq < 5; ++seq) {
    ack = Ack{};
    ASSERT_TRUE(roce.on_data(0, seq, false, ack, complete));
    EXPECT_EQ(complete, seq == 4);
  }
  // A duplicate (after a timeout) is acknowledged again.
  ack = Ack{};
  EXPECT_TRUE(roce.on_data(0, 1, false, ack, complete));
  EXPECT_EQ(ack.cumulative, 5);
  EXPECT_FALSE(complete);
}

TEST(Roce, CompletesWithRepeatedLossesAndMarks) {
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq % 7 == 6 && sent_before == 0; };
  path.ce = [](std::int32_t seq) { return seq % 5 == 0; };
  OneFlowNetwork net(path);
  Roce roce(net, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(roce, 200, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(static_cast<std::int64_t>(trace.sends.size()), 200 + roce.retransmissions());
  EXPECT_GT(roce.retransmissions(), 28);  // go-back-N resends more than the 28 lost packets
  EXPECT_LT(roce.rate_control().rate(0).bps(), 100 * kGbps);  // the CNPs slowed it
}

// A timeout shorter than the route's round trip is raised to it: with rto 1 ns every packet would
// time out before its acknowledgement could come back.
TEST(Roce, TimeoutIsAtLeastTheRoundTrip) {
  FakeHost host;
  RoceOptions o;
  o.rto = Time::nanoseconds(1);
  Roce roce(host, o, DcqcnOptions{}, kMtu, kHeader);
  roce.open(0, 10, Time::microseconds(10), k100G);
  EXPECT_EQ(roce.next_packet(0), 0);
  EXPECT_EQ(host.timer(0), Time::microseconds(10));
  // A longer rto stands.
  Roce slow(host, RoceOptions{}, DcqcnOptions{}, kMtu, kHeader);
  slow.open(1, 10, Time::microseconds(10), k100G);
  EXPECT_EQ(slow.next_packet(1), 0);
  EXPECT_EQ(host.timer(1), RoceOptions{}.rto);
}

// After a timeout nothing is in flight until the first unacknowledged packet is sent again: the
// timer waits for it (a flow held back by its pacing time does not time out again and again).
TEST(Roce, AfterATimeoutTheTimerWaitsForThePacketToBeSentAgain) {
  FakeHost host;
  RoceOptions o;
  Roce roce(host, o, DcqcnOptions{}, kMtu, kHeader);
  roce.open(0, 10, Time::microseconds(10), k100G);
  EXPECT_EQ(roce.next_packet(0), 0);
  host.time = kWireTime100G;  // paced at the line rate
  EXPECT_EQ(roce.next_packet(0), 1);
  host.time = o.rto;
  roce.on_timer(0);
  EXPECT_EQ(roce.timeouts(), 1);
  EXPECT_EQ(host.timer(0), Time::max());
  // Nothing sent since: a late timer event is not a timeout.
  host.time = o.rto * 3;
  roce.on_timer(0);
  EXPECT_EQ(roce.timeouts(), 1);
  // The packet sent again starts the timer.
  EXPECT_EQ(roce.next_packet(0), 0);
  EXPECT_EQ(host.timer(0), o.rto * 4);
  // Its acknowledgement leaves nothing in flight (1 is to be sent again): no timer.
  host.time = o.rto * 3 + Time::microseconds(10);
  Ack ack;
  ack.seq = 0;
  ack.cumulative = 1;
  roce.on_ack(0, ack);
  EXPECT_EQ(host.timer(0), Time::max());
}

// A flow paced at a low rate with a short rto: at most one timeout per packet sent. Every packet
// is marked, so the CNPs hold the rate near min_rate (1 Mb/s: 33 ms a packet) while the timeout
// (2 us, raised to the round trip, 4.33 us) is far shorter than the pacing gap.
TEST(Roce, AtMostOneTimeoutPerPacketSentWhilePacedSlowly) {
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq == 3 && sent_before < 2; };
  path.ce = [](std::int32_t) { return true; };
  OneFlowNetwork net(path);
  RoceOptions o;
  o.rto = Time::microseconds(2);
  DcqcnOptions q;
  q.min_rate = Rate::gbps(0.001);
  q.cnp_interval = Time::zero();
  Roce roce(net, o, q, kMtu, kHeader);
  const Trace trace = net.run(roce, 8, round_trip(path), Time::milliseconds(10000));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_GE(roce.timeouts(), 1);
  EXPECT_LE(roce.timeouts(), static_cast<std::int64_t>(trace.sends.size()));
}

// ---------------------------------------------------------------------------------------------
// IRN

TEST(Irn, LostPacketIsRetransmittedAlone) {
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq == 10 && sent_before == 0; };
  OneFlowNetwork net(path);
  Irn irn(net, IrnOptions{}, DcqcnOptions{}, kMtu, kHeader);
  EXPECT_STREQ(irn.name(), "irn");
  const Trace trace = net.run(irn, 100, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(irn.retransmissions(), 1);
  EXPECT_EQ(irn.timeouts(), 0);
  ASSERT_EQ(trace.sends.size(), 101U);
  int tens = 0;
  for (const Send& s : trace.sends)
    tens += s.seq == 10 ? 1 : 0;
  EXPECT_EQ(tens, 2);
  for (int n : trace.arrivals)
    EXPECT_EQ(n, 1);
  // The first NACK answers packet 11 with cumulative 10.
  const auto nack = std::find_if(trace.answers.begin(), trace.answers.end(),
                                 [](const Answer& a) { return a.ack.nack; });
  ASSERT_NE(nack, trace.answers.end());
  EXPECT_EQ(nack->ack.cumulative, 10);
  EXPECT_EQ(nack->ack.seq, 11);
}

TEST(Irn, InFlightNeverExceedsTheBdpCap) {
  // Opened with a 2 us round trip (the path's is 4.33 us): 100G x 2 us = 25 kB, 6.01 packets of
  // 4160 bytes: a cap of 7.
  Path path;
  OneFlowNetwork net(path);
  IrnOptions o;
  o.dcqcn = false;
  Irn irn(net, o, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(irn, 200, Time::microseconds(2));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(irn.bdp_cap(0), 7);
  EXPECT_EQ(trace.max_in_flight, 7);
  // Window bound: 7 packets per 332.8 ns + 4 us round trip, not line rate.
  EXPECT_GT(trace.complete, kWireTime100G * 200 + Time::microseconds(2) + Time::microseconds(50));
}

TEST(Irn, TimeoutIsLowWithFewPacketsInFlightHighOtherwise) {
  FakeHost host;
  IrnOptions o;
  o.dcqcn = false;  // no pacing: packets back to back at one instant
  Irn irn(host, o, DcqcnOptions{}, kMtu, kHeader);
  irn.open(0, 100, Time::microseconds(100), k100G);
  for (std::int32_t seq = 0; seq < 3; ++seq)
    EXPECT_EQ(irn.next_packet(0), seq);
  EXPECT_EQ(host.timer(0), o.rto_low);  // 3 in flight
  EXPECT_EQ(irn.next_packet(0), 3);
  EXPECT_EQ(host.timer(0), o.rto_high);  // 4
  // Packets 0 and 1 acknowledged at 10 us: 2 in flight, the timeout restarts short.
  host.time = Time::microseconds(10);
  Ack ack;
  ack.seq = 1;
  ack.cumulative = 2;
  irn.on_ack(0, ack);
  EXPECT_EQ(host.timer(0), Time::microseconds(10) + o.rto_low);
  // It fires: packets 2 and 3 are sent again, in order, before any new data.
  host.time = Time::microseconds(110);
  host.wakes.clear();
  irn.on_timer(0);
  EXPECT_EQ(irn.timeouts(), 1);
  EXPECT_EQ(host.wakes, std::vector<FlowSlot>{0});
  EXPECT_EQ(irn.next_packet(0), 2);
  EXPECT_EQ(irn.next_packet(0), 3);
  EXPECT_EQ(irn.next_packet(0), 4);
  EXPECT_EQ(irn.retransmissions(), 2);
}

TEST(Irn, TimeoutsAreAtLeastTheRoundTrip) {
  FakeHost host;
  IrnOptions o;
  o.dcqcn = false;
  o.rto_low = Time::nanoseconds(1);
  o.rto_high = Time::nanoseconds(2);
  Irn irn(host, o, DcqcnOptions{}, kMtu, kHeader);
  irn.open(0, 100, Time::microseconds(10), k100G);
  EXPECT_EQ(irn.next_packet(0), 0);
  EXPECT_EQ(host.timer(0), Time::microseconds(10));
  for (std::int32_t seq = 1; seq < 5; ++seq)
    EXPECT_EQ(irn.next_packet(0), seq);
  EXPECT_EQ(host.timer(0), Time::microseconds(10));  // RTO_high too
}

TEST(Irn, AfterATimeoutTheTimerWaitsForAPacketToBeSentAgain) {
  FakeHost host;
  IrnOptions o;
  o.dcqcn = false;
  Irn irn(host, o, DcqcnOptions{}, kMtu, kHeader);
  irn.open(0, 100, Time::microseconds(10), k100G);
  EXPECT_EQ(irn.next_packet(0), 0);
  host.time = o.rto_low;
  irn.on_timer(0);
  EXPECT_EQ(irn.timeouts(), 1);
  EXPECT_EQ(host.timer(0), Time::max());
  host.time = o.rto_low * 5;
  irn.on_timer(0);  // nothing sent since the timeout
  EXPECT_EQ(irn.timeouts(), 1);
  EXPECT_EQ(irn.next_packet(0), 0);  // sent again: the timer restarts
  EXPECT_EQ(host.timer(0), o.rto_low * 6);
}

TEST(Irn, ReceiverKeepsOutOfOrderPacketsAndNacksEach) {
  FakeHost host;
  Irn irn(host, IrnOptions{}, DcqcnOptions{}, kMtu, kHeader);
  irn.open(0, 4, Time::microseconds(10), k100G);
  Ack ack;
  bool complete = false;
  ASSERT_TRUE(irn.on_data(0, 0, false, ack, complete));
  EXPECT_EQ(ack.cumulative, 1);
  EXPECT_FALSE(ack.nack);
  for (std::int32_t seq : {2, 3}) {
    ack = Ack{};
    ASSERT_TRUE(irn.on_data(0, seq, false, ack, complete));
    EXPECT_TRUE(ack.nack);
    EXPECT_EQ(ack.cumulative, 1);
    EXPECT_EQ(ack.seq, seq);
    EXPECT_FALSE(complete);
  }
  ack = Ack{};
  ASSERT_TRUE(irn.on_data(0, 1, true, ack, complete));
  EXPECT_FALSE(ack.nack);
  EXPECT_EQ(ack.cumulative, 4);  // 2 and 3 were kept
  EXPECT_TRUE(complete);
  EXPECT_TRUE(ack.cnp);
}

TEST(Irn, CompletesWithEverySeventhPacketLost) {
  // Every 7th packet lost on its first send (28 of 200), marks on every 5th, DCQCN on: each lost
  // packet is sent again exactly once (no timeouts: a later packet always arrives to be
  // NACKed), and every packet arrives.
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq % 7 == 6 && sent_before == 0; };
  path.ce = [](std::int32_t seq) { return seq % 5 == 0; };
  OneFlowNetwork net(path);
  IrnOptions o;
  Irn irn(net, o, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(irn, 200, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(trace.dropped, 28);
  EXPECT_EQ(irn.retransmissions(), 28);
  EXPECT_EQ(irn.timeouts(), 0);
  for (int n : trace.arrivals)
    EXPECT_EQ(n, 1);
  EXPECT_LE(trace.max_in_flight, irn.bdp_cap(0));
  EXPECT_LT(irn.rate_control().rate(0).bps(), 100 * kGbps);  // the CNPs slowed it
}

TEST(Irn, TailLossIsFoundByTheShortTimeout) {
  // The last packet is lost: nothing after it is NACKed. When the ACK of packet 18 arrives one
  // packet is in flight, so RTO_low (100 us) after it the sender sends 19 again.
  Path path;
  path.drop = [](std::int32_t seq, int sent_before) { return seq == 19 && sent_before == 0; };
  OneFlowNetwork net(path);
  IrnOptions o;
  Irn irn(net, o, DcqcnOptions{}, kMtu, kHeader);
  const Trace trace = net.run(irn, 20, round_trip(path));
  ASSERT_NE(trace.complete, Time::max());
  EXPECT_EQ(irn.timeouts(), 1);
  EXPECT_EQ(irn.retransmissions(), 1);
  const auto last_progress = std::find_if(trace.answers.begin(), trace.answers.end(),
                                          [](const Answer& a) { return a.ack.cumulative == 19; });
  ASSERT_NE(last_progress, trace.answers.end());
  ASSERT_EQ(trace.sends.size(), 21U);
  EXPECT_EQ(trace.sends.back().seq, 19);
  EXPECT_EQ(trace.sends.back().at, last_progress->at + o.rto_low);
}

}  // namespace transport_test
}  // namespace mfabric::net::packet

namespace mfabric::net::packet {
namespace dctcp_test {

// DCTCP's two variants when the first window (packet 0 alone: alpha's first window ends with the
// first ACK) is marked: both fold the mark into alpha (15/16 x 1 + 1/16 x 1 = 1) and cut the
// window of 10 by alpha / 2 to 5, which congestion avoidance then grows by 1/5 for that ACK.
TEST(Dctcp, TheVariantsCutAtTheFirstEchoOrAtTheWindowsEnd) {
  for (DctcpVariant variant : {DctcpVariant::Rfc8257, DctcpVariant::Htsim}) {
    transport_test::FakeHost host;
    DctcpOptions o;
    o.variant = variant;
    Dctcp dctcp(host, o, Bytes(4096));
    dctcp.open(0, 100, Time::microseconds(10), Rate::gbps(100));
    for (int i = 0; i < 10; ++i)
      ASSERT_EQ(dctcp.next_packet(0), i);
    EXPECT_FALSE(dctcp.can_send(0));
    Ack ack;
    ack.cumulative = 1;
    ack.seq = 0;
    ack.ecn_echo = true;
    dctcp.on_ack(0, ack);
    if (variant == DctcpVariant::Rfc8257) {
      // alpha's first window ended with this ACK (window_end 0): alpha = 15/16 + 1/16 = 1.
      EXPECT_DOUBLE_EQ(dctcp.alpha(0), 1.0);
      EXPECT_DOUBLE_EQ(dctcp.window(0), 5.0 + 0.2);  // cut to 5, then congestion avoidance 1/5
    } else {
      // The first window (packet 0) ends here, marked: the same cut to 5 at its end.
      EXPECT_DOUBLE_EQ(dctcp.alpha(0), 1.0);
      EXPECT_DOUBLE_EQ(dctcp.window(0), 5.0 + 0.2);
    }
    // The next window (packets 1-9) has no marks: RFC 8257 keeps its window growing; the
    // window's end updates alpha to 15/16 in both, with no cut.
    for (int i = 2; i <= 10; ++i) {
      Ack next;
      next.cumulative = i;
      next.seq = i - 1;
      dctcp.on_ack(0, next);
    }
    EXPECT_NEAR(dctcp.alpha(0), 15.0 / 16.0, 1e-12);
    EXPECT_GT(dctcp.window(0), 5.2);
  }
}

// A mark in the middle of a window: RFC 8257 cuts when the echo arrives, htsim's only when the
// window ends.
TEST(Dctcp, HtsimsVariantWaitsForTheWindowsEnd) {
  for (DctcpVariant variant : {DctcpVariant::Rfc8257, DctcpVariant::Htsim}) {
    transport_test::FakeHost host;
    DctcpOptions o;
    o.variant = variant;
    Dctcp dctcp(host, o, Bytes(4096));
    dctcp.open(0, 1000, Time::microseconds(10), Rate::gbps(100));
    for (int i = 0; i < 10; ++i)
      dctcp.next_packet(0);
    Ack first;  // ends the first window (packet 0), unmarked: alpha 15/16, slow start 10 -> 11
    first.cumulative = 1;
    dctcp.on_ack(0, first);
    while (dctcp.can_send(0))
      dctcp.next_packet(0);
    const double before = dctcp.window(0);
    Ack marked;  // packet 1, in the second window (which ends at packet 10's ACK), marked
    marked.cumulative = 2;
    marked.seq = 1;
    marked.ecn_echo = true;
    dctcp.on_ack(0, marked);
    if (variant == DctcpVariant::Rfc8257) {
      EXPECT_LT(dctcp.window(0), before);
    } else {
      EXPECT_GT(dctcp.window(0), before);  // still growing until the window ends
    }
  }
}

}  // namespace dctcp_test
}  // namespace mfabric::net::packet
