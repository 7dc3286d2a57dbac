// Relaying through a third server over an OCS circuit when an end has no route over up links
// (docs/network.md, "Relaying"), and FlowBackend::reroute_down().
//
// The fabric: mFabric with 4 servers of 4 GPUs and 4 NICs at 100G, 1 us per cable; NICs 0-1 on
// the EPS (one leaf: radix 16 holds 8 hosts, so any two EPS NICs are 2 cables apart), NICs 2-3
// on the OCS, one region. GPU k hangs off NIC k. NVLink is 900 GB/s, never the bottleneck.
// A circuit has the latency of both fibres to the OCS: 2 us.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/rng.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net/router.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace {

using fabric::NodeId;
using fabric::Topology;
using testing::cable_of;
using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

constexpr std::int64_t kMegabyte = 1'000'000;  // 80 us at 100G

Topology relay_fabric() {
  return fabric::build_fabric("mfabric:alpha=2,region=4,radix=16", cluster(4, 4, 4));
}

// The nodes a route visits after `from`, by name (circuits resolved through `links`).
std::vector<std::string> visited(const LinkTable& links, NodeId from,
                                 const std::vector<ChannelId>& channels) {
  const Topology& t = links.topology();
  std::vector<std::string> out;
  NodeId at = from;
  for (ChannelId c : channels) {
    const fabric::Link& l = links.link(link_of_channel(c));
    EXPECT_EQ(c % 2 == 0 ? l.a : l.b, at) << "route is not contiguous";
    at = c % 2 == 0 ? l.b : l.a;
    out.push_back(t.name(at));
  }
  return out;
}

bool crosses(const std::vector<ChannelId>& channels, fabric::LinkId link) {
  return std::any_of(channels.begin(), channels.end(),
                     [&](ChannelId c) { return link_of_channel(c) == link; });
}

// Takes both EPS cables of a server down.
void cut_off_eps(Backend& net, const Topology& t, int server) {
  for (int j = 0; j < 2; ++j)
    net.set_link_rate(cable_of(t, t.nic(server, j)), Rate::gbps(0));
}

TEST(Relay, ACutOffSourceReachesAThirdServerThroughTheServerItHasACircuitTo) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  cut_off_eps(net, t, 0);
  const fabric::LinkId c = net.connect(t.nic(0, 2), t.nic(1, 2));
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 2), t.gpu(3, 0), kMegabyte));
  const std::vector<std::string> path = visited(net.links(), t.gpu(0, 2), net.channels_of(id));
  // Over the circuit into s1, across s1 from the in-NIC's GPU to a GPU on an EPS NIC, out over
  // s1's EPS NIC and the leaf to the destination's own NIC.
  ASSERT_EQ(path.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(path.begin(), path.begin() + 4),
            (std::vector<std::string>{"s0.nic2", "s1.nic2", "s1.gpu2", "s1.nvswitch"}));
  EXPECT_TRUE(path[4] == "s1.gpu0" || path[4] == "s1.gpu1") << path[4];
  EXPECT_TRUE(path[5] == "s1.nic0" || path[5] == "s1.nic1") << path[5];
  EXPECT_EQ(std::vector<std::string>(path.begin() + 6, path.end()),
            (std::vector<std::string>{"leaf0", "s3.nic0", "s3.gpu0"}));
  EXPECT_TRUE(crosses(net.channels_of(id), c));
  run_to_idle(net);
  // 1 MB at 100G (every link of the route is 100G or NVLink) = 80 us; latency: the circuit
  // (2 us) and two EPS cables (2 us).
  EXPECT_EQ(rec.at(id), Time::microseconds(84));
  EXPECT_EQ(net.totals().bytes_delivered, kMegabyte);
  EXPECT_EQ(net.router().relayed_routes(), 1);
}

