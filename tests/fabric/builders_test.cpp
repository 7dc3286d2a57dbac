#include "fabric/builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/clos.h"
#include "fabric/ocs_params.h"

namespace mfabric::fabric {
namespace {

ClusterSpec cluster(int servers, int nics = 8, int gpus = 8) {
  ClusterSpec c;
  c.servers = servers;
  c.nics_per_server = nics;
  c.gpus_per_server = gpus;
  c.numa_nodes = std::min(2, nics);
  return c;
}

std::string fmt_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

bool is_switch(const Topology& t, NodeId n) {
  return t.node(n).kind == NodeKind::Switch;
}

// Electrical switch ports in use: the switch ends of all cables.
int switch_port_ends(const Topology& t) {
  int ends = 0;
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::Cable) continue;
    ends += is_switch(t, l.a) ? 1 : 0;
    ends += is_switch(t, l.b) ? 1 : 0;
  }
  return ends;
}

int cables_at(const Topology& t, NodeId n) {
  int c = 0;
  for (LinkId l : t.links_of(n)) {
    c += t.link(l).kind == LinkKind::Cable ? 1 : 0;
  }
  return c;
}

std::vector<NodeId> nodes_of(const Topology& t, NodeKind kind, int tier = 0) {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes().size()); ++n) {
    if (t.node(n).kind == kind && (tier == 0 || t.node(n).tier == tier)) out.push_back(n);
  }
  return out;
}

// Cable neighbours of `n` that satisfy `pred`.
std::vector<NodeId> neighbours(const Topology& t, NodeId n,
                               const std::function<bool(const Node&)>& pred) {
  std::vector<NodeId> out;
  for (LinkId l : t.links_of(n)) {
    if (t.link(l).kind != LinkKind::Cable) continue;
    const NodeId o = t.other_end(l, n);
    if (pred(t.node(o))) out.push_back(o);
  }
  return out;
}

int nic_neighbours(const Topology& t, NodeId n) {
  return static_cast<int>(
      neighbours(t, n, [](const Node& x) { return x.kind == NodeKind::Nic; }).size());
}

int tier_neighbours(const Topology& t, NodeId n, int tier) {
  return static_cast<int>(neighbours(t, n, [tier](const Node& x) {
                            return x.kind == NodeKind::Switch && x.tier == tier;
                          }).size());
}

// Invariants every built fabric satisfies.
void expect_well_formed(const Topology& t) {
  const ClusterSpec& c = t.cluster();
  for (int s = 0; s < c.servers; ++s) {
    for (int j = 0; j < c.nics_per_server; ++j) {
      const NodeId nic = t.nic(s, j);
      ASSERT_EQ(cables_at(t, nic), 1) << t.name(nic);
      const NodeId peer = neighbours(t, nic, [](const Node&) { return true; }).front();
      const Node& p = t.node(peer);
      switch (t.node(nic).role) {
        case NicRole::Eps:
          ASSERT_EQ(p.kind, NodeKind::Switch) << t.name(nic);
          ASSERT_EQ(p.tier, 1) << t.name(nic);
          break;
        case NicRole::Ocs:
          ASSERT_EQ(p.kind, NodeKind::Ocs) << t.name(nic);
          break;
        case NicRole::PatchPanel:
          ASSERT_EQ(p.kind, NodeKind::PatchPanel) << t.name(nic);
          break;
        case NicRole::None:
          FAIL() << t.name(nic) << " has no role";
      }
    }
  }
  std::set<std::string> names;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes().size()); ++n) {
    const Node& node = t.node(n);
    ASSERT_TRUE(names.insert(t.name(n)).second) << "duplicate name " << t.name(n);
    if (node.kind == NodeKind::Switch || node.kind == NodeKind::Ocs ||
        node.kind == NodeKind::PatchPanel) {
      ASSERT_LE(cables_at(t, n), node.radix) << t.name(n);
      ASSERT_GE(cables_at(t, n), 1) << t.name(n) << " is unused";
    }
    if (node.kind == NodeKind::Switch) {
      ASSERT_GE(node.tier, 1);
      ASSERT_LE(node.tier, t.tiers());
    }
  }
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::Cable) continue;
    EXPECT_EQ(l.rate, c.link);
    EXPECT_EQ(l.latency, c.link_latency);
    // Switch-to-switch cables join adjacent tiers only.
    if (is_switch(t, l.a) && is_switch(t, l.b)) {
      ASSERT_EQ(std::abs(t.node(l.a).tier - t.node(l.b).tier), 1);
    }
  }
}

