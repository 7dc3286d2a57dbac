#include "net/router.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.h"
#include "fabric/builders.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace {

using fabric::LinkKind;
using fabric::NodeId;
using fabric::NodeKind;
using fabric::Topology;
using testing::cluster;
using testing::link_between;

// The nodes a route visits after `src`, by name, for readable expectations.
// The nodes a route visits after src; `links` resolves circuit ids when given.
std::vector<std::string> hops(const Topology& t, NodeId src, const Route& r,
                              const LinkTable* links = nullptr) {
  std::vector<std::string> out;
  NodeId at = src;
  for (ChannelId c : r.channels) {
    const fabric::Link& l = links ? links->link(link_of_channel(c)) : t.link(link_of_channel(c));
    const NodeId from = c % 2 == 0 ? l.a : l.b;
    EXPECT_EQ(from, at) << "route is not contiguous";
    at = c % 2 == 0 ? l.b : l.a;
    out.push_back(t.name(at));
  }
  return out;
}

TEST(Router, IntraServerGoesThroughTheNvSwitchPorts) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 4, 4));
  Router r(t);
  Route route;
  ASSERT_TRUE(r.find(t.gpu(0, 1), t.gpu(0, 3), 7, route));
  EXPECT_EQ(hops(t, t.gpu(0, 1), route), (std::vector<std::string>{"s0.nvswitch", "s0.gpu3"}));
  EXPECT_EQ(route.channels[0],
            channel_of(t, link_between(t, t.gpu(0, 1), t.nvswitch(0)), t.gpu(0, 1)));
  EXPECT_EQ(route.channels[1],
            channel_of(t, link_between(t, t.gpu(0, 3), t.nvswitch(0)), t.nvswitch(0)));
  EXPECT_EQ(route.latency, Time::zero());
  EXPECT_EQ(route.cost, (RouteCost{0, 0}));
}

TEST(Router, SameLeafUsesOwnNicAndLeaf) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  Router r(t);
  Route route;
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(1, 0), 0, route));
  EXPECT_EQ(hops(t, t.gpu(0, 0), route),
            (std::vector<std::string>{"s0.nic0", "leaf0", "s1.nic0", "s1.gpu0"}));
  EXPECT_EQ(route.latency, Time::microseconds(2));  // two cables; PCIe has no latency
  EXPECT_EQ(route.cost, (RouteCost{0, 2}));
}

TEST(Router, EcmpSpreadsFlowHashesOverSpinesDeterministically) {
  // Radix 8: 4 hosts per leaf, 4 uplinks each, so 4 spines between the 2 leaves.
  const Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(8, 1, 1));
  ASSERT_EQ(t.tiers(), 2);
  Router r(t);
  Router again(t);
  Route route;
  Route route2;
  std::set<std::string> spines;
  for (std::uint64_t h = 0; h < 64; ++h) {
    ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(7, 0), h, route));
    const auto path = hops(t, t.gpu(0, 0), route);
    ASSERT_EQ(path.size(), 6u);  // nic, leaf, spine, leaf, nic, gpu
    EXPECT_EQ(path[2].rfind("spine", 0), 0u) << path[2];
    spines.insert(path[2]);
    EXPECT_EQ(route.cost, (RouteCost{0, 4}));
    ASSERT_TRUE(again.find(t.gpu(0, 0), t.gpu(7, 0), h, route2));
    EXPECT_EQ(route.channels, route2.channels);  // same hash, same path
  }
  EXPECT_EQ(spines.size(), 4u);
}

TEST(Router, DownLinkIsAvoidedAndTablesAreRebuilt) {
  const Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(8, 1, 1));
  Router r(t);
  Route route;
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(7, 0), 3, route));
  const fabric::LinkId up = link_of_channel(route.channels[2]);  // leaf -> spine
  r.set_link_up(up, false);
  for (std::uint64_t h = 0; h < 32; ++h) {
    ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(7, 0), h, route));
    for (ChannelId c : route.channels)
      EXPECT_NE(link_of_channel(c), up);
    EXPECT_EQ(route.cost, (RouteCost{0, 4}));
  }
  r.set_link_up(up, true);
  EXPECT_TRUE(r.link_up(up));
}

TEST(Router, ThreeTierPathsClimbToTheCore) {
  // Radix 4: 2 hosts per leaf, pods of 2 leaves; 16 hosts need 8 leaves, 4 pods, 3 tiers.
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(16, 1, 1));
  ASSERT_EQ(t.tiers(), 3);
  Router r(t);
  Route route;
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(15, 0), 1, route));
  const auto path = hops(t, t.gpu(0, 0), route);
  ASSERT_EQ(path.size(), 8u);
  EXPECT_EQ(path[3].rfind("core", 0), 0u) << path[3];
  EXPECT_EQ(route.cost, (RouteCost{0, 6}));
  EXPECT_EQ(route.latency, Time::microseconds(6));
}

