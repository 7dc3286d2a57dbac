#include "fabric/topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"

namespace mfabric::fabric {
namespace {

ClusterSpec cluster_of(int servers, int gpus, int nics, int numa = 2) {
  ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  c.numa_nodes = numa;
  return c;
}

Topology servers_only(const ClusterSpec& c) {
  Topology t("test", "test", c);
  t.add_servers();
  return t;
}

// The GPU a NIC hangs off (its one PCIe link).
NodeId pcie_gpu_of_nic(const Topology& t, NodeId nic) {
  std::vector<NodeId> gpus;
  for (LinkId l : t.links_of(nic)) {
    if (t.link(l).kind == LinkKind::Pcie) gpus.push_back(t.other_end(l, nic));
  }
  EXPECT_EQ(gpus.size(), 1u) << t.name(nic);
  return gpus.empty() ? kNoNode : gpus.front();
}

std::vector<NodeId> pcie_nics_of_gpu(const Topology& t, NodeId gpu) {
  std::vector<NodeId> nics;
  for (LinkId l : t.links_of(gpu)) {
    if (t.link(l).kind == LinkKind::Pcie) nics.push_back(t.other_end(l, gpu));
  }
  return nics;
}

TEST(Topology, AccessorsFindEachServersNodes) {
  const Topology t = servers_only(cluster_of(4, 8, 8));
  EXPECT_EQ(t.nodes().size(), 4u * (8 + 1 + 8));
  EXPECT_EQ(t.count(NodeKind::Gpu), 32);
  EXPECT_EQ(t.count(NodeKind::NvSwitch), 4);
  EXPECT_EQ(t.count(NodeKind::Nic), 32);
  EXPECT_EQ(t.count(NodeKind::Switch), 0);
  for (int s = 0; s < 4; ++s) {
    for (int k = 0; k < 8; ++k) {
      const Node& g = t.node(t.gpu(s, k));
      EXPECT_EQ(g.kind, NodeKind::Gpu);
      EXPECT_EQ(g.server, s);
      EXPECT_EQ(g.index, k);
      const Node& n = t.node(t.nic(s, k));
      EXPECT_EQ(n.kind, NodeKind::Nic);
      EXPECT_EQ(n.server, s);
      EXPECT_EQ(n.index, k);
      EXPECT_EQ(n.role, NicRole::None);
    }
    EXPECT_EQ(t.node(t.nvswitch(s)).kind, NodeKind::NvSwitch);
    EXPECT_EQ(t.node(t.nvswitch(s)).server, s);
  }
  EXPECT_EQ(t.name(t.gpu(3, 5)), "s3.gpu5");
  EXPECT_EQ(t.name(t.nic(3, 1)), "s3.nic1");
  EXPECT_EQ(t.name(t.nvswitch(3)), "s3.nvswitch");
  EXPECT_EQ(t.tiers(), 0);
  EXPECT_EQ(t.circuit_degree(), 0);
  EXPECT_EQ(t.reconfiguration_delay(), Time::zero());
}

TEST(Topology, EveryGpuHasAnNvLinkToItsServersNvSwitch) {
  ClusterSpec c = cluster_of(2, 8, 8);
  c.nvswitch = Rate::bytes_per_second(900e9);
  const Topology t = servers_only(c);
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 8; ++k) {
      int nvlinks = 0;
      for (LinkId l : t.links_of(t.gpu(s, k))) {
        const Link& link = t.link(l);
        if (link.kind != LinkKind::NvLink) continue;
        ++nvlinks;
        EXPECT_EQ(t.other_end(l, t.gpu(s, k)), t.nvswitch(s));
        EXPECT_EQ(link.rate, c.nvswitch);
        EXPECT_EQ(link.latency, Time::zero());
      }
      EXPECT_EQ(nvlinks, 1);
    }
    EXPECT_EQ(t.links_of(t.nvswitch(s)).size(), 8u);
  }
  for (const Link& l : t.links()) {
    EXPECT_NE(l.kind, LinkKind::Cable);
  }
}

TEST(Topology, PcieOneNicPerGpu) {
  const Topology t = servers_only(cluster_of(1, 8, 8));
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(pcie_gpu_of_nic(t, t.nic(0, j)), t.gpu(0, j));
  }
}