// The error build_fabric throws for `spec`, or a failure if it does not throw one.
Error build_error(const std::string& spec, const ClusterSpec& c) {
  try {
    build_fabric(spec, c);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << spec << " built without an error";
  return Error("no error");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- registry ---

TEST(FabricKinds, ListsEveryKindWithDocumentedParameters) {
  std::vector<std::string> names;
  for (const auto& k : fabric_kinds().entries()) {
    names.push_back(k.name);
    EXPECT_FALSE(k.description.empty()) << k.name;
    for (const auto& p : k.factory.params) {
      EXPECT_FALSE(p.default_value.empty()) << k.name << "." << p.name;
      EXPECT_FALSE(p.meaning.empty()) << k.name << "." << p.name;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fat-tree", "rail-optimized", "rail-only", "topoopt",
                                             "mfabric", "nvl72"}));
  ASSERT_NE(find_fabric_kind("mfabric"), nullptr);
  std::vector<std::string> mfabric_params;
  for (const auto& p : find_fabric_kind("mfabric")->params) {
    mfabric_params.push_back(p.name + "=" + p.default_value);
  }
  EXPECT_EQ(mfabric_params, (std::vector<std::string>{
                                "alpha=6", "region=8", "radix=64", "oversubscription=1",
                                "ocs_ports=576", "reconfiguration=25ms", "planner=greedy",
                                "policy=block", "switching=always", "eps_link=the cluster's link",
                                "ocs_link=the cluster's link", "ocs_optics=pluggable"}));
  EXPECT_TRUE(find_fabric_kind("topoopt")->params.empty());
  EXPECT_EQ(find_fabric_kind("fat-tre"), nullptr);
}

TEST(FabricKinds, DefaultComparisonFabricsBuildOnThePaperCluster) {
  EXPECT_EQ(default_comparison_fabrics(),
            (std::vector<std::string>{"fat-tree", "fat-tree:oversubscription=3", "rail-optimized",
                                      "rail-only", "topoopt", "mfabric"}));
  for (const auto& spec : default_comparison_fabrics()) {
    SCOPED_TRACE(spec);
    const Topology t = build_fabric(spec, ClusterSpec{});
    expect_well_formed(t);
    EXPECT_EQ(t.spec(), spec);
    EXPECT_EQ(t.kind(), Spec::parse(spec).name());
  }
}

TEST(BuildFabric, RecordsCanonicalSpecAndResolvedParameters) {
  const Topology t = build_fabric("fat-tree:radix=16,oversubscription=3", cluster(16));
  EXPECT_EQ(t.kind(), "fat-tree");
  EXPECT_EQ(t.spec(), "fat-tree:oversubscription=3,radix=16");
  EXPECT_EQ(t.params(),
            (std::map<std::string, std::string>{{"oversubscription", "3"}, {"radix", "16"}}));
  EXPECT_EQ(t.param_number("radix"), 16);
  const Topology d = build_fabric("fat-tree", cluster(16));
  EXPECT_EQ(d.params(),
            (std::map<std::string, std::string>{{"oversubscription", "1"}, {"radix", "64"}}));
  const Topology h = build_fabric("fat-tree:oversubscription=1.5", cluster(16));
  EXPECT_EQ(h.params().at("oversubscription"), "1.5");
  // The Spec overload gives the same result.
  const Topology s = build_fabric(Spec::parse("fat-tree:radix=16"), cluster(16));
  EXPECT_EQ(s.spec(), "fat-tree:radix=16");
  EXPECT_EQ(s.links().size(), build_fabric("fat-tree:radix=16", cluster(16)).links().size());
}

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

// --- topoopt ---

TEST(TopoOpt, EveryNicOnOnePatchPanel) {
  const Topology t = build_fabric("topoopt", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.tiers(), 0);
  EXPECT_EQ(t.circuit_degree(), 8);
  EXPECT_EQ(t.count(NodeKind::Switch), 0);
  const auto panels = nodes_of(t, NodeKind::PatchPanel);
  ASSERT_EQ(panels.size(), 1u);
  EXPECT_EQ(t.node(panels[0]).radix, 1024);
  EXPECT_EQ(cables_at(t, panels[0]), 1024);
  EXPECT_EQ(t.name(panels[0]), "panel0");
  EXPECT_EQ(t.params(), (std::map<std::string, std::string>{{"degree", "8"}}));
  EXPECT_EQ(t.reconfiguration_delay(), Time::zero());
  EXPECT_EQ(build_fabric("topoopt", cluster(4, 4)).circuit_degree(), 4);
}

// --- mfabric ---

TEST(MFabric, DefaultSplitsNicsBetweenEpsAndRegionalOcs) {
  const Topology t = build_fabric("mfabric", cluster(128));
  expect_well_formed(t);
  EXPECT_EQ(t.params(), (std::map<std::string, std::string>{{"alpha", "6"},
                                                            {"eps_link", "400Gbps"},
                                                            {"ocs_link", "400Gbps"},
                                                            {"ocs_optics", "pluggable"},
                                                            {"ocs_ports", "576"},
                                                            {"oversubscription", "1"},
                                                            {"planner", "greedy"},
                                                            {"policy", "block"},
                                                            {"radix", "64"},
                                                            {"reconfiguration", "25ms"},
                                                            {"region", "8"},
                                                            {"switching", "always"}}));
  EXPECT_EQ(t.circuit_degree(), 6);
  EXPECT_EQ(t.reconfiguration_delay(), Time::milliseconds(25));
  // The same parameters, typed, for the cost model and the control plane.
  ASSERT_NE(t.ocs(), nullptr);
  EXPECT_EQ(t.ocs()->alpha, 6);
  EXPECT_EQ(t.ocs()->region, 8);
  EXPECT_EQ(t.ocs()->ocs_ports, 576);
  EXPECT_EQ(t.ocs()->reconfiguration, Time::milliseconds(25));
  EXPECT_EQ(t.ocs()->eps_link, Rate::gbps(400));
  EXPECT_EQ(t.ocs()->ocs_link, Rate::gbps(400));
  EXPECT_EQ(t.ocs()->optics, OcsOptics::Pluggable);
  EXPECT_EQ(t.ocs()->switching, SwitchRule::Always);
  EXPECT_EQ(t.ocs()->planner, "greedy");
  EXPECT_EQ(t.ocs()->policy, "block");
  EXPECT_EQ(build_fabric("fat-tree", cluster(8)).ocs(), nullptr);
  const Topology cpo = build_fabric(
      "mfabric:ocs_optics=co-packaged,switching=when-faster,reconfiguration=0s", cluster(8));
  EXPECT_EQ(cpo.ocs()->optics, OcsOptics::CoPackaged);
  EXPECT_EQ(cpo.ocs()->switching, SwitchRule::WhenFaster);
  EXPECT_EQ(cpo.reconfiguration_delay(), Time::zero());
  // EPS: 2 NICs x 128 servers = 256 hosts at radix 64 -> 8 leaves, 2 tiers.
  EXPECT_EQ(t.tiers(), 2);
  EXPECT_EQ(switch_port_ends(t), 3 * 256);
  for (int s = 0; s < 128; ++s) {
    int ocs_nics = 0;
    for (int j = 0; j < 8; ++j) {
      const Node& nic = t.node(t.nic(s, j));
      ocs_nics += nic.role == NicRole::Ocs ? 1 : 0;
      EXPECT_EQ(nic.role, j < 2 ? NicRole::Eps : NicRole::Ocs) << t.name(t.nic(s, j));
      EXPECT_EQ(nic.group, j < 2 ? -1 : s / 8);
    }
    EXPECT_EQ(ocs_nics, 6);
  }
  // 16 regions of 48 ports; 12 fit on a 576-port OCS, so two devices.
  const auto ocs = nodes_of(t, NodeKind::Ocs);
  ASSERT_EQ(ocs.size(), 2u);
  EXPECT_EQ(t.name(ocs[1]), "ocs1");
  EXPECT_EQ(t.node(ocs[0]).radix, 576);
  EXPECT_EQ(cables_at(t, ocs[0]), 12 * 48);
  EXPECT_EQ(cables_at(t, ocs[1]), 4 * 48);
  ASSERT_EQ(t.regions().size(), 16u);
  EXPECT_EQ(t.regions()[12].ocs, ocs[1]);
  EXPECT_EQ(t.regions()[12].first_port, 0);
  EXPECT_EQ(t.regions()[11].first_port, 11 * 48);
}

void expect_regions_cover_servers(const Topology& t, int alpha, int region) {
  const ClusterSpec& c = t.cluster();
  const int n = c.nics_per_server;
  int next_server = 0;
  std::map<NodeId, std::vector<std::pair<int, int>>> port_ranges;
  for (std::size_t i = 0; i < t.regions().size(); ++i) {
    const Region& r = t.regions()[i];
    EXPECT_EQ(r.id, static_cast<int>(i));
    EXPECT_EQ(r.first_server, next_server);
    EXPECT_EQ(r.servers, region);
    EXPECT_EQ(r.ports, alpha * region);
    ASSERT_EQ(t.node(r.ocs).kind, NodeKind::Ocs);
    EXPECT_LE(r.first_port + r.ports, t.node(r.ocs).radix);
    port_ranges[r.ocs].push_back({r.first_port, r.first_port + r.ports});
    for (int s = r.first_server; s < r.first_server + r.servers; ++s) {
      for (int j = n - alpha; j < n; ++j) {
        const NodeId nic = t.nic(s, j);
        EXPECT_EQ(t.node(nic).group, r.id);
        ASSERT_EQ(neighbours(t, nic, [](const Node&) { return true; }), std::vector<NodeId>{r.ocs});
      }
    }
    next_server += r.servers;
  }
  EXPECT_EQ(next_server, c.servers);
  // Regions on one device own disjoint port ranges.
  for (auto& [ocs, ranges] : port_ranges) {
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) {
      EXPECT_LE(ranges[i - 1].second, ranges[i].first);
    }
  }
}

