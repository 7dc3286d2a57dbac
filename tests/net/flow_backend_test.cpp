// Analytic checks of the flow backend: every expected time below is worked out by hand from
// size / rate + latency, with the max-min rates written next to it.
#include "net/flow/flow_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "fabric/builders.h"
#include "max_min_reference.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace flow_backend_test {

using fabric::LinkKind;
using fabric::Node;
using fabric::NodeId;
using fabric::NodeKind;
using fabric::Topology;
using testing::cable_of;
using testing::cluster;
using testing::link_between;
using testing::Recorder;
using testing::reference_max_min;
using testing::run_to_idle;
using testing::transfer;

constexpr std::int64_t kUs = 1'000'000;  // picoseconds

// Two servers of one GPU and one NIC on a single leaf: GPU -PCIe- NIC -cable- leaf, 100G links,
// 1 us per cable, so a transfer pays 2 us of latency.
Topology two_hosts(int gpus = 1) {
  return fabric::build_fabric("fat-tree:radix=4", cluster(2, gpus, 1));
}

TEST(FlowBackend, SingleTransferTakesSizeOverRatePlusLatency) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000));
  EXPECT_EQ(net.active_transfers(), 1u);
  run_to_idle(net);
  // 8e6 bits / 100 Gbps = 80 us, plus 2 x 1 us.
  EXPECT_NEAR(static_cast<double>(rec.at(id).ps()), 82.0 * kUs, 1.0);
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_EQ(net.now(), rec.at(id));
}

TEST(FlowBackend, OddSizesRoundUpToThePicosecond) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  // 7 bytes = 56 bits at 100 Gbps = 560 ps exactly; 3 bytes at 100 Gbps = 240 ps.
  const TransferId a = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 7));
  run_to_idle(net);
  EXPECT_EQ(rec.at(a).ps(), 560 + 2 * kUs);
  // 1 byte at 300 Gbps = 26.67 ps -> 27.
  fabric::Topology fast =
      fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1, Rate::gbps(300), Time::zero()));
  FlowBackend net2(fast);
  Recorder rec2;
  const TransferId b = rec2.start(net2, transfer(fast.gpu(0, 0), fast.gpu(1, 0), 1));
  run_to_idle(net2);
  EXPECT_EQ(rec2.at(b).ps(), 27);
}

TEST(FlowBackend, NTransfersOnOneLinkEachGetOneNth) {
  // Four GPUs behind one NIC: every transfer crosses the NIC's cable.
  const Topology t = two_hosts(4);
  FlowBackend net(t);
  Recorder rec;
  std::vector<TransferId> ids;
  for (int k = 0; k < 4; ++k) {
    ids.push_back(rec.start(net, transfer(t.gpu(0, k), t.gpu(1, k), 1'000'000)));
  }
  ASSERT_TRUE(net.next_event_time().has_value());
  for (TransferId id : ids)
    EXPECT_DOUBLE_EQ(net.rate_of(id)->gbps(), 25.0);
  run_to_idle(net);
  for (TransferId id : ids) {
    EXPECT_NEAR(static_cast<double>(rec.at(id).ps()), 4 * 80.0 * kUs + 2.0 * kUs, 1.0);
  }
}

// s0 -- sw1 ==A(100G)== sw2 ==B(30G)== sw3, s1 on sw2, s2 on sw3; host links 1 Tbps, no latency.
struct ThreeSwitches {
  Topology t{"test", "test", cluster(3, 1, 1, Rate::gbps(1000), Time::zero())};
  fabric::LinkId a = -1, b = -1;
  ThreeSwitches() {
    t.add_servers();
    NodeId sw[3];
    for (int i = 0; i < 3; ++i) {
      sw[i] = t.add_node(Node{.kind = NodeKind::Switch, .index = i, .tier = 1, .radix = 8});
      t.add_link(t.nic(i, 0), sw[i], Rate::gbps(1000), Time::zero(), LinkKind::Cable);
    }
    a = t.add_link(sw[0], sw[1], Rate::gbps(100), Time::zero(), LinkKind::Cable);
    b = t.add_link(sw[1], sw[2], Rate::gbps(30), Time::zero(), LinkKind::Cable);
  }
};

