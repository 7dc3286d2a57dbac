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

TEST(CliGolden, BuiltCostComparesAllFabrics) {
  expect_golden("cost --convention built", "cost_default.txt");
}

// One cost answer: cost counts as compare and sweep do (the paper's formulas) unless told
// otherwise, and says so.
TEST(CliGolden, CostCountsThePapersFormulasByDefault) {
  const Outcome by_default = run("cost --link 100G");
  const Outcome paper = run("cost --convention paper --link 100G");
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(by_default.out, paper.out);
  EXPECT_NE(by_default.out.find("paper convention"), std::string::npos) << by_default.out;
  EXPECT_NE(by_default.out, run("cost --convention built --link 100G").out);
}

TEST(CliGolden, PaperConventionAt100G) {
  expect_golden("cost --convention paper --link 100G", "cost_paper_100g.txt");
}

TEST(CliGolden, SingleFabricBreakdown) {
  expect_golden("cost --fabric mfabric --servers 16 --link 800G --convention built",
                "cost_mfabric_16.txt");
}

TEST(CliGolden, CostJsonOneFabric) {
  expect_golden("cost --fabric fat-tree:oversubscription=3 --convention paper --json",
                "cost_fat_tree_3to1.json");
}

TEST(CliGolden, CostWithPriceFile) {
  expect_golden(
      "cost --fabric fat-tree --fabric mfabric --link 1.6T --prices prices_1600g.yaml "
      "--convention built",
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
// The conventions of well-liked command-line tools (docs/cli.md, "Conventions").
TEST(CliConventions, BareMfabricAndHelpPrintTheHelp) {
  const Outcome bare = run("");
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("Usage: mfabric"), std::string::npos) << bare.out;
  EXPECT_EQ(run("help").out, bare.out);
  const Outcome help = run("help compare");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, run("compare --help").out);
  EXPECT_NE(help.out.find("Usage: mfabric compare"), std::string::npos) << help.out;
  // By importance: the answer first.
  EXPECT_LT(bare.out.find("  compare "), bare.out.find("  simulate "));
  EXPECT_LT(bare.out.find("  simulate "), bare.out.find("  cost "));
  EXPECT_LT(bare.out.find("  cost "), bare.out.find("  predict "));
}

TEST(CliConventions, MistypedCommandsAndOptionsGetASuggestion) {
  expect_error("simulat x.yaml", "unknown command 'simulat'; did you mean 'simulate'?", 2);
  expect_error("help simulat", "did you mean 'simulate'?", 2);
  expect_error("comp", "did you mean 'compare'?", 2);
  expect_error("cost --frabric fat-tree", "did you mean '--fabric'?", 2);
  expect_error("compare --otu build/x", "did you mean '--out'?", 2);
  // Nothing near: the commands are listed.
  expect_error("bogus", "unknown command 'bogus' (commands: compare, simulate, sweep,", 2);
}

// Every usage error is one line in the style of every other error, naming where to look.
TEST(CliConventions, EveryParseErrorIsOneLineInOneStyle) {
  for (const char* args :
       {"compare --servers abc", "compare --jobs", "cost --frabric x", "sweep", "simulate a b",
        "compare --servers 1.5", "cost --servers=", "plan --alpha"}) {
    const Outcome o = run(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("mfabric: error: ", 0), 0u) << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << "\n" << o.err;
    EXPECT_NE(o.err.find("--help')"), std::string::npos) << args << "\n" << o.err;
  }
  expect_error("compare --servers abc", "--servers: expected a whole number, got 'abc'", 2);
}

// Every command's help ends with examples of it and writes its defaults one way.
TEST(CliConventions, EveryCommandHasExamplesAndOneDefaultStyle) {
  for (const char* cmd : {"compare", "simulate", "sweep", "cost", "topology", "fabrics", "workload",
                          "models", "kernel", "trace", "plan", "predict", "ocs-emulator"}) {
    const Outcome o = run(std::string(cmd) + " --help");
    ASSERT_EQ(o.exit_code, 0) << cmd;
    EXPECT_NE(o.out.find("Examples:\n  mfabric " + std::string(cmd)), std::string::npos)
        << cmd << "\n"
        << o.out;
    for (const char* other :
         {"INT=", "TEXT=", "FLOAT=", "UINT=", "(default ", "(default)", "[default"}) {
      EXPECT_EQ(o.out.find(other), std::string::npos) << cmd << ": " << other << "\n" << o.out;
    }
  }
}

// A list is given the same way everywhere: repeated, comma-separated or both, and a fabric spec
// keeps its own commas.
TEST(CliConventions, ListsAreRepeatedOrCommaSeparated) {
  const Outcome repeated = run("cost --fabric fat-tree --fabric mfabric:alpha=4,region=8");
  ASSERT_EQ(repeated.exit_code, 0) << repeated.err;
  EXPECT_EQ(run("cost --fabrics fat-tree,mfabric:alpha=4,region=8").out, repeated.out);
  EXPECT_NE(repeated.out.find("mfabric"), std::string::npos);
  expect_error("cost --fabric fat-tree,,mfabric", "--fabric: expected a comma-separated list");
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