TEST(MFabric, RegionsCoverServersContiguouslyOnWholeOcsDevices) {
  expect_regions_cover_servers(build_fabric("mfabric", cluster(128)), 6, 8);
  // 100 ports hold two 48-port regions per device: 16 regions on 8 devices.
  const Topology t = build_fabric("mfabric:ocs_ports=100", cluster(128));
  expect_well_formed(t);
  expect_regions_cover_servers(t, 6, 8);
  EXPECT_EQ(t.count(NodeKind::Ocs), 8);
  EXPECT_EQ(t.regions()[3].ocs, t.regions()[2].ocs);
  EXPECT_EQ(t.regions()[3].first_port, 48);
  EXPECT_EQ(t.node(t.regions()[3].ocs).index, 1);
  // Exact fit: one region per 48-port device.
  const Topology exact = build_fabric("mfabric:ocs_ports=48", cluster(16));
  expect_regions_cover_servers(exact, 6, 8);
  EXPECT_EQ(exact.count(NodeKind::Ocs), 2);

  const Topology small = build_fabric("mfabric:alpha=2,region=4,reconfiguration=10us", cluster(16));
  expect_well_formed(small);
  expect_regions_cover_servers(small, 2, 4);
  EXPECT_EQ(small.circuit_degree(), 2);
  EXPECT_EQ(small.reconfiguration_delay(), Time::microseconds(10));
  EXPECT_EQ(small.params().at("reconfiguration"), "10us");
  EXPECT_EQ(small.count(NodeKind::Ocs), 1);
  // 6 EPS NICs x 16 servers = 96 hosts: 3 leaves at radix 64.
  EXPECT_EQ(nodes_of(small, NodeKind::Switch, 1).size(), 3u);
}