TEST(FlowBackend, MaxMinRatesWithDifferentBottlenecks) {
  ThreeSwitches n;
  const Topology& t = n.t;
  FlowBackend net(t);
  Recorder rec;
  // f1 crosses A, f2 crosses A and B, f3 crosses B. B is the tighter: f2 = f3 = 15G, and f1 takes
  // what f2 leaves of A: 85G.
  const TransferId f1 = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'062'500));  // 8.5 Mb
  const TransferId f2 = rec.start(net, transfer(t.gpu(0, 0), t.gpu(2, 0), 300'000));    // 2.4 Mb
  const TransferId f3 = rec.start(net, transfer(t.gpu(1, 0), t.gpu(2, 0), 150'000));    // 1.2 Mb
  ASSERT_TRUE(net.next_event_time().has_value());
  EXPECT_NEAR(net.rate_of(f1)->gbps(), 85.0, 1e-9);
  EXPECT_NEAR(net.rate_of(f2)->gbps(), 15.0, 1e-9);
  EXPECT_NEAR(net.rate_of(f3)->gbps(), 15.0, 1e-9);
  // f3 is done at 1.2 Mb / 15G = 80 us. Then B gives f2 30G and f1 keeps 70G of A.
  net.advance(Time::microseconds(90));
  EXPECT_EQ(rec.at(f3).ps(), 80 * kUs);
  EXPECT_NEAR(net.rate_of(f1)->gbps(), 70.0, 1e-9);
  EXPECT_NEAR(net.rate_of(f2)->gbps(), 30.0, 1e-9);
  run_to_idle(net);
  // f1: 6.8 Mb by 80 us, 1.7 Mb left at 70G = 24.2857 us. f2: 1.2 Mb by 80 us, 1.2 Mb at 30G.
  EXPECT_NEAR(static_cast<double>(rec.at(f1).ps()), 80.0 * kUs + 1.7e6 / 70e9 * 1e12, 1.0);
  EXPECT_NEAR(static_cast<double>(rec.at(f2).ps()), 120.0 * kUs, 1.0);
}

TEST(FlowBackend, LaterFlowSlowsOthersThatSpeedUpWhenItLeaves) {
  const Topology t = two_hosts(2);  // both GPUs share the NIC's cable
  FlowBackend net(t);
  Recorder rec;
  const TransferId a = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 10 Mb
  net.advance(Time::microseconds(20));  // a has sent 2 Mb
  const TransferId b = rec.start(net, transfer(t.gpu(0, 1), t.gpu(1, 1), 250'000));  // 2 Mb
  EXPECT_DOUBLE_EQ(net.rate_of(a)->gbps(), 50.0);
  EXPECT_DOUBLE_EQ(net.rate_of(b)->gbps(), 50.0);
  net.advance(Time::microseconds(70));
  // b drained at 20 + 2 Mb / 50G = 60 us; a has 10 - 2 - 2 = 6 Mb left at 100G: done at 120 us.
  EXPECT_EQ(rec.at(b).ps(), 62 * kUs);
  EXPECT_DOUBLE_EQ(net.rate_of(a)->gbps(), 100.0);
  run_to_idle(net);
  EXPECT_EQ(rec.at(a).ps(), 122 * kUs);
}

TEST(FlowBackend, IntraServerTransferRunsAtNvSwitchRate) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(1, 4, 1));
  FlowBackend net(t);
  Recorder rec;
  // 900 GB/s per GPU and direction: 0.9 GB in 1 ms; NVLink has no latency.
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(0, 1), 900'000'000));
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.at(id).ps()), 1e9, 1.0);
}

