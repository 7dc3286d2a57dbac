// Host-based forwarding over patch-panel circuits (TopoOpt): routes through intermediate
// servers, their channels, ECMP over paths and parallel circuits, and timing on the flow backend
// (docs/network.md, "Forwarding over circuits").
#include "net/circuit_forwarding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net/router.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace {

using fabric::LinkId;
using fabric::NodeId;
using fabric::Topology;
using testing::cluster;
using testing::link_between;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

// The nodes a route visits after `src`, by name (circuits resolved through the table).
std::vector<std::string> hops(const Topology& t, const LinkTable& links, NodeId src,
                              const Route& r) {
  std::vector<std::string> out;
  NodeId at = src;
  for (ChannelId c : r.channels) {
    const fabric::Link& l = links.link(link_of_channel(c));
    EXPECT_EQ(c % 2 == 0 ? l.a : l.b, at) << "route is not contiguous";
    at = c % 2 == 0 ? l.b : l.a;
    out.push_back(t.name(at));
  }
  return out;
}

using Names = std::vector<std::string>;

// Connects NIC na of server a to NIC nb of server b and tells the router.
LinkId connect(const Topology& t, LinkTable& links, Router& r, int a, int na, int b, int nb) {
  const LinkId c = links.connect(t.nic(a, na), t.nic(b, nb));
  r.set_link_up(c, true);
  return c;
}

// 4 servers x 2 GPUs x 2 NICs (NIC j on GPU j) on a patch panel, in a ring of circuits: NIC 1 of
// server i to NIC 0 of server i + 1.
struct Ring {
  Topology t = fabric::build_fabric("topoopt", cluster(4, 2, 2));
  LinkTable links{t};
  Router r{links};
  std::vector<LinkId> circuits;
  Ring() {
    for (int i = 0; i < 4; ++i)
      circuits.push_back(connect(t, links, r, i, 1, (i + 1) % 4, 0));
  }
};

TEST(CircuitForwarding, RingRoutesTwoHopsThroughEitherNeighbour) {
  Ring ring;
  const Topology& t = ring.t;
  Route route;
  // s0.gpu0's own NIC 0 goes to s3, NIC 1 (on GPU 1, a proxy) to s1.
  const Names via_s3{"s0.nic0", "s3.nic1", "s3.gpu1", "s3.nvswitch", "s3.gpu0",
                     "s3.nic0", "s2.nic1", "s2.gpu1", "s2.nvswitch", "s2.gpu0"};
  const Names via_s1{"s0.nvswitch", "s0.gpu1", "s0.nic1", "s1.nic0", "s1.gpu0",
                     "s1.nvswitch", "s1.gpu1", "s1.nic1", "s2.nic0", "s2.gpu0"};
  std::set<Names> seen;
  for (std::uint64_t h = 0; h < 64; ++h) {
    ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), h, route));
    const Names path = hops(t, ring.links, t.gpu(0, 0), route);
    EXPECT_TRUE(path == via_s1 || path == via_s3) << ::testing::PrintToString(path);
    seen.insert(path);
    // One proxy (at the source via s1, at the destination via s3), two circuits.
    EXPECT_EQ(route.cost, (RouteCost{1, 2}));
    // Each circuit: both fibres to the panel, 1 us each; PCIe and NvLink have none.
    EXPECT_EQ(route.latency, Time::microseconds(4));
  }
  EXPECT_EQ(seen.size(), 2u);  // the flow hash spreads over both paths
}

