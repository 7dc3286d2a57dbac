// The circuit fabrics' builders: TopoOpt's patch panel and mFabric's EPS and regional OCS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "fabric/builder_checks.h"
#include "fabric/builders.h"
#include "fabric/ocs_params.h"

// In the namespace of builder_checks.h (test files are compiled several to a translation unit).
namespace mfabric::fabric::builders_test {
namespace {

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

}  // namespace
}  // namespace mfabric::fabric::builders_test
