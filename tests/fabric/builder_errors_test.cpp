// The fabric builders' errors: unknown kinds and parameters, out-of-range values, huge clusters.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "fabric/builder_checks.h"
#include "fabric/builders.h"

// In the namespace of builder_checks.h (test files are compiled several to a translation unit).
namespace mfabric::fabric::builders_test {
namespace {

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
}  // namespace mfabric::fabric::builders_test