TEST(FlowBackend, GpuSendingToTwoGpusSharesItsEgressPort) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(1, 4, 1));
  FlowBackend net(t);
  Recorder rec;
  const TransferId x = rec.start(net, transfer(t.gpu(0, 0), t.gpu(0, 1), 900'000'000));
  const TransferId y = rec.start(net, transfer(t.gpu(0, 0), t.gpu(0, 2), 900'000'000));
  // GPU 1 sending to GPU 3 uses GPU 1's egress and GPU 3's ingress: no contention.
  const TransferId z = rec.start(net, transfer(t.gpu(0, 1), t.gpu(0, 3), 900'000'000));
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.at(x).ps()), 2e9, 1.0);
  EXPECT_NEAR(static_cast<double>(rec.at(y).ps()), 2e9, 1.0);
  EXPECT_NEAR(static_cast<double>(rec.at(z).ps()), 1e9, 1.0);
}

TEST(FlowBackend, TwoGpusSendingToOneShareItsIngressPort) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(1, 4, 1));
  FlowBackend net(t);
  Recorder rec;
  const TransferId x = rec.start(net, transfer(t.gpu(0, 1), t.gpu(0, 0), 900'000'000));
  const TransferId y = rec.start(net, transfer(t.gpu(0, 2), t.gpu(0, 0), 450'000'000));
  run_to_idle(net);
  // Both at 450 GB/s until y is done at 1 ms; x then has 0.45 GB left at 900 GB/s.
  EXPECT_NEAR(static_cast<double>(rec.at(y).ps()), 1e9, 1.0);
  EXPECT_NEAR(static_cast<double>(rec.at(x).ps()), 1.5e9, 1.0);
}

TEST(FlowBackend, MfabricOcsGpuGoesThroughAProxyGpuUntilACircuitExists) {
  Topology t = fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));
  const auto ch = net.channels_of(id);
  ASSERT_EQ(ch.size(), 8u);
  EXPECT_EQ(link_of_channel(ch[0]), link_between(t, t.gpu(0, 5), t.nvswitch(0)));
  EXPECT_EQ(link_of_channel(ch.back()), link_between(t, t.gpu(1, 5), t.nvswitch(1)));
  run_to_idle(net);
  // The NIC (100G) is the bottleneck; the two cables give 2 us.
  EXPECT_NEAR(static_cast<double>(rec.at(id).ps()), 82.0 * kUs, 1.0);

  // A circuit between the two NIC 5s: at the NICs' rate, with the latency of both fibres to the
  // OCS (2 x 1 us); its id follows the topology's links.
  const fabric::LinkId circuit = net.connect(t.nic(0, 5), t.nic(1, 5));
  EXPECT_EQ(static_cast<std::size_t>(circuit), t.links().size());
  const TransferId direct = rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));
  const auto ch2 = net.channels_of(direct);
  ASSERT_EQ(ch2.size(), 3u);
  EXPECT_EQ(link_of_channel(ch2[1]), circuit);
  const Time started = net.now();
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>((rec.at(direct) - started).ps()), 82.0 * kUs, 1.0);
}

TEST(FlowBackend, ProxiedGpusShareTheEpsNics) {
  // GPUs 2-7 have OCS NICs without circuits: their traffic goes through NICs 0 and 1 (200G).
  const Topology t = fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  Recorder rec;
  for (int k = 2; k < 8; ++k) {
    rec.start(net, transfer(t.gpu(0, k), t.gpu(1, k), 1'000'000, static_cast<std::uint64_t>(k)));
  }
  run_to_idle(net);
  const auto& stats = net.channel_stats();
  double eps_bytes = 0;
  for (int j = 0; j < 2; ++j) {
    eps_bytes +=
        stats[static_cast<std::size_t>(channel_of(t, cable_of(t, t.nic(0, j)), t.nic(0, j)))].bytes;
  }
  EXPECT_NEAR(eps_bytes, 6e6, 1.0);
}

