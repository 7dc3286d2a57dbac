#include "report/compare_paper.h"

#include <gtest/gtest.h>

#include "report/compare_report.h"

namespace mfabric::report {
namespace {

study::CompareRun run(const std::string& model, double link, const std::string& fabric,
                      double seconds) {
  study::CompareRun r;
  r.model = model;
  r.link_gbps = link;
  r.fabric = fabric;
  r.iteration_time_s = seconds;
  return r;
}

TEST(PaperChecks, EachFigureAgainstWhatThePaperStates) {
  study::CompareResult r;
  r.assumptions = study::Assumptions::Paper;
  r.runs = {
      run("mixtral-8x22b", 400, "fat-tree", 10), run("mixtral-8x22b", 400, "mfabric", 10.5),
      run("mixtral-8x22b", 400, "topoopt", 12),  run("mixtral-8x22b", 400, "fat-tree-3to1", 20),
      run("mixtral-8x7b", 400, "fat-tree", 10),  run("mixtral-8x7b", 400, "mfabric", 12)};
  // Paper formulas: (10 x $2.1M) / (10.5 x $1M) = 2.0x the fat-tree's perf/$. Counted from the
  // built topology the two cost the same (1 / 1.05 = 0.95x), and the comparison counts that way:
  // the check against the paper's figure still counts by its formulas.
  r.runs[0].cost_paper.nics = 2.1e6;
  r.runs[1].cost_paper.nics = 1e6;
  r.runs[0].cost_built.nics = 1e6;
  r.runs[1].cost_built.nics = 1e6;
  r.cost_convention = fabric::CostConvention::Built;
  study::relate_to_fat_tree(r.runs, r.cost_convention);
  ASSERT_TRUE(r.runs[1].perf_per_dollar_vs_fat_tree.has_value());
  EXPECT_NEAR(*r.runs[1].perf_per_dollar_vs_fat_tree, 1 / 1.05, 1e-12);
  const std::vector<PaperCheck> checks = paper_checks(r);
  ASSERT_EQ(checks.size(), 5u);
  // Mixtral 8x22B: 1.05x the fat-tree is within 10% of "comparable" (1x); perf/$ 2.0 inside
  // 1.9-2.3; TopoOpt 12 / 10.5 = 1.14x is below 0.9 x 1.3 = 1.17; 3:1 20 / 10.5 = 1.90x is above
  // 1.1 x 1.6 = 1.76.
  EXPECT_EQ(checks[0].figure, "mfabric / fat-tree (time)");
  EXPECT_DOUBLE_EQ(checks[0].value, 1.05);
  EXPECT_TRUE(checks[0].within);
  EXPECT_EQ(checks[1].figure, "perf/$ vs fat-tree (paper formulas)");
  EXPECT_NEAR(checks[1].value, 2.0, 1e-12);
  EXPECT_TRUE(checks[1].within);
  EXPECT_EQ(checks[2].figure, "topoopt / mfabric (time)");
  EXPECT_NEAR(checks[2].value, 12 / 10.5, 1e-12);
  EXPECT_FALSE(checks[2].within);
  EXPECT_EQ(checks[3].figure, "fat-tree-3to1 / mfabric (time)");
  EXPECT_FALSE(checks[3].within);
  // Mixtral 8x7B: 1.2x is a miss; no perf/$ figure without one, no 3:1 row for this model.
  EXPECT_EQ(checks[4].model, "mixtral-8x7b");
  EXPECT_FALSE(checks[4].within);
  const std::string text = paper_checks_text(checks);
  EXPECT_NE(text.find("against the paper's stated figures"), std::string::npos);
  EXPECT_EQ(compare_json(r, false).at("paper_checks").size(), 5u);
  EXPECT_EQ(compare_json(r, false).at("assumptions"), "paper");
  r.assumptions = study::Assumptions::Default;
  EXPECT_TRUE(compare_json(r, false).at("paper_checks").empty());
  EXPECT_EQ(compare_text(r).find("against the paper"), std::string::npos);
}

}  // namespace
}  // namespace mfabric::report