TEST(Relay, ACutOffDestinationIsReachedThroughTheServerWithACircuitToIt) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  cut_off_eps(net, t, 3);
  net.connect(t.nic(3, 2), t.nic(1, 2));
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(3, 2), kMegabyte));
  const std::vector<std::string> path = visited(net.links(), t.gpu(0, 0), net.channels_of(id));
  ASSERT_EQ(path.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(path.begin(), path.begin() + 2),
            (std::vector<std::string>{"s0.nic0", "leaf0"}));
  EXPECT_TRUE(path[2] == "s1.nic0" || path[2] == "s1.nic1") << path[2];
  EXPECT_TRUE(path[3] == "s1.gpu0" || path[3] == "s1.gpu1") << path[3];
  EXPECT_EQ(std::vector<std::string>(path.begin() + 4, path.end()),
            (std::vector<std::string>{"s1.nvswitch", "s1.gpu2", "s1.nic2", "s3.nic2", "s3.gpu2"}));
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(84));
}

TEST(Relay, BothEndsCutOffTakeTwoRelays) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  cut_off_eps(net, t, 0);
  cut_off_eps(net, t, 3);
  net.connect(t.nic(0, 2), t.nic(1, 2));
  net.connect(t.nic(3, 2), t.nic(2, 2));
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 2), t.gpu(3, 2), kMegabyte));
  const std::vector<std::string> path = visited(net.links(), t.gpu(0, 2), net.channels_of(id));
  ASSERT_EQ(path.size(), 14u);
  EXPECT_EQ(path[1], "s1.nic2");
  EXPECT_TRUE(path[5] == "s1.nic0" || path[5] == "s1.nic1") << path[5];
  EXPECT_EQ(path[6], "leaf0");
  EXPECT_TRUE(path[7] == "s2.nic0" || path[7] == "s2.nic1") << path[7];
  EXPECT_EQ(path[9], "s2.nvswitch");
  EXPECT_EQ(std::vector<std::string>(path.end() - 4, path.end()),
            (std::vector<std::string>{"s2.gpu2", "s2.nic2", "s3.nic2", "s3.gpu2"}));
  run_to_idle(net);
  // Two circuits and two EPS cables: 6 us.
  EXPECT_EQ(rec.at(id), Time::microseconds(86));
}

TEST(Relay, AServerWithCircuitsToBothEndsIsOneRelay) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  cut_off_eps(net, t, 0);
  cut_off_eps(net, t, 3);
  net.connect(t.nic(0, 2), t.nic(1, 2));
  net.connect(t.nic(3, 3), t.nic(1, 3));
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 2), t.gpu(3, 3), kMegabyte));
  EXPECT_EQ(visited(net.links(), t.gpu(0, 2), net.channels_of(id)),
            (std::vector<std::string>{"s0.nic2", "s1.nic2", "s1.gpu2", "s1.nvswitch", "s1.gpu3",
                                      "s1.nic3", "s3.nic3", "s3.gpu3"}));
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(84));  // two circuits: 4 us
}

TEST(Relay, CostCountsRelayGpusAsProxiesAndEveryNetworkLink) {
  const Topology t = relay_fabric();
  LinkTable links(t);
  Router router(links);
  for (int j = 0; j < 2; ++j)
    router.set_link_up(cable_of(t, t.nic(0, j)), false);
  router.set_link_up(links.connect(t.nic(0, 2), t.nic(1, 2)), true);
  Route route;
  ASSERT_TRUE(router.find(t.gpu(0, 2), t.gpu(3, 0), 5, route));
  // Relay GPUs s1.gpu2 and s1.gpu0/1; the circuit and two EPS cables.
  EXPECT_EQ(route.cost, (RouteCost{2, 3}));
  EXPECT_EQ(route.latency, Time::microseconds(4));
  EXPECT_TRUE(route.up);
  // From a GPU whose own NIC holds no circuit: a proxy at the source as well.
  ASSERT_TRUE(router.find(t.gpu(0, 0), t.gpu(3, 0), 5, route));
  EXPECT_EQ(route.cost, (RouteCost{3, 3}));
  // With allow_down the route is today's stalled one, over the down EPS cable: never a relay.
  ASSERT_TRUE(router.find(t.gpu(0, 2), t.gpu(3, 0), 5, route, true));
  EXPECT_FALSE(route.up);
  EXPECT_EQ(route.cost, (RouteCost{1, 2}));
}