TEST(FlowBackend, LinkDownMidTransferReroutesOverAnotherSpine) {
  const Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(8, 1, 1));
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(7, 0), 1'250'000));  // 100 us
  net.advance(Time::microseconds(40));
  const auto before = net.channels_of(id);
  ASSERT_EQ(before.size(), 6u);
  const fabric::LinkId uplink = link_of_channel(before[2]);  // leaf -> spine
  net.set_link_rate(uplink, Rate::gbps(0));
  const auto after = net.channels_of(id);
  ASSERT_EQ(after.size(), 6u);
  for (ChannelId c : after)
    EXPECT_NE(link_of_channel(c), uplink);
  EXPECT_EQ(net.solver_stats().rerouted, 1);
  EXPECT_DOUBLE_EQ(net.rate_of(id)->gbps(), 100.0);
  run_to_idle(net);
  // The other spine is as short and as fast: nothing is lost. 4 cables = 4 us.
  EXPECT_EQ(rec.at(id).ps(), 104 * kUs);
}

TEST(FlowBackend, LinkDownOnTheOnlyPathStallsUntilItComesBack) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 100 us
  net.advance(Time::microseconds(30));
  const fabric::LinkId cable = cable_of(t, t.nic(0, 0));
  net.set_link_rate(cable, Rate::gbps(0));
  // Stalled: still active, no event to wait for.
  EXPECT_FALSE(net.next_event_time().has_value());
  EXPECT_EQ(net.active_transfers(), 1u);
  EXPECT_DOUBLE_EQ(net.rate_of(id)->bps(), 0.0);
  EXPECT_EQ(net.solver_stats().rerouted, 0);
  net.advance(Time::microseconds(80));
  net.set_link_rate(cable, Rate::gbps(100));
  run_to_idle(net);
  // 30 us before, 50 us down, 70 us after, then 2 us of latency.
  EXPECT_EQ(rec.at(id).ps(), 152 * kUs);
}

TEST(FlowBackend, TransferStartedWhileItsOnlyPathIsDownWaitsForIt) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const fabric::LinkId cable = cable_of(t, t.nic(1, 0));
  net.set_link_rate(cable, Rate::gbps(0));
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));
  EXPECT_FALSE(net.next_event_time().has_value());
  net.advance(Time::microseconds(10));
  net.set_link_rate(cable, Rate::gbps(100));
  run_to_idle(net);
  EXPECT_EQ(rec.at(id).ps(), 112 * kUs);
}

TEST(FlowBackend, LinkRateChangeMidTransfer) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 10 Mb
  net.advance(Time::microseconds(50));
  net.set_link_rate(cable_of(t, t.nic(0, 0)), Rate::gbps(50));
  run_to_idle(net);
  // 5 Mb left at 50G = 100 us.
  EXPECT_EQ(rec.at(id).ps(), 152 * kUs);
}

TEST(FlowBackend, SlowerPcieBecomesTheBottleneck) {
  // The PCIe link normally runs at the NIC's rate and never limits anything; slowed below the
  // cable, it must.
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 10 Mb
  const auto path = net.channels_of(id);
  ASSERT_EQ(path.size(), 4u);
  const fabric::LinkId pcie = link_between(t, t.gpu(0, 0), t.nic(0, 0));
  EXPECT_EQ(link_of_channel(path.front()), pcie);
  net.advance(Time::microseconds(50));
  net.set_link_rate(pcie, Rate::gbps(50));
  EXPECT_DOUBLE_EQ(net.rate_of(id)->gbps(), 50.0);
  EXPECT_EQ(net.channels_of(id), path);
  run_to_idle(net);
  // 5 Mb left at 50G = 100 us.
  EXPECT_EQ(rec.at(id).ps(), 152 * kUs);
  const auto& stats = net.channel_stats();
  const auto out = static_cast<std::size_t>(path.front());
  EXPECT_NEAR(stats[out].bytes, 1.25e6, 1e-3);
  EXPECT_EQ(stats[out].busy.ps(), 150 * kUs);
  EXPECT_NEAR(stats[static_cast<std::size_t>(path.back())].bytes, 1.25e6, 1e-3);
}

