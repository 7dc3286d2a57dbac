// Bytes per channel per time bin (net/link_timeline.h): worked out by hand from rate x overlap,
// on the timeline alone and as the flow and packet backends fill it.
#include "net/link_timeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net/packet_backend.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace {

using fabric::Topology;
using testing::cable_of;
using testing::cluster;
using testing::link_between;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

constexpr std::int64_t kUs = 1'000'000;  // picoseconds
constexpr double k100G = 100e9;

// Two servers of `gpus` GPUs and one NIC on a single leaf, 100G links, 1 us each.
Topology two_hosts(int gpus = 1) {
  return fabric::build_fabric("fat-tree:radix=4", cluster(2, gpus, 1));
}

// Bytes a channel at `bps` carries in `ps` picoseconds.
double bytes_at(double bps, std::int64_t ps) {
  return bps / 8.0 * static_cast<double>(ps) * 1e-12;
}

// Channel c's bytes in bin b over what its link could carry in a bin.
double utilisation(const LinkTimeline& tl, ChannelId c, std::int64_t b, double bps) {
  return tl.bytes(c, b) / bytes_at(bps, tl.bin().ps());
}

TEST(LinkTimeline, ARateAddsItsOverlapWithEachBin) {
  const Topology t = two_hosts();
  const LinkTable links(t);
  LinkTimeline tl(links, {Time::microseconds(10)});
  // 100G from 5 us to 35 us: half of bin 0, bins 1 and 2, half of bin 3.
  tl.add_rate(0, 5 * kUs, 35 * kUs, k100G);
  EXPECT_EQ(tl.bins(), 4);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 0, k100G), 0.5);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 1, k100G), 1.0);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 2, k100G), 1.0);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 3, k100G), 0.5);
  EXPECT_EQ(tl.bytes(0, 4), 0.0);
  EXPECT_EQ(tl.bytes(1, 1), 0.0);  // the other direction carried nothing
  EXPECT_DOUBLE_EQ(tl.total_bytes(0), bytes_at(k100G, 30 * kUs));
  // A cell per channel in each bin any channel carried bytes in; the last bin is open (a load
  // changing later in it costs no cell) until closed.
  const auto channels = static_cast<std::int64_t>(tl.channels());
  EXPECT_EQ(channels, 2 * static_cast<std::int64_t>(t.links().size()));
  EXPECT_EQ(tl.cells(), 3 * channels);
  EXPECT_THROW(tl.bin_bytes(0), std::logic_error);
  tl.close();
  EXPECT_EQ(tl.cells(), 4 * channels);
  EXPECT_EQ(tl.bin_bytes(3).size(), tl.channels());
  EXPECT_DOUBLE_EQ(tl.bin_bytes(3)[0], bytes_at(k100G, 5 * kUs));
  EXPECT_TRUE(tl.bin_bytes(4).empty());
  // Bytes of a packet: spread over its time on the wire, or in one bin at an instant.
  tl.add_bytes(2, 8 * kUs, 12 * kUs, 4000);
  tl.add_bytes(2, 25 * kUs, 25 * kUs, 1000);
  EXPECT_DOUBLE_EQ(tl.bytes(2, 0), 2000);
  EXPECT_DOUBLE_EQ(tl.bytes(2, 1), 2000);
  EXPECT_DOUBLE_EQ(tl.bytes(2, 2), 1000);
}