TEST(Relay, IsOnlyALastResort) {
  // The EPS is up: s0's OCS GPU goes through a proxy GPU and the EPS, as without the circuit,
  // never through the server its circuit joins.
  const Topology t = relay_fabric();
  LinkTable links(t);
  Router router(links);
  router.set_link_up(links.connect(t.nic(0, 2), t.nic(1, 2)), true);
  Route route;
  for (std::uint64_t hash = 0; hash < 16; ++hash) {
    ASSERT_TRUE(router.find(t.gpu(0, 2), t.gpu(3, 0), hash, route));
    EXPECT_EQ(route.cost, (RouteCost{1, 2}));
  }
  // One EPS cable down: the other EPS NIC, still no relay.
  router.set_link_up(cable_of(t, t.nic(0, 0)), false);
  ASSERT_TRUE(router.find(t.gpu(0, 0), t.gpu(3, 0), 1, route));
  EXPECT_EQ(route.cost, (RouteCost{1, 2}));
  EXPECT_EQ(router.relayed_routes(), 0);
}

TEST(Relay, TheFlowHashPicksAmongEquallyCheapRelaysDeterministically) {
  const Topology t = relay_fabric();
  LinkTable links(t);
  Router router(links);
  for (int j = 0; j < 2; ++j)
    router.set_link_up(cable_of(t, t.nic(0, j)), false);
  const fabric::LinkId to_s1 = links.connect(t.nic(0, 2), t.nic(1, 2));
  const fabric::LinkId to_s2 = links.connect(t.nic(0, 3), t.nic(2, 3));
  router.set_link_up(to_s1, true);
  router.set_link_up(to_s2, true);
  // s0.gpu0 reaches either circuit through a proxy GPU: both relays cost the same.
  std::set<fabric::LinkId> used;
  for (std::uint64_t hash = 0; hash < 32; ++hash) {
    Route a;
    Route b;
    ASSERT_TRUE(router.find(t.gpu(0, 0), t.gpu(3, 0), hash, a));
    ASSERT_TRUE(router.find(t.gpu(0, 0), t.gpu(3, 0), hash, b));
    EXPECT_EQ(a.channels, b.channels);
    EXPECT_EQ(a.cost, (RouteCost{3, 3}));
    EXPECT_NE(crosses(a.channels, to_s1), crosses(a.channels, to_s2));
    used.insert(crosses(a.channels, to_s1) ? to_s1 : to_s2);
  }
  EXPECT_EQ(used.size(), 2u);
  // From s0.gpu2 the circuit on its own NIC is cheaper (no proxy at the source): always s1.
  for (std::uint64_t hash = 0; hash < 32; ++hash) {
    Route r;
    ASSERT_TRUE(router.find(t.gpu(0, 2), t.gpu(3, 0), hash, r));
    EXPECT_TRUE(crosses(r.channels, to_s1));
  }
}

TEST(Relay, NoCircuitUpStallsUntilACircuitAndRerouteDown) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  cut_off_eps(net, t, 0);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 2), t.gpu(3, 0), kMegabyte));
  // No route over up links: stalled on its route over a down EPS cable.
  EXPECT_FALSE(net.next_event_time().has_value());
  ASSERT_EQ(net.stalled_transfers(4).size(), 1u);
  EXPECT_EQ(net.stalled_transfers(4)[0].why, StalledTransfer::Why::LinkDown);
  net.reroute_down();  // nothing is up for it yet: it stays
  EXPECT_FALSE(net.next_event_time().has_value());
  net.advance(Time::microseconds(100));
  const fabric::LinkId c = net.connect(t.nic(0, 2), t.nic(1, 2));
  EXPECT_FALSE(net.next_event_time().has_value());  // a circuit alone moves nothing
  net.reroute_down();
  EXPECT_TRUE(crosses(net.channels_of(id), c));
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(100 + 84));
  EXPECT_EQ(net.totals().delivered, net.totals().started);
  EXPECT_EQ(net.totals().bytes_delivered, kMegabyte);
}

