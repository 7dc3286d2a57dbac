// DCQCN on its own (net/packet/transports/dcqcn.h): the reaction point's rate cut, fast
// recovery, additive and hyper increase step by step in both variants, alpha's decay, pacing,
// two flows converging on a shared link, and the notification point. Expected values are worked
// out by hand next to each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "net/packet/transports/dcqcn.h"
#include "transport_test_util.h"

namespace mfabric::net::packet {
namespace transport_test {

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

}  // namespace transport_test
}  // namespace mfabric::net::packet