TEST(Topology, PcieFewerNicsThanGpusShareANic) {
  // 4 NICs, 8 GPUs: GPU k uses NIC floor(k * 4 / 8).
  const Topology t = servers_only(cluster_of(2, 8, 4));
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(pcie_nics_of_gpu(t, t.gpu(s, k)), std::vector<NodeId>{t.nic(s, k / 2)});
    }
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(pcie_nics_of_gpu(t, t.nic(s, j)).size(), 2u);
    }
  }
  for (const Link& l : t.links()) {
    if (l.kind == LinkKind::Pcie) {
      EXPECT_EQ(l.rate, t.cluster().link);
      EXPECT_EQ(l.latency, Time::zero());
    }
  }
}

TEST(Topology, PcieMoreNicsThanGpusShareAGpu) {
  // 8 NICs, 4 GPUs: a whole number per GPU, NIC j hangs off GPU j mod 4, so that each block of
  // 4 NICs (mFabric's EPS and OCS NICs) has one NIC on every GPU.
  const Topology t = servers_only(cluster_of(1, 4, 8));
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(pcie_gpu_of_nic(t, t.nic(0, j)), t.gpu(0, j % 4));
  }
  // 6 NICs, 4 GPUs: NIC j hangs off GPU floor(j * 4 / 6) = 0, 0, 1, 2, 2, 3.
  const Topology u = servers_only(cluster_of(1, 4, 6));
  const int expected[] = {0, 0, 1, 2, 2, 3};
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(pcie_gpu_of_nic(u, u.nic(0, j)), u.gpu(0, expected[j]));
  }
}

TEST(Topology, NicRateSetsItsPcieLinks) {
  Topology t = servers_only(cluster_of(1, 4, 8));
  EXPECT_EQ(t.nic_rate(t.nic(0, 5)), t.cluster().link);
  t.set_nic_rate(t.nic(0, 5), Rate::gbps(50));
  EXPECT_EQ(t.nic_rate(t.nic(0, 5)), Rate::gbps(50));
  EXPECT_EQ(t.nic_rate(t.nic(0, 4)), t.cluster().link);
}

TEST(Topology, NicsSplitEvenlyOverNumaNodes) {
  const Topology t = servers_only(cluster_of(2, 8, 8));
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(t.node(t.nic(1, j)).numa, j * 2 / 8) << j;
  }
  const Topology four = servers_only(cluster_of(1, 8, 6, 3));
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(four.node(four.nic(0, j)).numa, j / 2) << j;
  }
  const Topology one = servers_only(cluster_of(1, 8, 4, 1));
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(one.node(one.nic(0, j)).numa, 0);
  }
}

TEST(Topology, ConstructionHelpers) {
  ClusterSpec c = cluster_of(1, 1, 2, 1);
  Topology t("fat-tree", "fat-tree:radix=4", c);
  t.add_servers();
  const NodeId leaf = t.add_node(Node{.kind = NodeKind::Switch, .index = 0, .tier = 1, .radix = 4});
  const LinkId l = t.add_link(t.nic(0, 0), leaf, c.link, c.link_latency, LinkKind::Cable);
  EXPECT_EQ(t.other_end(l, leaf), t.nic(0, 0));
  EXPECT_EQ(t.other_end(l, t.nic(0, 0)), leaf);
  EXPECT_EQ(t.links_of(leaf), std::vector<LinkId>{l});
  t.set_nic_role(t.nic(0, 0), NicRole::Eps);
  t.set_group(leaf, 3);
  EXPECT_EQ(t.node(t.nic(0, 0)).role, NicRole::Eps);
  EXPECT_EQ(t.node(leaf).group, 3);
  t.set_tiers(1);
  EXPECT_EQ(t.name(leaf), "leaf0");
  t.set_param("radix", "4");
  t.set_param("reconfiguration", "25ms");
  EXPECT_EQ(t.param_number("radix"), 4);
  EXPECT_EQ(t.param_number("reconfiguration"), 25);
  try {
    t.param_number("alpha");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'alpha'"), std::string::npos) << e.what();
  }
  t.add_region(Region{.id = 0, .first_server = 0, .servers = 1, .ocs = kNoNode, .ports = 1});
  EXPECT_EQ(t.regions().size(), 1u);
  EXPECT_EQ(t.kind(), "fat-tree");
  EXPECT_EQ(t.spec(), "fat-tree:radix=4");
}

