// Golden tests for CLI output and error-path tests for bad input. The binary under test is the
// real `mfabric` executable. Set MFABRIC_UPDATE_GOLDEN=1 to rewrite the golden files after an
// intended change of output (and review the diff).
#include <gtest/gtest.h>

#include <string>

#include "cli_harness.h"

namespace {

using mfabric::testing::data;
using mfabric::testing::expect_error;
using mfabric::testing::expect_golden;
using mfabric::testing::Outcome;
using mfabric::testing::run;

TEST(CliGolden, DefaultCostComparesAllFabrics) {
  expect_golden("cost", "cost_default.txt");
}

TEST(CliGolden, PaperConventionAt100G) {
  expect_golden("cost --convention paper --link 100G", "cost_paper_100g.txt");
}

TEST(CliGolden, SingleFabricBreakdown) {
  expect_golden("cost --fabric mfabric --servers 16 --link 800G", "cost_mfabric_16.txt");
}

TEST(CliGolden, CostJsonOneFabric) {
  expect_golden("cost --fabric fat-tree:oversubscription=3 --convention paper --json",
                "cost_fat_tree_3to1.json");
}

TEST(CliGolden, CostWithPriceFile) {
  expect_golden("cost --fabric fat-tree --fabric mfabric --link 1.6T --prices prices_1600g.yaml",
                "cost_prices_1600g.txt", MFABRIC_TEST_DATA_DIR);
}

TEST(CliGolden, TopologyText) {
  expect_golden("topology --fabric mfabric:alpha=6,region=4 --servers 16",
                "topology_mfabric_16.txt");
}

TEST(CliGolden, TopologyJson) {
  expect_golden("topology --fabric fat-tree --servers 128 --radix 16 --json",
                "topology_fat_tree_r16.json");
}

TEST(CliGolden, TopologyDot) {
  expect_golden(
      "topology --fabric mfabric:alpha=2,region=2 --servers 2 --gpus-per-server 4 "
      "--nics-per-server 4 --dot",
      "topology_small.dot");
}

TEST(CliGolden, FabricsList) {
  expect_golden("fabrics", "fabrics.txt");
}

TEST(CliErrors, UnknownFabric) {
  expect_error("cost --fabric bogus", "unknown fabric 'bogus'");
}
TEST(CliErrors, UnknownFabricParameter) {
  expect_error("topology --fabric fat-tree:radx=16", "radx");
}
TEST(CliErrors, AlphaAboveNics) {
  expect_error("cost --fabric mfabric:alpha=9", "alpha");
}
TEST(CliErrors, AlphaEqualToNics) {
  expect_error("cost --fabric mfabric:alpha=8", "alpha");
}
TEST(CliErrors, RegionNotDividingServers) {
  expect_error("cost --fabric mfabric:region=5", "region");
}
TEST(CliErrors, UnitlessLink) {
  expect_error("cost --link 400", "--link: '400' has no unit");
}
TEST(CliErrors, NegativeLink) {
  expect_error("cost --link -400G", "negative");
}
TEST(CliErrors, UnknownLinkUnit) {
  expect_error("cost --link 400Q", "unknown rate unit");
}
TEST(CliErrors, LinkSpeedWithoutPrices) {
  expect_error("cost --link 300G", "300G");
}
TEST(CliErrors, NegativeLatency) {
  expect_error("topology --link-latency -1us", "--link-latency");
}
TEST(CliErrors, ZeroServers) {
  expect_error("cost --servers 0", "--servers");
}
TEST(CliErrors, NegativeServers) {
  expect_error("topology --servers -4", "--servers");
}
TEST(CliErrors, UnknownConvention) {
  expect_error("cost --convention guess", "--convention");
}
TEST(CliErrors, MissingPriceFile) {
  expect_error("cost --prices /nonexistent/prices.yaml", "/nonexistent/prices.yaml");
}
TEST(CliErrors, MalformedPriceFile) {
  expect_error("cost --prices " + data("prices_malformed.yaml"), "prices_malformed.yaml");
}
TEST(CliErrors, NegativePrice) {
  expect_error("cost --prices " + data("prices_negative.yaml"), "link_speeds.400G.nic");
}
TEST(CliErrors, TooManyHostsForRadix) {
  expect_error("cost --fabric fat-tree --servers 1024 --radix 8", "radix");
}
TEST(CliErrors, UnknownOptionIsUsageError) {
  expect_error("cost --frabric fat-tree", "--frabric", 2);
}
TEST(CliErrors, NoCommandIsUsageError) {
  expect_error("", "subcommand", 2);
}

TEST(CliHelp, EveryCommandExplainsUnits) {
  for (const char* cmd : {"cost", "topology"}) {
    const Outcome o = run(std::string(cmd) + " --help");
    EXPECT_EQ(o.exit_code, 0);
    EXPECT_NE(o.out.find("--link"), std::string::npos);
    EXPECT_NE(o.out.find("400G"), std::string::npos) << "help of " << cmd << " names no unit";
    EXPECT_NE(o.out.find("--servers"), std::string::npos);
  }
  const Outcome top = run("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("cost"), std::string::npos);
  EXPECT_NE(top.out.find("topology"), std::string::npos);
}

}  // namespace
