// The fabric registry and build_fabric: kinds, specs, all builders over many shapes, estimates.
#include "fabric/builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builder_checks.h"
#include "fabric/clos.h"

// In the namespace of builder_checks.h (test files are compiled several to a translation unit).
namespace mfabric::fabric::builders_test {
namespace {

std::string fmt_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
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

}  // namespace
}  // namespace mfabric::fabric::builders_test