TEST(FlowBackend, CircuitAddedAtABusyNicSharesItsPcie) {
  Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId a = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 10 Mb
  net.advance(Time::microseconds(20));
  // A direct NIC-NIC circuit: new transfers take it (1 network link instead of 2), and share the
  // GPUs' PCIe links with the transfer still on the leaf.
  t.add_link(t.nic(0, 0), t.nic(1, 0), Rate::gbps(100), Time::microseconds(1), LinkKind::Cable);
  const TransferId b = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 250'000));  // 2 Mb
  EXPECT_EQ(net.channels_of(b).size(), 3u);
  EXPECT_EQ(net.channels_of(a).size(), 4u);
  EXPECT_DOUBLE_EQ(net.rate_of(a)->gbps(), 50.0);
  EXPECT_DOUBLE_EQ(net.rate_of(b)->gbps(), 50.0);
  run_to_idle(net);
  EXPECT_EQ(rec.at(b).ps(), 61 * kUs);   // 20 + 2 Mb / 50G, 1 us circuit
  EXPECT_EQ(rec.at(a).ps(), 122 * kUs);  // 6 Mb left at 60 us, at 100G
  const auto& stats = net.channel_stats();
  const auto pcie = static_cast<std::size_t>(
      channel_of(t, link_between(t, t.gpu(0, 0), t.nic(0, 0)), t.gpu(0, 0)));
  EXPECT_NEAR(stats[pcie].bytes, 1.5e6, 1e-3);
  EXPECT_EQ(stats[pcie].busy.ps(), 120 * kUs);
  const auto cable = static_cast<std::size_t>(channel_of(t, cable_of(t, t.nic(0, 0)), t.nic(0, 0)));
  EXPECT_NEAR(stats[cable].bytes, 1.25e6, 1e-3);
}

TEST(FlowBackend, LatencyHopsMultiplyThePathLatency) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId ring = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000, 0, 3));
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.at(ring).ps()), 80.0 * kUs + 3 * 2.0 * kUs, 1.0);
  FlowBackend net0(t);
  Recorder rec0;
  const TransferId none = rec0.start(net0, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000, 0, 0));
  run_to_idle(net0);
  EXPECT_NEAR(static_cast<double>(rec0.at(none).ps()), 80.0 * kUs, 1.0);
}

TEST(FlowBackend, ZeroByteTransferCompletesAfterTheLatencyAndTakesNoBandwidth) {
  const Topology t = two_hosts(2);
  FlowBackend net(t);
  Recorder rec;
  const TransferId big = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000));
  const TransferId empty = rec.start(net, transfer(t.gpu(0, 1), t.gpu(1, 1), 0, 0, 2));
  EXPECT_DOUBLE_EQ(net.rate_of(big)->gbps(), 100.0);
  EXPECT_EQ(net.next_event_time(), Time::microseconds(4));
  run_to_idle(net);
  EXPECT_EQ(rec.at(empty).ps(), 4 * kUs);
  EXPECT_NEAR(static_cast<double>(rec.at(big).ps()), 82.0 * kUs, 1.0);
  // To itself: nothing crosses the fabric, done at once.
  const TransferId self = rec.start(net, transfer(t.gpu(0, 0), t.gpu(0, 0), 5000));
  EXPECT_EQ(net.next_event_time(), net.now());
  run_to_idle(net);
  EXPECT_EQ(rec.at(self), rec.at(big));
}