TEST(LinkTimeline, AutomaticBinsDoubleAsTheRunOutgrowsThem) {
  const Topology t = two_hosts();
  const LinkTable links(t);
  LinkTimeline tl(links, {});
  EXPECT_TRUE(tl.automatic());
  EXPECT_EQ(tl.bin(), kFirstAutomaticBin);
  tl.add_rate(0, 0, Time::milliseconds(100).ps(), k100G);
  EXPECT_EQ(tl.bin(), Time::milliseconds(1));
  EXPECT_EQ(tl.bins(), 100);
  // One second: 1000 bins of 1 ms is more than 400; 2 ms gives 500, 4 ms 250.
  tl.add_rate(0, Time::milliseconds(100).ps(), Time::milliseconds(1000).ps(), k100G / 2);
  EXPECT_EQ(tl.bin(), Time::milliseconds(4));
  EXPECT_EQ(tl.bins(), 250);
  // Bin 0 holds 4 ms at 100G; bin 24 (96-100 ms) too; bin 25 (100-104 ms) 4 ms at 50G.
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 0, k100G), 1.0);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 24, k100G), 1.0);
  EXPECT_DOUBLE_EQ(utilisation(tl, 0, 25, k100G), 0.5);
  EXPECT_DOUBLE_EQ(tl.total_bytes(0), bytes_at(k100G, Time::milliseconds(100).ps()) +
                                          bytes_at(k100G / 2, Time::milliseconds(900).ps()));
}

TEST(LinkTimeline, AutomaticBinsWidenToStayWithinTheCells) {
  const Topology t = two_hosts();
  const LinkTable links(t);
  const auto channels = static_cast<std::int64_t>(2 * t.links().size());
  LinkTimeline tl(links, {Time::zero(), 4 * channels});  // four bins' cells
  // Two channels over 100 ms: the bins before the open one must fit in four, so 32 ms (bins
  // 0-2 closed, 3 open), not 16 ms (0-5 closed).
  tl.add_rate(0, 0, Time::milliseconds(100).ps(), k100G);
  tl.add_rate(1, 0, Time::milliseconds(100).ps(), k100G);
  EXPECT_EQ(tl.bin(), Time::milliseconds(32));
  EXPECT_EQ(tl.cells(), 3 * channels);
  tl.close();
  EXPECT_EQ(tl.cells(), 4 * channels);
  EXPECT_DOUBLE_EQ(tl.total_bytes(1), bytes_at(k100G, Time::milliseconds(100).ps()));
  EXPECT_DOUBLE_EQ(utilisation(tl, 1, 3, k100G), 4.0 / 32.0);  // 96 to 100 ms
}

TEST(LinkTimeline, FixedBinsBeyondTheCellsAreRefused) {
  const Topology t = two_hosts();
  const LinkTable links(t);
  const auto channels = static_cast<std::int64_t>(2 * t.links().size());
  LinkTimeline tl(links, {Time::microseconds(1), 10 * channels});
  tl.add_rate(0, 0, 11 * kUs, k100G);  // bins 0-9 and the open bin 10
  EXPECT_EQ(tl.cells(), 10 * channels);
  try {
    tl.add_rate(1, 0, 12 * kUs, k100G);  // bin 10 closes: one bin more
    FAIL() << "11 bins of cells accepted";
  } catch (const TimelineTooFine& e) {
    EXPECT_NE(std::string(e.what()).find("bins of 1us"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fmt::format("more than {} cells", 10 * channels)),
              std::string::npos)
        << e.what();
  }
}

TEST(LinkTimeline, ACircuitsBytesGoToTheFibresOfItsNics) {
  const Topology t = fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  LinkTable links(t);
  LinkTimeline tl(links, {Time::microseconds(10)});
  const fabric::NodeId a = t.nic(0, 5);
  const fabric::NodeId b = t.nic(1, 5);
  const fabric::LinkId circuit = links.connect(a, b);
  const ChannelId a_to_b = channel_of(links, circuit, a);
  tl.add_rate(a_to_b, 0, 10 * kUs, k100G);
  const fabric::LinkId fibre_a = cable_of(t, a);
  const fabric::LinkId fibre_b = cable_of(t, b);
  const fabric::NodeId ocs = t.other_end(fibre_a, a);
  ASSERT_EQ(t.node(ocs).kind, fabric::NodeKind::Ocs);
  // a's fibre towards the OCS, b's fibre from it; not the other directions.
  EXPECT_DOUBLE_EQ(utilisation(tl, channel_of(t, fibre_a, a), 0, k100G), 1.0);
  EXPECT_DOUBLE_EQ(utilisation(tl, channel_of(t, fibre_b, ocs), 0, k100G), 1.0);
  EXPECT_EQ(tl.total_bytes(channel_of(t, fibre_a, ocs)), 0.0);
  EXPECT_EQ(tl.total_bytes(channel_of(t, fibre_b, b)), 0.0);
  // A packet port of the torn-down circuit still draining: the same fibres.
  links.disconnect(circuit);
  tl.add_bytes(a_to_b, 15 * kUs, 15 * kUs, 1000);
  EXPECT_DOUBLE_EQ(tl.bytes(channel_of(t, fibre_a, a), 1), 1000);
  EXPECT_DOUBLE_EQ(tl.bytes(channel_of(t, fibre_b, ocs), 1), 1000);
}