TEST(MFabric, RegionDefaultsToAllServersInSmallClusters) {
  const Topology t = build_fabric("mfabric", cluster(4));
  expect_well_formed(t);
  EXPECT_EQ(t.params().at("region"), "4");
  ASSERT_EQ(t.regions().size(), 1u);
  EXPECT_EQ(t.regions()[0].servers, 4);
  EXPECT_EQ(t.regions()[0].ports, 24);
  const Topology zero = build_fabric("mfabric:reconfiguration=0s", cluster(8));
  EXPECT_EQ(zero.reconfiguration_delay(), Time::zero());
  EXPECT_EQ(build_fabric("mfabric:reconfiguration=10s", cluster(8)).reconfiguration_delay(),
            Time::milliseconds(10000));
  for (const char* bad : {"mfabric:reconfiguration=61min", "mfabric:reconfiguration=-1ms"}) {
    try {
      build_fabric(bad, cluster(8));
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "reconfiguration") << e.what();
      const std::string what = e.what();
      EXPECT_TRUE(what.find("between 0 and 60min") != std::string::npos ||
                  what.find("must not be negative") != std::string::npos)
          << what;
    }
  }
}

// --- all builders, many shapes ---

TEST(Builders, NoSwitchExceedsItsRadixOverManyShapes) {
  int built = 0;
  int too_big = 0;
  for (int servers : {1, 2, 3, 5, 8, 16, 17, 33, 64, 100, 130}) {
    for (int nics : {2, 4, 8}) {
      for (int radix : {4, 6, 8, 16, 64}) {
        for (double o : {1.0, 1.5, 2.0, 3.0, 4.5}) {
          const std::string params =
              "radix=" + std::to_string(radix) + ",oversubscription=" + fmt_double(o);
          for (const std::string& spec :
               {"fat-tree:" + params, "rail-optimized:" + params,
                "rail-only:radix=" + std::to_string(radix),
                "mfabric:region=1,alpha=" + std::to_string(nics / 2) + "," + params}) {
            SCOPED_TRACE(spec + " servers=" + std::to_string(servers) +
                         " nics=" + std::to_string(nics));
            try {
              const Topology t = build_fabric(spec, cluster(servers, nics));
              expect_well_formed(t);
              ++built;
              if (spec.rfind("fat-tree", 0) == 0) {
                // Leaf down ports = hosts; above the leaves every uplink uses 2 ports per
                // extra tier (2 tiers: leaf up + spine down; 3 tiers: + agg up + core).
                const int hosts = servers * nics;
                const int per_leaf = detail::clos_hosts_per_leaf(radix, o);
                int up = 0;
                for (int h = hosts; h > 0; h -= per_leaf) {
                  up += detail::clos_uplinks(std::min(h, per_leaf), o);
                }
                const int leaves = (hosts + per_leaf - 1) / per_leaf;
                const int tiers = leaves == 1 ? 1 : leaves <= radix ? 2 : 3;
                EXPECT_EQ(t.tiers(), tiers);
                EXPECT_EQ(switch_port_ends(t), hosts + (tiers == 1 ? 0 : tiers == 2 ? 2 : 4) * up);
              }
            } catch (const Error& e) {
              if (o > radix - 1 && spec.rfind("rail-only", 0) != 0) {
                // A ratio no leaf of this radix can have (one uplink is radix - 1 : 1).
                EXPECT_EQ(e.field(), "oversubscription") << e.what();
                continue;
              }
              ++too_big;
              EXPECT_EQ(e.field(), "radix") << e.what();
              EXPECT_TRUE(contains(e.what(), "need more than 3 tiers")) << e.what();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(built, 2000);
  EXPECT_GT(too_big, 0);
}

// --- errors ---

TEST(BuilderErrors, UnknownFabricListsTheKnownOnes) {
  const Error e = build_error("fat-tre", cluster(8));
  EXPECT_STREQ(e.what(),
               "unknown fabric 'fat-tre' (known: fat-tree, rail-optimized, rail-only, topoopt, "
               "mfabric, nvl72)");
}

TEST(BuilderErrors, LinkRatesOpticsAndDomains) {
  EXPECT_TRUE(contains(build_error("mfabric:eps_link=0G", cluster(8)).what(), "eps_link"));
  EXPECT_TRUE(contains(build_error("mfabric:ocs_link=fast", cluster(8)).what(), "ocs_link"));
  EXPECT_TRUE(contains(build_error("mfabric:ocs_optics=cpo", cluster(8)).what(), "co-packaged"));
  // nvl72: one NIC per GPU, and a domain at least as large as the GPUs used.
  EXPECT_TRUE(contains(build_error("nvl72", cluster(8, 4, 8)).what(), "nics_per_server"));
  EXPECT_TRUE(contains(build_error("nvl72:domain=4", cluster(8)).what(), "domain"));
}

TEST(Nvl72, OneNicPerGpuOnAFatTree) {
  const Topology t = build_fabric("nvl72", cluster(4, 64, 64));
  expect_well_formed(t);
  EXPECT_EQ(t.params().at("domain"), "72");
  EXPECT_EQ(t.count(NodeKind::Nic), 256);
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(t.node(t.nic(1, j)).role, NicRole::Eps);
  EXPECT_EQ(t.tiers(), 2);  // 256 hosts, 32 per leaf: 8 leaves under spines
}

TEST(BuilderErrors, UnknownParameterIsNamed) {
  Error e = build_error("fat-tree:radx=16", cluster(8));
  EXPECT_TRUE(contains(e.what(), "'radx'")) << e.what();
  EXPECT_TRUE(contains(e.what(), "radix, oversubscription")) << e.what();
  e = build_error("rail-only:oversubscription=3", cluster(8));
  EXPECT_TRUE(contains(e.what(), "'oversubscription'")) << e.what();
  e = build_error("topoopt:degree=4", cluster(8));
  EXPECT_TRUE(contains(e.what(), "'degree'")) << e.what();
  // A typo is reported before the (default) values are checked.
  e = build_error("mfabric:alpah=2", cluster(8, 4));
  EXPECT_TRUE(contains(e.what(), "'alpah'")) << e.what();
}

TEST(BuilderErrors, AlphaMustLeaveAnEpsNic) {
  Error e = build_error("mfabric:alpha=9", cluster(8));
  EXPECT_EQ(e.field(), "alpha");
  EXPECT_EQ(e.message(), "must be between 1 and nics_per_server - 1 (7), got 9");
  EXPECT_EQ(build_error("mfabric:alpha=8", cluster(8)).field(), "alpha");
  EXPECT_EQ(build_error("mfabric:alpha=0", cluster(8)).field(), "alpha");
  e = build_error("mfabric", cluster(8, 4));  // default alpha 6 needs 7+ NICs
  EXPECT_EQ(e.field(), "alpha");
  EXPECT_TRUE(contains(e.message(), "(3), got 6")) << e.what();
  e = build_error("mfabric:alpha=1", cluster(8, 1));
  EXPECT_EQ(e.field(), "alpha");
  EXPECT_TRUE(contains(e.message(), "at least 2 NICs per server")) << e.what();
  EXPECT_EQ(build_error("mfabric:alpha=six", cluster(8)).field(), "alpha");
}

TEST(BuilderErrors, RegionMustDivideServers) {
  Error e = build_error("mfabric:region=3", cluster(128));
  EXPECT_EQ(e.field(), "region");
  EXPECT_TRUE(contains(e.message(), "divides servers (128), got 3")) << e.what();
  EXPECT_EQ(build_error("mfabric:region=0", cluster(128)).field(), "region");
  EXPECT_EQ(build_error("mfabric:region=-8", cluster(128)).field(), "region");
  // Default 8 does not divide 12 servers.
  EXPECT_EQ(build_error("mfabric", cluster(12)).field(), "region");
}

TEST(BuilderErrors, RadixMustBeEvenAndAtLeastFour) {
  for (const std::string spec : {"fat-tree:radix=63", "fat-tree:radix=2", "rail-optimized:radix=0",
                                 "rail-only:radix=-4", "mfabric:radix=7", "fat-tree:radix=x"}) {
    const Error e = build_error(spec, cluster(8));
    EXPECT_EQ(e.field(), "radix") << spec;
  }
  EXPECT_TRUE(contains(build_error("fat-tree:radix=63", cluster(8)).message(), "even"));
}

TEST(BuilderErrors, OversubscriptionMustBeAtLeastOne) {
  for (const std::string spec :
       {"fat-tree:oversubscription=0.5", "rail-optimized:oversubscription=0",
        "mfabric:oversubscription=-3", "fat-tree:oversubscription=inf",
        "fat-tree:oversubscription=3:1"}) {
    const Error e = build_error(spec, cluster(8));
    EXPECT_EQ(e.field(), "oversubscription") << spec;
  }
  EXPECT_TRUE(
      contains(build_error("fat-tree:oversubscription=0.5", cluster(8)).message(), "from 1"));
}

TEST(BuilderErrors, RatiosAndPortCountsNoDeviceHasAreRefused) {
  // Each used to be accepted: 1e308 built as radix - 1 : 1, a billion-port switch was priced.
  Error e = build_error("fat-tree:oversubscription=1e308", cluster(8));
  EXPECT_EQ(e.field(), "oversubscription");
  EXPECT_TRUE(contains(e.message(), "to radix - 1 (63: one uplink per leaf), got 1e+308"))
      << e.what();
  EXPECT_NO_THROW(build_fabric("fat-tree:oversubscription=63", cluster(8)));
  e = build_error("fat-tree:radix=1000000000", cluster(8));
  EXPECT_EQ(e.field(), "radix");
  EXPECT_TRUE(contains(e.message(), "from 4 to 4096")) << e.what();
  EXPECT_NO_THROW(build_fabric("fat-tree:radix=4096", cluster(8)));
  e = build_error("mfabric:ocs_ports=1000000000", cluster(8));
  EXPECT_EQ(e.field(), "ocs_ports");
  EXPECT_TRUE(contains(e.message(), "at most 4096")) << e.what();
}

TEST(BuilderErrors, ATopologyTooBigForMemoryIsRefusedBeforeItIsBuilt) {
  // 65,536 servers of 1,024 GPUs and NICs: every count in range, tens of gigabytes in all.
  const ClusterSpec huge = cluster(65536, 1024, 1024);
  const std::int64_t bytes = estimate_topology_bytes(huge);
  EXPECT_GT(bytes, std::int64_t{30} << 30);
  const Error e = build_error("fat-tree", huge);
  EXPECT_TRUE(contains(e.message(),
                       "the cluster's 65536 servers x (1024 GPUs + 1024 NICs) make a "
                       "topology of about"))
      << e.what();
  EXPECT_TRUE(contains(e.message(), "more than the limit of 8GiB")) << e.what();
  // The limit is the caller's: a small cluster under a tiny limit is refused too.
  EXPECT_THROW(build_fabric("fat-tree", cluster(8), 1000), Error);
}

TEST(TopologyEstimate, BoundsWhatIsBuilt) {
  // The estimate is an upper bound of the containers' sizes for every fabric (measured RSS is
  // 55-80% of it: docs/reliability.md).
  for (const std::string spec : {"fat-tree", "rail-optimized", "rail-only", "topoopt", "mfabric",
                                 "fat-tree:oversubscription=3"}) {
    const Topology t = build_fabric(spec, cluster(64));
    std::int64_t adjacency = 0;
    for (std::size_t n = 0; n < t.nodes().size(); ++n)
      adjacency += static_cast<std::int64_t>(t.links_of(static_cast<NodeId>(n)).capacity()) * 4;
    const std::int64_t held = static_cast<std::int64_t>(t.nodes().size() * (sizeof(Node) + 24) +
                                                        t.links().size() * sizeof(Link)) +
                              adjacency;
    EXPECT_LT(held, estimate_topology_bytes(t.cluster())) << spec;
  }
}

TEST(BuilderErrors, TooManyHostsForThreeTiers) {
  Error e = build_error("fat-tree:radix=4", cluster(128));
  EXPECT_EQ(e.field(), "radix");
  EXPECT_EQ(e.message(), "1024 hosts need more than 3 tiers at radix 4; use a larger radix");
  // Rail-only Clos networks are per rail: 100 hosts each.
  e = build_error("rail-only:radix=4", cluster(100));
  EXPECT_EQ(e.field(), "radix");
  EXPECT_TRUE(contains(e.message(), "100 hosts")) << e.what();
}

TEST(BuilderErrors, OcsPortsMustHoldARegion) {
  const Error e = build_error("mfabric:ocs_ports=47", cluster(128));
  EXPECT_EQ(e.field(), "ocs_ports");
  EXPECT_TRUE(contains(e.message(), "6 * 8 = 48")) << e.what();
  EXPECT_TRUE(contains(e.message(), "got 47")) << e.what();
}

TEST(BuilderErrors, ReconfigurationNeedsAUnit) {
  EXPECT_EQ(build_error("mfabric:reconfiguration=25", cluster(8)).field(), "reconfiguration");
  EXPECT_EQ(build_error("mfabric:reconfiguration=-1ms", cluster(8)).field(), "reconfiguration");
}

TEST(BuilderErrors, ClusterIsValidatedFirst) {
  Error e = build_error("fat-tree", cluster(0));
  EXPECT_EQ(e.field(), "servers");
  e = build_error("no-such-fabric", cluster(0));
  EXPECT_EQ(e.field(), "servers");
  ClusterSpec c = cluster(8);
  c.nics_per_server = 0;
  EXPECT_EQ(build_error("topoopt", c).field(), "nics_per_server");
}

}  // namespace
}  // namespace mfabric::fabric