TEST(Router, OcsNicFallsBackToProxyGpuOfTheSameServer) {
  // mFabric: NICs 0-1 on the EPS, 2-7 on the OCS. GPU 5's own NIC has no circuit yet.
  const Topology t = fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  LinkTable links(t);
  Router r(links);
  Route route;
  std::set<std::string> proxies;
  for (std::uint64_t h = 0; h < 32; ++h) {
    ASSERT_TRUE(r.find(t.gpu(0, 5), t.gpu(1, 5), h, route));
    const auto path = hops(t, t.gpu(0, 5), route, &links);
    ASSERT_EQ(path.size(), 8u);
    EXPECT_EQ(path[0], "s0.nvswitch");
    proxies.insert(path[1]);
    EXPECT_TRUE(path[1] == "s0.gpu0" || path[1] == "s0.gpu1") << path[1];
    EXPECT_EQ(path[3], "leaf0");
    EXPECT_EQ(path[6], "s1.nvswitch");
    EXPECT_EQ(path[7], "s1.gpu5");
    EXPECT_EQ(route.cost, (RouteCost{2, 2}));
  }
  EXPECT_EQ(proxies.size(), 2u);  // the flow hash spreads over both EPS NICs

  // A GPU with an EPS NIC uses it directly.
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(1, 1), 0, route));
  EXPECT_EQ(hops(t, t.gpu(0, 0), route),
            (std::vector<std::string>{"s0.nic0", "leaf0", "s1.nic1", "s1.gpu1"}));

  // A circuit between the two NIC 5s: one network link, no proxy; its latency is both fibres
  // to the OCS.
  r.set_link_up(links.connect(t.nic(0, 5), t.nic(1, 5)), true);
  ASSERT_TRUE(r.find(t.gpu(0, 5), t.gpu(1, 5), 0, route));
  EXPECT_EQ(hops(t, t.gpu(0, 5), route, &links),
            (std::vector<std::string>{"s0.nic5", "s1.nic5", "s1.gpu5"}));
  EXPECT_EQ(route.cost, (RouteCost{0, 1}));
  EXPECT_EQ(route.latency, Time::microseconds(2));
  // GPU 5 to GPU 6 of the other server: the circuit plus a proxy at the far end beats two
  // proxies over the EPS.
  ASSERT_TRUE(r.find(t.gpu(0, 5), t.gpu(1, 6), 0, route));
  EXPECT_EQ(hops(t, t.gpu(0, 5), route, &links),
            (std::vector<std::string>{"s0.nic5", "s1.nic5", "s1.gpu5", "s1.nvswitch", "s1.gpu6"}));
  EXPECT_EQ(route.cost, (RouteCost{1, 1}));
}

TEST(Router, TopoOptWithoutCircuitsHasNoRoute) {
  const Topology t = fabric::build_fabric("topoopt", cluster(2, 2, 2));
  Router r(t);
  Route route;
  EXPECT_FALSE(r.find(t.gpu(0, 0), t.gpu(1, 0), 0, route));
  try {
    r.route(t.gpu(0, 0), t.gpu(1, 1), 0, route);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("s0.gpu0"), std::string::npos) << what;
    EXPECT_NE(what.find("s1.gpu1"), std::string::npos) << what;
  }
  // Inside a server the NVSwitch still works.
  EXPECT_TRUE(r.find(t.gpu(0, 0), t.gpu(0, 1), 0, route));
}

TEST(Router, RejectsNodesThatAreNotGpus) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  Router r(t);
  Route route;
  EXPECT_THROW(r.find(t.nic(0, 0), t.gpu(1, 0), 0, route), Error);
  EXPECT_THROW(r.find(t.gpu(0, 0), 100000, 0, route), Error);
}

TEST(Router, RouteOverDownLinkWhenNothingElseExists) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  Router r(t);
  r.set_link_up(testing::cable_of(t, t.nic(0, 0)), false);
  Route route;
  EXPECT_FALSE(r.find(t.gpu(0, 0), t.gpu(1, 0), 0, route));
  r.route(t.gpu(0, 0), t.gpu(1, 0), 0, route);
  EXPECT_FALSE(route.up);
  EXPECT_EQ(route.channels.size(), 4u);
}

TEST(Router, DistanceTablesAreCachedPerDestinationSwitch) {
  Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(8, 1, 1));
  Router r(t);
  Route route;
  for (int s = 1; s < 8; ++s) {
    ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(s, 0), 0, route));
  }
  EXPECT_EQ(r.cached_tables(), 2u);  // one per destination leaf
  // A circuit does not touch the switch graph: the tables stay, and the circuit is used.
  t.add_link(t.nic(0, 0), t.nic(7, 0), t.cluster().link, Time::zero(), LinkKind::Cable);
  r.sync();
  EXPECT_EQ(r.cached_tables(), 2u);
  ASSERT_TRUE(r.find(t.gpu(0, 0), t.gpu(7, 0), 0, route));
  EXPECT_EQ(route.cost, (RouteCost{0, 1}));
}

TEST(MixHash, IsFixed) {
  // Pinned so that ECMP choices never change silently between versions or platforms.
  EXPECT_EQ(mix_hash(0), 0xE220A8397B1DCDAFULL);
  EXPECT_NE(mix_hash(1), mix_hash(2));
}

TEST(EcmpPick, IsTheSaltedMixModuloTheCount) {
  // splitmix64(key + golden * (salt + 1)) % count, written out here from splitmix64's definition
  // (Steele, Lea and Flood 2014) rather than through mix_hash.
  const auto splitmix = [](std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  for (const int salt : {EcmpSalt::kSwitchHop, EcmpSalt::kSwitchHop + 3, EcmpSalt::kNicPair,
                         EcmpSalt::kForwardCircuit + 2, EcmpSalt::kRelayRoute}) {
    for (const std::uint64_t key : {0ULL, 12345ULL, 0xFFFFFFFFFFFFFFFFULL}) {
      const std::uint64_t mixed =
          splitmix(key + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(salt + 1));
      EXPECT_EQ(ecmp_pick(key, salt, 7), mixed % 7) << salt << " " << key;
    }
  }
  EXPECT_EQ(ecmp_pick(99, EcmpSalt::kNicPair, 1), 0u);
  EXPECT_EQ(ecmp_pick(99, EcmpSalt::kNicPair, 0), 0u);
}

}  // namespace
}  // namespace mfabric::net