TEST(LinkTimeline, AddingCoarsensTheFinerTimeline) {
  const Topology t = two_hosts();
  const LinkTable links(t);
  LinkTimeline fine(links, {});
  LinkTimeline coarse(links, {});
  fine.add_rate(0, 0, Time::milliseconds(10).ps(), k100G);           // 1 ms bins
  coarse.add_rate(0, 0, Time::milliseconds(1000).ps(), k100G / 10);  // 4 ms bins
  EXPECT_THROW(fine.add(coarse), std::logic_error);                  // bins still open
  coarse.close();
  fine.add(coarse);
  EXPECT_EQ(fine.bin(), Time::milliseconds(4));
  // Bin 0: 4 ms at 100G plus 4 ms at 10G.
  EXPECT_DOUBLE_EQ(utilisation(fine, 0, 0, k100G), 1.1);
  EXPECT_DOUBLE_EQ(utilisation(fine, 0, 3, k100G), 0.1);
  EXPECT_DOUBLE_EQ(fine.total_bytes(0), bytes_at(k100G, Time::milliseconds(10).ps()) +
                                            bytes_at(k100G / 10, Time::milliseconds(1000).ps()));
}

TEST(FlowBackendTimeline, OneTransferAtLineRateFillsTheBinsItCovers) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  net.record_timeline({Time::microseconds(10)});
  net.advance(Time::microseconds(5));
  Recorder rec;
  // 1 MB at 100G: its bytes leave from 5 us to 85 us.
  rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000));
  run_to_idle(net);
  const auto& stats = net.channel_stats();
  const std::optional<LinkTimeline> tl = net.take_timeline();
  ASSERT_TRUE(tl.has_value());
  EXPECT_FALSE(net.take_timeline().has_value());  // handed over once
  const fabric::NodeId nic = t.nic(0, 0);
  const ChannelId up = channel_of(t, cable_of(t, nic), nic);
  const ChannelId pcie = channel_of(t, link_between(t, t.gpu(0, 0), nic), t.gpu(0, 0));
  EXPECT_EQ(tl->bins(), 9);
  for (ChannelId c : {up, pcie}) {
    EXPECT_NEAR(utilisation(*tl, c, 0, k100G), 0.5, 1e-9);
    for (std::int64_t b = 1; b <= 7; ++b)
      EXPECT_NEAR(utilisation(*tl, c, b, k100G), 1.0, 1e-9) << "bin " << b;
    EXPECT_NEAR(utilisation(*tl, c, 8, k100G), 0.5, 1e-9);
  }
  // Every channel: the bins add up to what links.csv counts, and only the route carried bytes.
  int carrying = 0;
  for (std::size_t c = 0; c < tl->channels(); ++c) {
    const double total = tl->total_bytes(static_cast<ChannelId>(c));
    EXPECT_NEAR(total, stats[c].bytes, 1e-6 * (1 + stats[c].bytes)) << "channel " << c;
    carrying += total > 0 ? 1 : 0;
  }
  EXPECT_EQ(carrying, 4);  // PCIe, cable up, cable down, PCIe
}

