// The RDMA transports of the packet backend on their own: RoCEv2 go-back-N (roce_dcqcn.h) and
// IRN (irn.h), driven by a fake host, and for whole transfers by a one-flow network
// (transport_test_util.h). Expected values are worked out by hand next to each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "net/packet/transports/irn.h"
#include "net/packet/transports/roce_dcqcn.h"
#include "transport_test_util.h"

namespace mfabric::net::packet {
namespace transport_test {

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