class EpsCableFailsInFlight : public ::testing::Test {
 protected:
  // 1 MB from s0.gpu0 to s3.gpu0 over s0.nic0 (its own NIC, 2 cables, 82 us); s0.nic0's cable
  // fails at 40 us with 500 kB left. The only route left is through proxy GPU s0.gpu1 and NIC 1:
  // not of equal cost, so the transfer stalls.
  EpsCableFailsInFlight() : t(relay_fabric()), net(t) {
    id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(3, 0), kMegabyte));
    net.advance(Time::microseconds(40));
    cable = cable_of(t, t.nic(0, 0));
    EXPECT_TRUE(crosses(net.channels_of(id), cable));
    net.set_link_rate(cable, Rate::gbps(0));
  }
  const Topology t;
  FlowBackend net;
  Recorder rec;
  TransferId id = -1;
  fabric::LinkId cable = -1;
};

TEST_F(EpsCableFailsInFlight, WithoutRerouteDownItStalls) {
  EXPECT_FALSE(net.next_event_time().has_value());
  EXPECT_DOUBLE_EQ(net.rate_of(id)->bps(), 0.0);
  net.advance(Time::microseconds(100));
  const auto stalled = net.stalled_transfers(4);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].down_link, cable);
  EXPECT_EQ(stalled[0].remaining.count(), 500'000);
}

TEST_F(EpsCableFailsInFlight, RerouteDownMovesItToAProxyOnTheOtherEpsNic) {
  net.advance(Time::microseconds(100));
  net.reroute_down();
  EXPECT_EQ(visited(net.links(), t.gpu(0, 0), net.channels_of(id)),
            (std::vector<std::string>{"s0.nvswitch", "s0.gpu1", "s0.nic1", "leaf0", "s3.nic0",
                                      "s3.gpu0"}));
  EXPECT_EQ(net.solver_stats().rerouted, 1);
  run_to_idle(net);
  // 500 kB left at 100G from 100 us: 40 us, then two cables.
  EXPECT_EQ(rec.at(id), Time::microseconds(100 + 40 + 2));
  const TransferTotals totals = net.totals();
  EXPECT_EQ(totals.delivered, totals.started);
  EXPECT_EQ(totals.bytes_delivered, totals.bytes_sent);
  // The cable carried the first 500 kB, NIC 1's cable the rest.
  const auto& stats = net.channel_stats();
  EXPECT_NEAR(stats[static_cast<std::size_t>(channel_of(t, cable, t.nic(0, 0)))].bytes, 500'000, 1);
  const fabric::LinkId other = cable_of(t, t.nic(0, 1));
  EXPECT_NEAR(stats[static_cast<std::size_t>(channel_of(t, other, t.nic(0, 1)))].bytes, 500'000, 1);
}

TEST_F(EpsCableFailsInFlight, RerouteDownRightAtTheFailureLosesNoTime) {
  net.reroute_down();
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(40 + 40 + 2));
}

TEST_F(EpsCableFailsInFlight, BothEpsCablesDownItMovesToARelay) {
  net.set_link_rate(cable_of(t, t.nic(0, 1)), Rate::gbps(0));
  net.advance(Time::microseconds(60));
  const fabric::LinkId c = net.connect(t.nic(0, 3), t.nic(2, 3));
  net.reroute_down();
  EXPECT_TRUE(crosses(net.channels_of(id), c));
  run_to_idle(net);
  // 500 kB from 60 us; the circuit (2 us) and two cables from s2's EPS NIC.
  EXPECT_EQ(rec.at(id), Time::microseconds(60 + 40 + 4));
  EXPECT_EQ(net.totals().bytes_delivered, kMegabyte);
}

TEST_F(EpsCableFailsInFlight, TheCableBackMakesRerouteDownANoOp) {
  net.advance(Time::microseconds(100));
  net.set_link_rate(cable, Rate::gbps(100));  // back: the stalled transfer goes on where it was
  net.reroute_down();
  EXPECT_EQ(net.solver_stats().rerouted, 0);
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(100 + 40 + 2));
}