TEST(CircuitForwarding, RouteCrossesTheIntermediateServersPcieAndNvLinkChannels) {
  Ring ring;
  const Topology& t = ring.t;
  Route route;
  std::uint64_t h = 0;
  for (;; ++h) {  // a hash that goes through s1
    ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), h, route));
    if (hops(t, ring.links, t.gpu(0, 0), route)[3] == "s1.nic0") break;
  }
  const std::vector<ChannelId> expected{
      channel_of(t, link_between(t, t.gpu(0, 0), t.nvswitch(0)), t.gpu(0, 0)),
      channel_of(t, link_between(t, t.gpu(0, 1), t.nvswitch(0)), t.nvswitch(0)),
      channel_of(t, link_between(t, t.gpu(0, 1), t.nic(0, 1)), t.gpu(0, 1)),
      channel_of(ring.links, ring.circuits[0], t.nic(0, 1)),
      // s1: in-NIC -> PCIe -> GPU 0 -> NvLink -> NVSwitch -> NvLink -> GPU 1 -> PCIe -> out-NIC
      channel_of(t, link_between(t, t.gpu(1, 0), t.nic(1, 0)), t.nic(1, 0)),
      channel_of(t, link_between(t, t.gpu(1, 0), t.nvswitch(1)), t.gpu(1, 0)),
      channel_of(t, link_between(t, t.gpu(1, 1), t.nvswitch(1)), t.nvswitch(1)),
      channel_of(t, link_between(t, t.gpu(1, 1), t.nic(1, 1)), t.gpu(1, 1)),
      channel_of(ring.links, ring.circuits[1], t.nic(1, 1)),
      channel_of(t, link_between(t, t.gpu(2, 0), t.nic(2, 0)), t.nic(2, 0)),
  };
  EXPECT_EQ(route.channels, expected);
  // The same hash gives the same route, from another router too.
  Router again(ring.links);
  Route route2;
  ASSERT_TRUE(again.find(t.gpu(0, 0), t.gpu(2, 0), h, route2));
  EXPECT_EQ(route2.channels, route.channels);
  ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), h, route2));
  EXPECT_EQ(route2.channels, route.channels);
}

TEST(CircuitForwarding, DirectCircuitsRouteAsBefore) {
  Ring ring;
  const Topology& t = ring.t;
  Route route;
  ASSERT_TRUE(ring.r.find(t.gpu(0, 1), t.gpu(1, 0), 5, route));
  EXPECT_EQ(hops(t, ring.links, t.gpu(0, 1), route), (Names{"s0.nic1", "s1.nic0", "s1.gpu0"}));
  EXPECT_EQ(route.cost, (RouteCost{0, 1}));
  EXPECT_EQ(route.latency, Time::microseconds(2));
  ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(1, 1), 5, route));
  EXPECT_EQ(
      hops(t, ring.links, t.gpu(0, 0), route),
      (Names{"s0.nvswitch", "s0.gpu1", "s0.nic1", "s1.nic0", "s1.gpu0", "s1.nvswitch", "s1.gpu1"}));
  EXPECT_EQ(route.cost, (RouteCost{2, 1}));
}

TEST(CircuitForwarding, ParallelCircuitsSpreadOverHashesOwnNicPreferred) {
  // s0 = s1 = s2: two parallel circuits on each side of s1 (4 NICs, NIC j on GPU j).
  const Topology t = fabric::build_fabric("topoopt", cluster(3, 4, 4));
  LinkTable links(t);
  Router r(links);
  const LinkId a0 = connect(t, links, r, 0, 0, 1, 0);
  const LinkId a1 = connect(t, links, r, 0, 1, 1, 1);
  const LinkId b0 = connect(t, links, r, 1, 2, 2, 0);
  const LinkId b1 = connect(t, links, r, 1, 3, 2, 1);
  Route route;
  std::set<LinkId> first, last;
  for (std::uint64_t h = 0; h < 64; ++h) {
    // GPU 2's NICs have no circuits: both parallel circuits at each end.
    ASSERT_TRUE(r.find(t.gpu(0, 2), t.gpu(2, 2), h, route));
    std::vector<LinkId> crossed;
    for (ChannelId c : route.channels) {
      if (links.is_circuit(link_of_channel(c))) crossed.push_back(link_of_channel(c));
    }
    ASSERT_EQ(crossed.size(), 2u);
    first.insert(crossed[0]);
    last.insert(crossed[1]);
    EXPECT_EQ(route.cost, (RouteCost{2, 2}));
    // GPU 0 and GPU 1 have one each: their own NIC's circuit is always taken.
    ASSERT_TRUE(r.find(t.gpu(0, 1), t.gpu(2, 0), h, route));
    EXPECT_EQ(link_of_channel(route.channels[1]), a1);
    EXPECT_EQ(link_of_channel(route.channels[route.channels.size() - 2]), b0);
    EXPECT_EQ(route.cost, (RouteCost{0, 2}));
  }
  EXPECT_EQ(first, (std::set<LinkId>{a0, a1}));
  EXPECT_EQ(last, (std::set<LinkId>{b0, b1}));
}