TEST(FlowBackendTimeline, TwoFlowsShareALinkAndItsBins) {
  // Two GPUs behind one NIC: 500 kB and 1 MB to the other server. Both at 50G until the first is
  // done at 80 us; the second then has 500 kB left at 100G: done at 120 us. The cable is full
  // throughout; each GPU's PCIe at half, then the second's full.
  const Topology t = two_hosts(2);
  FlowBackend net(t);
  net.record_timeline({Time::microseconds(10)});
  Recorder rec;
  rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 500'000));
  rec.start(net, transfer(t.gpu(0, 1), t.gpu(1, 1), 1'000'000));
  run_to_idle(net);
  const std::optional<LinkTimeline> tl = net.take_timeline();
  ASSERT_TRUE(tl.has_value());
  const fabric::NodeId nic = t.nic(0, 0);
  const ChannelId cable = channel_of(t, cable_of(t, nic), nic);
  const ChannelId first = channel_of(t, link_between(t, t.gpu(0, 0), nic), t.gpu(0, 0));
  const ChannelId second = channel_of(t, link_between(t, t.gpu(0, 1), nic), t.gpu(0, 1));
  EXPECT_EQ(tl->bins(), 12);
  for (std::int64_t b = 0; b < 12; ++b) {
    EXPECT_NEAR(utilisation(*tl, cable, b, k100G), 1.0, 1e-9) << "bin " << b;
    EXPECT_NEAR(utilisation(*tl, first, b, k100G), b < 8 ? 0.5 : 0.0, 1e-9) << "bin " << b;
    EXPECT_NEAR(utilisation(*tl, second, b, k100G), b < 8 ? 0.5 : 1.0, 1e-9) << "bin " << b;
  }
}

TEST(FlowBackendTimeline, ACircuitsBytesAreOnItsFibres) {
  Topology t = fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  net.record_timeline({Time::microseconds(10)});
  const fabric::NodeId a = t.nic(0, 5);
  const fabric::NodeId b = t.nic(1, 5);
  const fabric::LinkId circuit = net.connect(a, b);
  Recorder rec;
  rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));  // 0 to 80 us
  net.advance(Time::microseconds(40));
  net.disconnect(circuit);  // half of it sent: the rest waits
  net.advance(Time::microseconds(60));
  net.connect(a, b);
  net.resume_paused();  // 60 to 100 us
  run_to_idle(net);
  const std::optional<LinkTimeline> tl = net.take_timeline();
  ASSERT_TRUE(tl.has_value());
  const fabric::LinkId fibre = cable_of(t, a);
  const ChannelId towards_ocs = channel_of(t, fibre, a);
  for (std::int64_t bin = 0; bin < 10; ++bin) {
    const double expected = bin < 4 || bin >= 6 ? 1.0 : 0.0;
    EXPECT_NEAR(utilisation(*tl, towards_ocs, bin, k100G), expected, 1e-9) << "bin " << bin;
  }
  EXPECT_NEAR(tl->total_bytes(towards_ocs), 1e6, 1e-3);
}

TEST(PacketBackendTimeline, BinsAddUpToTheChannelsBytes) {
  // Two GPUs: one transfer across the network (packets), one inside the server (fluid part).
  const Topology t = two_hosts(2);
  PacketBackend net(t);
  net.record_timeline({Time::microseconds(20)});
  Recorder rec;
  rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 2'000'000));
  rec.start(net, transfer(t.gpu(0, 0), t.gpu(0, 1), 2'000'000));
  run_to_idle(net);
  const auto& stats = net.channel_stats();
  const std::optional<LinkTimeline> tl = net.take_timeline();
  ASSERT_TRUE(tl.has_value());
  for (std::size_t c = 0; c < tl->channels(); ++c) {
    EXPECT_NEAR(tl->total_bytes(static_cast<ChannelId>(c)), stats[c].bytes, 1e-6 * stats[c].bytes)
        << "channel " << c;
  }
  // The NIC's cable runs at line rate once the transport has ramped up: a middle bin is nearly
  // full (headers count: they are on the wire).
  const fabric::NodeId nic = t.nic(0, 0);
  const ChannelId cable = channel_of(t, cable_of(t, nic), nic);
  EXPECT_GT(utilisation(*tl, cable, tl->bins() / 2, k100G), 0.95);
  EXPECT_LE(utilisation(*tl, cable, tl->bins() / 2, k100G), 1.0 + 1e-9);
}

}  // namespace
}  // namespace mfabric::net
