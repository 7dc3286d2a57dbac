// The fabrics built of Clos networks: fat-tree, rail-optimized, rail-only and nvl72.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builder_checks.h"
#include "fabric/builders.h"
#include "fabric/clos.h"

// In the namespace of builder_checks.h (test files are compiled several to a translation unit).
namespace mfabric::fabric::builders_test {
namespace {

// --- fat-tree ---

TEST(FatTree, Radix16With1024HostsHasThreeTiersAndFivePortsPerHost) {
  const Topology t = build_fabric("fat-tree:radix=16", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(switch_port_ends(t), 5 * 1024);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 1).size(), 128u);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 2).size(), 128u);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 3).size(), 64u);
  // Full pods: every switch uses all 16 ports; leaves 8 down, 8 up; aggregation 8 down, 8 up.
  for (NodeId s : nodes_of(t, NodeKind::Switch)) {
    const Node& n = t.node(s);
    EXPECT_EQ(n.radix, 16);
    EXPECT_EQ(cables_at(t, s), 16) << t.name(s);
    if (n.tier == 1) {
      EXPECT_EQ(nic_neighbours(t, s), 8);
    } else if (n.tier == 2) {
      EXPECT_EQ(tier_neighbours(t, s, 3), 8);
    }
  }
  EXPECT_EQ(t.name(nodes_of(t, NodeKind::Switch, 2).front()), "agg0");
  EXPECT_EQ(t.name(nodes_of(t, NodeKind::Switch, 3).back()), "core63");
  for (int s = 0; s < 128; ++s) {
    for (int j = 0; j < 8; ++j) {
      ASSERT_EQ(t.node(t.nic(s, j)).role, NicRole::Eps);
    }
  }
}

TEST(FatTree, Radix64With1024HostsHasTwoTiersAndThreePortsPerHost) {
  const Topology t = build_fabric("fat-tree", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 2);
  EXPECT_EQ(switch_port_ends(t), 3 * 1024);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 1).size(), 32u);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 2).size(), 32u);
  EXPECT_EQ(t.name(nodes_of(t, NodeKind::Switch, 2).front()), "spine0");
  // Leaves take consecutive NICs in server-major order.
  const NodeId leaf0 = neighbours(t, t.nic(0, 0), [](const Node&) { return true; }).front();
  for (int s = 0; s < 4; ++s) {
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(neighbours(t, t.nic(s, j), [](const Node&) { return true; }).front(), leaf0);
    }
  }
}

TEST(FatTree, ThreeToOneLeavesHaveThreeDownlinksPerUplink) {
  EXPECT_EQ(detail::clos_hosts_per_leaf(64, 3), 48);
  EXPECT_EQ(detail::clos_uplinks(48, 3), 16);
  EXPECT_EQ(detail::clos_hosts_per_leaf(64, 1), 32);
  EXPECT_EQ(detail::clos_hosts_per_leaf(16, 3), 12);
  const Topology t = build_fabric("fat-tree:oversubscription=3", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 2);
  // 1024 hosts: 21 full leaves (48 down, 16 up) and one with 16 hosts and ceil(16/3) = 6 uplinks.
  const auto leaves = nodes_of(t, NodeKind::Switch, 1);
  ASSERT_EQ(leaves.size(), 22u);
  int down = 0;
  int up = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const int d = nic_neighbours(t, leaves[i]);
    const int u = tier_neighbours(t, leaves[i], 2);
    EXPECT_EQ(d, i + 1 < leaves.size() ? 48 : 16);
    EXPECT_EQ(u, (d + 2) / 3);
    down += d;
    up += u;
  }
  EXPECT_EQ(down, 1024);
  EXPECT_EQ(up, 21 * 16 + 6);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 2).size(), 16u);
  EXPECT_EQ(switch_port_ends(t), down + 2 * up);
}

TEST(FatTree, ThreeToOneAtThreeTiersIsNonBlockingAboveTheLeaves) {
  const Topology t = build_fabric("fat-tree:radix=16,oversubscription=3", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 3);
  for (NodeId s : nodes_of(t, NodeKind::Switch, 1)) {
    EXPECT_EQ(tier_neighbours(t, s, 2), (nic_neighbours(t, s) + 2) / 3);
  }
  for (NodeId s : nodes_of(t, NodeKind::Switch, 2)) {
    EXPECT_EQ(tier_neighbours(t, s, 1), tier_neighbours(t, s, 3)) << t.name(s);
  }
}

TEST(FatTree, SmallClustersUseOneOrTwoTiers) {
  const Topology one = build_fabric("fat-tree", cluster(1));
  expect_well_formed(one);
  EXPECT_EQ(one.tiers(), 1);
  EXPECT_EQ(one.count(NodeKind::Switch), 1);
  EXPECT_EQ(switch_port_ends(one), 8);  // a single leaf has no uplinks

  const Topology four = build_fabric("fat-tree", cluster(4));
  EXPECT_EQ(four.tiers(), 1);
  const Topology five = build_fabric("fat-tree", cluster(5));
  expect_well_formed(five);
  EXPECT_EQ(five.tiers(), 2);
  // 40 hosts: a full leaf (32 + 32 up) and a partial one (8 + 8 up) on 32 spines.
  EXPECT_EQ(switch_port_ends(five), 40 + 2 * 40);
  EXPECT_EQ(five.count(NodeKind::Switch), 2 + 32);
}