TEST(CircuitForwarding, AGpuOnBothNicsForwardsWithoutTheNvSwitch) {
  // 1 GPU and 2 NICs per server: both NICs hang off GPU 0.
  const Topology t = fabric::build_fabric("topoopt", cluster(3, 1, 2));
  LinkTable links(t);
  Router r(links);
  connect(t, links, r, 0, 0, 1, 0);
  connect(t, links, r, 1, 1, 2, 0);
  Route route;
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(2, 0), 0, route));
  EXPECT_EQ(hops(t, links, t.gpu(0, 0), route),
            (Names{"s0.nic0", "s1.nic0", "s1.gpu0", "s1.nic1", "s2.nic0", "s2.gpu0"}));
  EXPECT_EQ(route.cost, (RouteCost{0, 2}));
}

TEST(CircuitForwarding, GraphIsRebuiltLazilyWhenCircuitsChange) {
  Ring ring;
  const Topology& t = ring.t;
  ASSERT_NE(ring.r.forwarding(), nullptr);
  Route route;
  ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), 0, route));
  ASSERT_TRUE(ring.r.find(t.gpu(1, 0), t.gpu(3, 0), 0, route));
  EXPECT_EQ(ring.r.forwarding()->rebuilds(), 1);
  // The s0 - s1 circuit goes down: 0 -> 2 through s3 only, 0 -> 1 around the ring (3 circuits).
  ring.r.set_link_up(ring.circuits[0], false);
  for (std::uint64_t h = 0; h < 16; ++h) {
    ASSERT_TRUE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), h, route));
    EXPECT_EQ(hops(t, ring.links, t.gpu(0, 0), route)[1], "s3.nic1");
  }
  ASSERT_TRUE(ring.r.find(t.gpu(0, 1), t.gpu(1, 0), 0, route));
  EXPECT_EQ(route.cost.network_links, 3);
  EXPECT_EQ(ring.r.forwarding()->rebuilds(), 2);
  // Torn down for good: gone from the graph of all circuits too.
  ring.links.disconnect(ring.circuits[0]);
  ring.r.set_link_up(ring.circuits[3], false);
  ring.links.disconnect(ring.circuits[3]);
  EXPECT_FALSE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), 0, route));
  EXPECT_THROW(ring.r.route(t.gpu(0, 0), t.gpu(2, 0), 0, route), Error);
}

TEST(CircuitForwarding, RouteOverDownCircuitsWhenNothingElseExists) {
  Ring ring;
  const Topology& t = ring.t;
  ring.r.set_link_up(ring.circuits[0], false);
  ring.r.set_link_up(ring.circuits[3], false);
  Route route;
  EXPECT_FALSE(ring.r.find(t.gpu(0, 0), t.gpu(2, 0), 0, route));
  ring.r.route(t.gpu(0, 0), t.gpu(2, 0), 0, route);
  EXPECT_FALSE(route.up);
  EXPECT_EQ(route.cost.network_links, 2);
}