TEST(FlowBackend, ChannelStatsCountBytesAndBusyTime) {
  const Topology t = two_hosts(2);
  FlowBackend net(t);
  Recorder rec;
  const TransferId a = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));
  const auto path_a = net.channels_of(a);
  net.advance(Time::microseconds(20));
  const TransferId b = rec.start(net, transfer(t.gpu(0, 1), t.gpu(1, 1), 250'000));
  const auto path_b = net.channels_of(b);
  run_to_idle(net);
  const auto& stats = net.channel_stats();
  ASSERT_EQ(stats.size(), 2 * t.links().size());
  // a's own PCIe links: busy 0-120 us; the shared cables carry both.
  const auto pcie_a = static_cast<std::size_t>(path_a.front());
  EXPECT_NEAR(stats[pcie_a].bytes, 1.25e6, 1e-3);
  EXPECT_EQ(stats[pcie_a].busy.ps(), 120 * kUs);
  const auto pcie_b = static_cast<std::size_t>(path_b.front());
  EXPECT_NEAR(stats[pcie_b].bytes, 2.5e5, 1e-3);
  EXPECT_EQ(stats[pcie_b].busy.ps(), 40 * kUs);
  const auto shared =
      static_cast<std::size_t>(channel_of(t, cable_of(t, t.nic(0, 0)), t.nic(0, 0)));
  EXPECT_NEAR(stats[shared].bytes, 1.5e6, 1e-3);
  EXPECT_EQ(stats[shared].busy.ps(), 120 * kUs);
  // Nothing went the other way.
  EXPECT_EQ(stats[static_cast<std::size_t>(shared ^ 1)].bytes, 0.0);
  double total = 0;
  for (const auto& s : stats)
    total += s.bytes;
  EXPECT_NEAR(total, 4 * 1.5e6, 1e-2);  // PCIe, cable, cable, PCIe for each byte
}

TEST(FlowBackend, SimultaneousStartsAreOneRecomputation) {
  const Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(8, 2, 2));
  FlowBackend net(t);
  Recorder rec;
  int started = 0;
  for (int s = 0; s < 8; ++s) {
    for (int d = 0; d < 8; ++d) {
      if (s == d) continue;
      rec.start(net,
                transfer(t.gpu(s, 0), t.gpu(d, 1), 100'000, static_cast<std::uint64_t>(s * 8 + d)));
      ++started;
    }
  }
  ASSERT_TRUE(net.next_event_time().has_value());
  EXPECT_EQ(net.solver_stats().recomputations, 1);
  EXPECT_EQ(net.events_processed(), started + 1);
  run_to_idle(net);
  EXPECT_EQ(net.events_processed(), 2 * started + net.solver_stats().recomputations);
}

TEST(FlowBackend, CallbacksMayStartTransfers) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  std::vector<Time> done;
  std::function<void(TransferId, Time)> again = [&](TransferId, Time at) {
    done.push_back(at);
    if (done.size() < 3) net.start(transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000), again);
  };
  net.start(transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000), again);
  run_to_idle(net);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_NEAR(static_cast<double>(done[2].ps()), 3 * 82.0 * kUs, 3.0);
}