TEST(FatTree, ThreeTierLimitIsExactlyRadixPods) {
  // Radix 4: 2 hosts per leaf, 2 leaves per pod, at most 4 pods = 16 hosts.
  const Topology t = build_fabric("fat-tree:radix=4", cluster(16, 1, 1));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(switch_port_ends(t), 5 * 16);
  const Error e = build_error("fat-tree:radix=4", cluster(17, 1, 1));
  EXPECT_EQ(e.field(), "radix");
  EXPECT_TRUE(contains(e.what(), "17 hosts need more than 3 tiers at radix 4")) << e.what();
}

// --- rail-optimized ---

TEST(RailOptimized, EveryLeafHoldsOneRailAndSpinesJoinRails) {
  const Topology t = build_fabric("rail-optimized", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 2);
  const auto leaves = nodes_of(t, NodeKind::Switch, 1);
  ASSERT_EQ(leaves.size(), 4u * 8u);  // 4 blocks of 32 servers x 8 rails
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const NodeId leaf = leaves[i];
    const int rail = static_cast<int>(i % 8);
    EXPECT_EQ(t.node(leaf).group, rail);
    const auto nics = neighbours(t, leaf, [](const Node& x) { return x.kind == NodeKind::Nic; });
    ASSERT_EQ(nics.size(), 32u);
    for (std::size_t k = 0; k < nics.size(); ++k) {
      EXPECT_EQ(t.node(nics[k]).index, rail);
      EXPECT_EQ(t.node(nics[k]).server, static_cast<int>(i / 8) * 32 + static_cast<int>(k));
    }
  }
  for (NodeId spine : nodes_of(t, NodeKind::Switch, 2)) {
    std::set<int> rails;
    for (NodeId leaf : neighbours(t, spine, [](const Node& x) { return x.tier == 1; })) {
      rails.insert(t.node(leaf).group);
    }
    EXPECT_EQ(rails.size(), 8u) << t.name(spine);
  }
  EXPECT_EQ(switch_port_ends(t), 3 * 1024);
}

TEST(RailOptimized, ThreeTiersAndOversubscription) {
  const Topology t = build_fabric("rail-optimized:radix=16", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(switch_port_ends(t), 5 * 1024);
  const Topology o = build_fabric("rail-optimized:oversubscription=3", cluster(128));
  expect_well_formed(o);
  EXPECT_EQ(o.params().at("oversubscription"), "3");
  for (NodeId leaf : nodes_of(o, NodeKind::Switch, 1)) {
    EXPECT_EQ(tier_neighbours(o, leaf, 2), (nic_neighbours(o, leaf) + 2) / 3);
  }
}

// --- rail-only ---

TEST(RailOnly, NoSwitchJoinsTwoRails) {
  const Topology t = build_fabric("rail-only", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 2);
  EXPECT_EQ(t.params(), (std::map<std::string, std::string>{{"radix", "64"}}));
  // Per rail: 4 leaves of 32 NICs and 32 spines.
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 1).size(), 8u * 4u);
  EXPECT_EQ(nodes_of(t, NodeKind::Switch, 2).size(), 8u * 32u);
  for (NodeId s : nodes_of(t, NodeKind::Switch)) {
    const int rail = t.node(s).group;
    ASSERT_GE(rail, 0);
    ASSERT_LT(rail, 8);
    for (NodeId o : neighbours(t, s, [](const Node&) { return true; })) {
      if (t.node(o).kind == NodeKind::Nic) {
        EXPECT_EQ(t.node(o).index, rail) << t.name(s) << " - " << t.name(o);
      } else {
        EXPECT_EQ(t.node(o).group, rail) << t.name(s) << " - " << t.name(o);
      }
    }
  }
  EXPECT_EQ(switch_port_ends(t), 3 * 1024);
}

TEST(RailOnly, TiersAreTheMaximumOverRails) {
  // 128 hosts per rail at radix 8: 4 hosts per leaf, 32 leaves > 8 -> 3 tiers per rail.
  const Topology t = build_fabric("rail-only:radix=8", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(t.name(nodes_of(t, NodeKind::Switch, 3).back()),
            "core" + std::to_string(nodes_of(t, NodeKind::Switch, 3).size() - 1));
  EXPECT_EQ(build_fabric("rail-only", cluster(1)).tiers(), 1);
}

// --- nvl72 ---

TEST(Nvl72, OneNicPerGpuOnAFatTree) {
  const Topology t = build_fabric("nvl72", cluster(4, 64, 64));
  expect_well_formed(t);
  EXPECT_EQ(t.params().at("domain"), "72");
  EXPECT_EQ(t.count(NodeKind::Nic), 256);
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(t.node(t.nic(1, j)).role, NicRole::Eps);
  EXPECT_EQ(t.tiers(), 2);  // 256 hosts, 32 per leaf: 8 leaves under spines
}

}  // namespace
}  // namespace mfabric::fabric::builders_test