TEST(CircuitForwarding, NoPathOfCircuitsIsNoRoute) {
  // Two pairs: s0 - s1 and s2 - s3.
  const Topology t = fabric::build_fabric("topoopt", cluster(4, 2, 2));
  LinkTable links(t);
  Router r(links);
  connect(t, links, r, 0, 0, 1, 0);
  connect(t, links, r, 2, 0, 3, 0);
  Route route;
  EXPECT_FALSE(r.find(t.gpu(0, 0), t.gpu(2, 0), 0, route));
  try {
    r.route(t.gpu(0, 1), t.gpu(3, 1), 0, route);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("s0.gpu1"), std::string::npos) << what;
    EXPECT_NE(what.find("s3.gpu1"), std::string::npos) << what;
  }
  EXPECT_TRUE(r.find(t.gpu(0, 0), t.gpu(1, 1), 0, route));
}

TEST(CircuitForwarding, OnlyPatchPanelFabricsForward) {
  const Topology fat = fabric::build_fabric("fat-tree:radix=4", cluster(2, 2, 2));
  const Topology mf = fabric::build_fabric("mfabric:alpha=1,region=2,radix=8", cluster(2, 2, 2));
  const Topology panel = fabric::build_fabric("topoopt", cluster(2, 2, 2));
  EXPECT_EQ(Router(fat).forwarding(), nullptr);
  EXPECT_EQ(Router(mf).forwarding(), nullptr);
  const Router r(panel);
  ASSERT_NE(r.forwarding(), nullptr);
  EXPECT_TRUE(r.forwarding()->circuits_only(0));
  EXPECT_TRUE(r.forwarding()->circuits_only(1));
}

// --- On the flow backend ---

// 3 servers x 1 GPU x 2 NICs at 100G, 1 us fibres, in a line s0 - s1 - s2.
struct Line {
  Topology t = fabric::build_fabric("topoopt", cluster(3, 1, 2, Rate::gbps(100)));
  FlowBackend net{t};
  Line() {
    net.connect(t.nic(0, 0), t.nic(1, 0));
    net.connect(t.nic(1, 1), t.nic(2, 0));
  }
};

TEST(CircuitForwardingTiming, TwoHopsOnAnIdleNetworkTakeSizeOverRatePlusBothCircuits) {
  Line line;
  Recorder rec;
  const TransferId id =
      rec.start(line.net, transfer(line.t.gpu(0, 0), line.t.gpu(2, 0), 1'000'000));
  run_to_idle(line.net);
  // 8 Mb at 100G = 80 us, plus 2 circuits x (2 fibres x 1 us).
  EXPECT_EQ(rec.at(id), Time::microseconds(84));
  EXPECT_EQ(line.net.totals().bytes_delivered, 1'000'000);
}

TEST(CircuitForwardingTiming, ForwardedTrafficSharesTheIntermediateServersCircuitAndPcie) {
  Line line;
  const Topology& t = line.t;
  Recorder rec;
  const TransferId forwarded = rec.start(line.net, transfer(t.gpu(0, 0), t.gpu(2, 0), 1'000'000));
  const TransferId local = rec.start(line.net, transfer(t.gpu(1, 0), t.gpu(2, 0), 1'000'000));
  // Both cross s1's PCIe to NIC 1 and the s1 - s2 circuit: 50G each, 160 us.
  std::vector<ChannelId> ch = line.net.channels_of(forwarded);
  const ChannelId pcie_out = channel_of(t, link_between(t, t.gpu(1, 0), t.nic(1, 1)), t.gpu(1, 0));
  EXPECT_NE(std::find(ch.begin(), ch.end(), pcie_out), ch.end());
  EXPECT_DOUBLE_EQ(line.net.rate_of(forwarded)->bps(), 50e9);
  EXPECT_DOUBLE_EQ(line.net.rate_of(local)->bps(), 50e9);
  run_to_idle(line.net);
  EXPECT_EQ(rec.at(forwarded), Time::microseconds(164));
  EXPECT_EQ(rec.at(local), Time::microseconds(162));
  const TransferTotals totals = line.net.totals();
  EXPECT_EQ(totals.delivered, totals.started);
  EXPECT_EQ(totals.bytes_delivered, totals.bytes_sent);
}

}  // namespace
}  // namespace mfabric::net