// Random transfers at random times; now and then a switch uplink or a PCIe link is slowed down
// or taken down and, with `circuits`, a NIC-NIC circuit is added between random OCS NICs.
std::vector<Time> random_run(Topology& t, std::uint64_t seed, bool check_max_min,
                             bool circuits = false) {
  FlowBackend net(t);
  Recorder rec;
  Rng rng(seed);
  std::map<fabric::LinkId, double> changed;  // links whose rate the run changed
  const int gpus = t.cluster().servers * t.cluster().gpus_per_server;
  auto gpu = [&](int g) {
    return t.gpu(g / t.cluster().gpus_per_server, g % t.cluster().gpus_per_server);
  };
  std::vector<TransferId> ids;
  std::vector<fabric::LinkId> perturb;
  std::vector<NodeId> ocs_nics;
  std::vector<fabric::LinkId> up;  // circuits
  for (std::size_t l = 0; l < t.links().size(); ++l) {
    const auto& k = t.links()[l];
    const bool uplink = k.kind == LinkKind::Cable && t.node(k.a).kind == NodeKind::Switch &&
                        t.node(k.b).kind == NodeKind::Switch;
    if (uplink || k.kind == LinkKind::Pcie) perturb.push_back(static_cast<fabric::LinkId>(l));
  }
  for (std::size_t v = 0; v < t.nodes().size(); ++v) {
    if (t.nodes()[v].role == fabric::NicRole::Ocs) ocs_nics.push_back(static_cast<NodeId>(v));
  }
  for (int round = 0; round < 40; ++round) {
    if (circuits && round % 3 == 1 && ocs_nics.size() >= 2) {
      const NodeId a = ocs_nics[rng.below(ocs_nics.size())];
      const NodeId b = ocs_nics[rng.below(ocs_nics.size())];
      if (t.node(a).server != t.node(b).server && t.node(a).group == t.node(b).group &&
          net.links().circuit_at(a) < 0 && net.links().circuit_at(b) < 0) {
        up.push_back(net.connect(a, b));
      }
    }
    // Now and then a circuit is torn down (its transfers pause) and, later, the paused
    // transfers resume on whatever is up.
    if (circuits && round % 7 == 4 && !up.empty()) {
      const std::size_t i = rng.below(up.size());
      net.disconnect(up[i]);
      up.erase(up.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (circuits && round % 7 == 6) net.resume_paused();
    const int n = 1 + static_cast<int>(rng.uniform() * 12);
    for (int i = 0; i < n; ++i) {
      const int s = static_cast<int>(rng.uniform() * gpus);
      const int d = static_cast<int>(rng.uniform() * gpus);
      const auto bytes = static_cast<std::int64_t>(1 + rng.uniform() * 2e6);
      ids.push_back(rec.start(
          net, transfer(gpu(s), gpu(d), bytes, static_cast<std::uint64_t>(rng.uniform() * 1e9))));
    }
    if (round % 4 == 3) {
      const fabric::LinkId l = perturb[rng.below(perturb.size())];
      const double r = round % 12 == 3 ? 0.0 : 40e9;
      net.set_link_rate(l, Rate::bits_per_second(r));
      changed[l] = r;
    }
    if (check_max_min) {
      const LinkTable& links = net.links();
      std::vector<double> cap(2 * links.size());
      for (std::size_t l = 0; l < links.size(); ++l) {
        const auto id = static_cast<fabric::LinkId>(l);
        const auto it = changed.find(id);
        cap[2 * l] = cap[2 * l + 1] = it != changed.end() ? it->second : links.link(id).rate.bps();
      }
      std::map<TransferId, std::vector<ChannelId>> paths;
      std::map<TransferId, double> actual;
      for (TransferId id : ids) {
        if (const auto r = net.rate_of(id)) {
          paths[id] = net.channels_of(id);
          actual[id] = r->bps();
        }
      }
      const auto want = reference_max_min(paths, cap);
      for (const auto& [id, r] : actual) {
        EXPECT_NEAR(r, want.at(id), 1e-6 * std::max(1.0, want.at(id))) << "transfer " << id;
      }
    }
    net.advance(net.now() + Time::microseconds(static_cast<std::int64_t>(1 + rng.uniform() * 30)));
  }
  for (const auto& [l, r] : changed)
    net.set_link_rate(l, t.link(l).rate);
  net.resume_paused();
  run_to_idle(net);
  EXPECT_EQ(net.active_transfers(), 0u);
  // Nothing lost: every transfer and byte started was delivered, across reconfigurations.
  const TransferTotals totals = net.totals();
  EXPECT_EQ(totals.delivered, totals.started);
  EXPECT_EQ(totals.bytes_delivered, totals.bytes_sent);
  EXPECT_EQ(totals.started, static_cast<std::int64_t>(ids.size()));
  std::vector<Time> out;
  for (TransferId id : ids)
    out.push_back(rec.at(id));
  return out;
}

TEST(FlowBackend, RatesAreMaxMinFairAfterEveryChange) {
  // Oversubscribed 3:1 so that uplinks are bottlenecks as well as NICs.
  Topology t = fabric::build_fabric("fat-tree:radix=8,oversubscription=3", cluster(12, 2, 2));
  random_run(t, 11, true);
  random_run(t, 12, true);
}

TEST(FlowBackend, RatesAreMaxMinFairWithProxiesAndCircuits) {
  Topology t = fabric::build_fabric("mfabric:alpha=2,region=4,radix=8", cluster(8, 4, 4));
  random_run(t, 21, true, true);
}

TEST(FlowBackend, SameInputsGiveIdenticalCompletionTimes) {
  Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(16, 2, 2));
  const auto a = random_run(t, 5, false);
  const auto b = random_run(t, 5, false);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.empty());
}