TEST(Relay, RerouteDownWithNothingDownMovesNothing) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 2), t.gpu(3, 2), kMegabyte));
  const auto before = net.channels_of(id);
  net.advance(Time::microseconds(10));
  net.reroute_down();
  EXPECT_EQ(net.channels_of(id), before);
  EXPECT_EQ(net.solver_stats().rerouted, 0);
  // The default of a backend without failures is a no-op too.
  struct Idle : Backend {
    TransferId start(const net::Transfer&, DoneCallback) override { return 0; }
    void set_link_rate(fabric::LinkId, Rate) override {}
    Time now() const override { return Time::zero(); }
    std::optional<Time> next_event_time() const override { return std::nullopt; }
    void advance(Time) override {}
  } idle;
  idle.reroute_down();
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(82));  // proxies at both ends, two EPS cables
}

// Random transfers while EPS cables and circuits fail and come back, with reroute_down() after
// every change: every transfer completes and no byte is lost.
TEST(Relay, RandomFailuresWithRerouteDownLoseNothing) {
  const Topology t = relay_fabric();
  FlowBackend net(t);
  Recorder rec;
  Rng rng(77);
  std::vector<fabric::LinkId> eps;
  for (int s = 0; s < 4; ++s) {
    for (int j = 0; j < 2; ++j)
      eps.push_back(cable_of(t, t.nic(s, j)));
  }
  std::vector<fabric::LinkId> circuits;
  for (int round = 0; round < 60; ++round) {
    for (int i = 0; i < 6; ++i) {
      const auto s = static_cast<int>(rng.below(4));
      const auto d = static_cast<int>(rng.below(4));
      rec.start(net,
                transfer(t.gpu(s, static_cast<int>(rng.below(4))),
                         t.gpu(d, static_cast<int>(rng.below(4))),
                         static_cast<std::int64_t>(1 + rng.below(2'000'000)), rng.below(1000)));
    }
    const fabric::LinkId l = eps[rng.below(eps.size())];
    net.set_link_rate(l, Rate::gbps(round % 3 == 0 ? 100 : 0));
    if (round % 4 == 1) {
      const int a = static_cast<int>(rng.below(4));
      const int b = (a + 1 + static_cast<int>(rng.below(3))) % 4;
      const NodeId na = t.nic(a, 2 + static_cast<int>(rng.below(2)));
      const NodeId nb = t.nic(b, 2 + static_cast<int>(rng.below(2)));
      if (net.links().circuit_at(na) < 0 && net.links().circuit_at(nb) < 0) {
        circuits.push_back(net.connect(na, nb));
      }
    }
    if (round % 9 == 5 && !circuits.empty()) {
      net.set_link_rate(circuits.front(), Rate::gbps(0));  // a failed circuit, not torn down
    }
    net.reroute_down();
    net.advance(net.now() + Time::microseconds(static_cast<std::int64_t>(1 + rng.below(40))));
  }
  for (fabric::LinkId l : eps)
    net.set_link_rate(l, Rate::gbps(100));
  for (fabric::LinkId c : circuits)
    net.set_link_rate(c, Rate::gbps(100));
  run_to_idle(net);
  EXPECT_EQ(net.active_transfers(), 0u);
  const TransferTotals totals = net.totals();
  EXPECT_EQ(totals.delivered, totals.started);
  EXPECT_EQ(totals.bytes_delivered, totals.bytes_sent);
  EXPECT_GT(net.router().relayed_routes(), 0);
}

}  // namespace
}  // namespace mfabric::net