TEST(Topology, SwitchNamesDependOnTiers) {
  Topology t("x", "x", cluster_of(1, 1, 1, 1));
  const NodeId spine = t.add_node(Node{.kind = NodeKind::Switch, .index = 3, .tier = 2});
  const NodeId core = t.add_node(Node{.kind = NodeKind::Switch, .index = 7, .tier = 3});
  const NodeId ocs = t.add_node(Node{.kind = NodeKind::Ocs, .index = 1});
  const NodeId panel = t.add_node(Node{.kind = NodeKind::PatchPanel, .index = 0});
  t.set_tiers(2);
  EXPECT_EQ(t.name(spine), "spine3");
  t.set_tiers(3);
  EXPECT_EQ(t.name(spine), "agg3");
  EXPECT_EQ(t.name(core), "core7");
  EXPECT_EQ(t.name(ocs), "ocs1");
  EXPECT_EQ(t.name(panel), "panel0");
}

TEST(Topology, EnumNames) {
  EXPECT_STREQ(to_string(NodeKind::Switch), "switch");
  EXPECT_STREQ(to_string(NodeKind::PatchPanel), "patch-panel");
  EXPECT_STREQ(to_string(NicRole::Ocs), "ocs");
  EXPECT_STREQ(to_string(NicRole::None), "none");
  EXPECT_STREQ(to_string(LinkKind::Cable), "cable");
  EXPECT_STREQ(to_string(LinkKind::NvLink), "nvlink");
}

TEST(ClusterSpec, DefaultsAreThePapersCluster) {
  const ClusterSpec c;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.servers, 128);
  EXPECT_EQ(c.gpus_per_server, 8);
  EXPECT_EQ(c.nics_per_server, 8);
  EXPECT_EQ(c.link, Rate::gbps(400));
  EXPECT_EQ(c.link_latency, Time::microseconds(1));
}

TEST(ClusterSpec, ValidateNamesTheField) {
  auto field_of = [](const ClusterSpec& c) -> std::string {
    try {
      c.validate();
    } catch (const Error& e) {
      return e.field();
    }
    return "(valid)";
  };
  ClusterSpec c;
  c.servers = 0;
  EXPECT_EQ(field_of(c), "servers");
  c = ClusterSpec{};
  c.gpus_per_server = 0;
  EXPECT_EQ(field_of(c), "gpus_per_server");
  c = ClusterSpec{};
  c.nics_per_server = -1;
  EXPECT_EQ(field_of(c), "nics_per_server");
  c = ClusterSpec{};
  c.numa_nodes = 9;
  EXPECT_EQ(field_of(c), "numa_nodes");
  c = ClusterSpec{};
  c.link = Rate();
  EXPECT_EQ(field_of(c), "link");
  c = ClusterSpec{};
  c.nvswitch = Rate();
  EXPECT_EQ(field_of(c), "nvswitch");
  c = ClusterSpec{};
  c.link_latency = Time::zero() - Time::nanoseconds(1);
  EXPECT_EQ(field_of(c), "link_latency");
  c = ClusterSpec{};
  c.servers = 10'000'000;
  EXPECT_EQ(field_of(c), "servers");
}

TEST(Topology, BuiltFabricKeepsServerLayout) {
  // Builders add switches after the servers, so the accessors still find every server node.
  const Topology t = build_fabric("fat-tree:radix=16", cluster_of(32, 8, 4));
  for (int s = 0; s < 32; ++s) {
    EXPECT_EQ(t.node(t.nic(s, 3)).index, 3);
    EXPECT_EQ(t.node(t.gpu(s, 7)).server, s);
    EXPECT_EQ(pcie_nics_of_gpu(t, t.gpu(s, 7)), std::vector<NodeId>{t.nic(s, 3)});
    EXPECT_EQ(t.node(t.nic(s, 3)).numa, 1);
  }
}

}  // namespace
}  // namespace mfabric::fabric