TEST(FlowBackend, NoRouteIsAnErrorNamingBothGpus) {
  const Topology t = fabric::build_fabric("topoopt", cluster(2, 2, 2));
  FlowBackend net(t);
  try {
    net.start(transfer(t.gpu(0, 1), t.gpu(1, 0), 1000), nullptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("s0.gpu1"), std::string::npos) << what;
    EXPECT_NE(what.find("s1.gpu0"), std::string::npos) << what;
  }
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_FALSE(net.next_event_time().has_value());
}

TEST(FlowBackend, RejectsBadArguments) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  EXPECT_THROW(net.start(transfer(t.gpu(0, 0), t.gpu(1, 0), -1), nullptr), Error);
  EXPECT_THROW(net.set_link_rate(static_cast<fabric::LinkId>(t.links().size()), Rate::gbps(1)),
               Error);
  EXPECT_THROW(net.set_link_rate(0, Rate::gbps(-1)), Error);
  net.advance(Time::microseconds(5));
  EXPECT_THROW(net.advance(Time::microseconds(1)), std::logic_error);
}

TEST(FlowBackend, StalledTransferNamesTheDownLinkOnItsRoute) {
  const Topology t = two_hosts();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'250'000));  // 100 us
  EXPECT_TRUE(net.stalled_transfers(10).empty());
  net.advance(Time::microseconds(30));
  const fabric::LinkId cable = cable_of(t, t.nic(1, 0));
  net.set_link_rate(cable, Rate::gbps(0));
  net.advance(Time::microseconds(50));
  const std::vector<StalledTransfer> stalled = net.stalled_transfers(10);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].id, id);
  EXPECT_EQ(stalled[0].why, StalledTransfer::Why::LinkDown);
  EXPECT_EQ(stalled[0].down_link, cable);
  EXPECT_EQ(stalled[0].src, t.gpu(0, 0));
  EXPECT_EQ(stalled[0].dst, t.gpu(1, 0));
  // 30 us at 100G moved 375,000 bytes; nothing since.
  EXPECT_EQ(stalled[0].remaining.count(), 875'000);
  EXPECT_TRUE(net.stalled_transfers(0).empty());
}

TEST(FlowBackend, TransferEndingPastTheClockHasNoEventAndIsReported) {
  // 2e15 bytes at 1 Mbps: 1.6e10 s, far past 2^63 ps (about 9.2e6 s). The drain time must not
  // overflow into a bogus (or negative) event time.
  const Topology t = fabric::build_fabric(
      "fat-tree:radix=4", cluster(2, 1, 1, fabric::kMinLinkRate, Time::microseconds(1)));
  FlowBackend net(t);
  Recorder rec;
  rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 2'000'000'000'000'000));
  EXPECT_FALSE(net.next_event_time().has_value());
  const std::vector<StalledTransfer> stalled = net.stalled_transfers(10);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].why, StalledTransfer::Why::PastTimeRange);
  EXPECT_DOUBLE_EQ(stalled[0].rate.bps(), 1e6);
  EXPECT_EQ(stalled[0].down_link, -1);
}

}  // namespace flow_backend_test
}  // namespace mfabric::net
