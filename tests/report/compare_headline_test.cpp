// The verdict sentences that open compare's outputs (compare_headline), checked as text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/cost.h"
#include "report/compare_report.h"
#include "report/compare_samples.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

TEST(CompareHeadline, ASentencePerModelAndLinkWithTheFiguresBehindIt) {
  CompareResult r = one_model();
  // Speed 10 / 12.5 = 0.80x; cost 1 / 4 = 0.25x; perf/$ 0.80 / 0.25 = 3.20x.
  EXPECT_EQ(compare_headline(r),
            std::vector<std::string>{
                "m at 400G: mFabric trains at 0.80x the speed of the fat-tree (1.25x slower: 12.50 "
                "s vs 10.00 s per "
                "iteration) for 0.25x its network cost ($1,000,000 vs $4,000,000, paper "
                "formulas), 3.20x its perf/$."});
  // With the routing's skew known (a run of this build), the verdict names it.
  r.runs[1].busiest_expert_over_mean = 2.5;
  EXPECT_EQ(compare_headline(r).at(0),
            "m at 400G: mFabric trains at 0.80x the speed of the fat-tree (1.25x slower: 12.50 s "
            "vs 10.00 s per "
            "iteration) for 0.25x its network cost ($1,000,000 vs $4,000,000, paper formulas), "
            "3.20x its perf/$. Its expert routing gives the busiest expert 2.50x the mean's "
            "tokens.");
  r.runs[1].busiest_expert_over_mean.reset();
  // Built: cost 2 / 3 = 0.67x, perf/$ 0.80 / (2 / 3) = 1.20x.
  r.cost_convention = fabric::CostConvention::Built;
  EXPECT_EQ(compare_headline(r),
            std::vector<std::string>{
                "m at 400G: mFabric trains at 0.80x the speed of the fat-tree (1.25x slower: 12.50 "
                "s vs 10.00 s per "
                "iteration) for 0.67x its network cost ($2,000,000 vs $3,000,000, built "
                "topology), 1.20x its perf/$."});
}

// With a spread, the verdict gives each ratio's range over the pairs at one seed and skew, and
// says when the range crosses 1x that which fabric is faster depends on routing.
TEST(CompareHeadline, TheVerdictGivesItsRangeAndWhenItCrossesOne) {
  CompareResult r = one_model();
  r.spread_seeds = 3;
  r.spread_skew_band = true;
  r.runs[0].spread = {{2, "default", 10, ""}, {1, "low", 8, ""}, {1, "high", 12, ""}};
  r.runs[1].spread = {{2, "default", 11, ""}, {1, "low", 7.5, ""}, {1, "high", 15, ""}};
  // Speeds 10/12.5 = 0.80, 10/11 = 0.91, 8/7.5 = 1.07, 12/15 = 0.80; perf/$ = speed / 0.25.
  EXPECT_EQ(compare_headline(r).at(0),
            "m at 400G: mFabric trains at 0.80x (0.80x-1.07x over 3 seeds and the routing skew "
            "band) the speed of the fat-tree (1.25x slower: 12.50 s vs 10.00 s per iteration) "
            "for 0.25x its network cost ($1,000,000 vs $4,000,000, paper formulas), 3.20x "
            "(3.20x-4.27x) its perf/$. Which is faster depends on routing: from 0.80x (1.25x "
            "slower) to 1.07x (1.07x faster) over 3 seeds and the routing skew band.");
  // A spread run that failed is left out of the pairs; without the band it says so.
  r.spread_skew_band = false;
  r.runs[1].spread[1].error = "failed";
  r.runs[1].spread.pop_back();
  EXPECT_NE(compare_headline(r).at(0).find("0.80x (0.80x-0.91x over 3 seeds) the speed"),
            std::string::npos)
      << compare_headline(r).at(0);
  EXPECT_EQ(compare_headline(r).at(0).find("depends on routing"), std::string::npos);
}

// A faster link that made a run slower is a surprise, said with what the runs show of why; a
// run as fast or faster is not, nor one slower by less than the threshold.
TEST(CompareSurprises, AFasterLinkThatIsSlowerIsNamedWithItsCauses) {
  CompareResult r;
  const fabric::CostBreakdown c = cost(1e6, 0, 0, 0, 0, 0);
  CompareRun slow = run("m", 200, "mfabric", 10, c, 0, 0);
  CompareRun fast = run("m", 400, "mfabric", 10.5, c, 0, 0);
  CompareRun fastest = run("m", 800, "mfabric", 10.5 * 1.0005, c, 0, 0);  // under 0.1%
  slow.reconfiguration = study::ReconfigurationSummary{};
  fast.reconfiguration = study::ReconfigurationSummary{};
  slow.reconfiguration->count = 1650;
  fast.reconfiguration->count = 1693;
  slow.reconfiguration->critical_held_s = 3.2;
  fast.reconfiguration->critical_held_s = 4.5;
  slow.reconfiguration->critical_holds = 150;
  fast.reconfiguration->critical_holds = 205;
  slow.exposed_communication_s = 2;
  fast.exposed_communication_s = 1;  // less: not a cause
  CompareRun tree_slow = run("m", 200, "fat-tree", 9, c, 0, 0);
  CompareRun tree_fast = run("m", 400, "fat-tree", 9.5, c, 0, 0);
  tree_slow.all_to_all = "direct";
  tree_fast.all_to_all = "hierarchical";
  CompareRun tree_fastest = run("m", 800, "fat-tree", 8, c, 0, 0);
  r.runs = {tree_slow, slow, tree_fast, fast, tree_fastest, fastest};
  std::vector<Surprise> x = surprises(r);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].fabric, "fat-tree");
  EXPECT_EQ(x[0].causes, std::vector<std::string>{"another all-to-all (hierarchical vs direct)"});
  EXPECT_EQ(x[1].fabric, "mfabric");
  EXPECT_EQ(x[1].link_gbps, 400);
  EXPECT_EQ(x[1].than_link_gbps, 200);
  EXPECT_NEAR(x[1].slower_by, 0.05, 1e-12);
  EXPECT_EQ(surprise_text(x[1]),
            "m on mfabric: at 400G the iteration is 5.0% slower than at 200G, though the links "
            "are faster; what the runs show: more reconfigurations (1,693 vs 1,650); more of the "
            "all-to-alls' holds for circuits on the critical path (4.50 s vs 3.20 s, 205 vs 150 "
            "holds).");
  x[1].causes.clear();
  EXPECT_NE(surprise_text(x[1]).find("show no cause"), std::string::npos);
  EXPECT_NE(compare_text(r).find("\nsurprises:\n"), std::string::npos);
  EXPECT_EQ(compare_json(r, false)["surprises"].size(), 2u);
}

// The verdict names the baseline's all-to-all, and the ones tried when it was the fastest of
// several (the strongest baseline); the table marks it.
TEST(CompareHeadline, TheVerdictNamesTheBaselinesAllToAll) {
  CompareResult r = one_model();
  ASSERT_EQ(r.runs[0].fabric, "fat-tree");
  r.runs[0].all_to_all = "direct";
  EXPECT_EQ(compare_headline(r).at(0).rfind(
                "m at 400G: mFabric trains at 0.80x the speed of the fat-tree with the direct "
                "all-to-all (1.25x slower: 12.50 s vs 10.00 s per iteration)",
                0),
            0u)
      << compare_headline(r).at(0);
  EXPECT_EQ(all_to_all_cell(r.runs[0]), "direct");
  r.runs[0].all_to_all = "hierarchical";
  r.runs[0].all_to_all_trials = {
      {"direct", 11.0, ""}, {"pxn", 0, "why"}, {"hierarchical", 10.0, ""}};
  EXPECT_EQ(compare_headline(r).at(0).rfind(
                "m at 400G: mFabric trains at 0.80x the speed of the fat-tree with the "
                "hierarchical all-to-all, the fastest there of direct, pxn and hierarchical "
                "(1.25x slower: 12.50 s vs 10.00 s per iteration)",
                0),
            0u)
      << compare_headline(r).at(0);
  EXPECT_EQ(all_to_all_cell(r.runs[0]), "hierarchical*");
  EXPECT_EQ(all_to_all_cell(r.runs[1]), "-");
}

// The verdict says which job ran: the paper's (its convention), a recipe's, or the file's own.
TEST(CompareHeadline, TheVerdictNamesTheJobThatRan) {
  CompareResult r = one_model();
  config::TrainingJob job;
  job.model = "m";
  job.convention = "paper";
  job.papers_job = true;
  job.tp = 4;
  job.pp = 4;
  job.ep = 8;
  job.micro_batch = 8;
  job.seq = 4096;
  job.global_batch = 128;
  r.models.push_back(job);
  EXPECT_EQ(compare_headline(r).at(0).rfind(
                "m at 400G (the paper's job: TP 4, PP 4, EP 8, micro-batch 8 x 4096 tokens, "
                "global batch 128): mFabric trains at 0.80x",
                0),
            0u)
      << compare_headline(r).at(0);
  r.models[0].convention = "megatron";
  r.models[0].papers_job = false;
  r.models[0].recipe_of = "m";
  r.models[0].vp = 2;
  r.models[0].schedule = "interleaved";
  r.models[0].precision = "fp8";
  r.models[0].recompute = "selective";
  EXPECT_EQ(compare_headline(r).at(0).rfind(
                "m at 400G (its recipe's job: TP 4, PP 4, VP 2, EP 8, ETP 1, micro-batch 8 x "
                "4096 tokens, global batch 128, fp8, selective recomputation): mFabric",
                0),
            0u)
      << compare_headline(r).at(0);
  r.models[0].recipe_of.clear();
  r.models[0].schedule = "dualpipe";
  r.models[0].vp = 1;
  EXPECT_NE(compare_headline(r).at(0).find("dualpipe, fp8, selective recomputation, megatron "
                                           "convention): mFabric"),
            std::string::npos)
      << compare_headline(r).at(0);
}

TEST(CompareHeadline, SaysWhatItCannotCompareAndNamesTheFailedRuns) {
  CompareResult r = one_model();
  r.runs[0].error = "stalled";
  EXPECT_EQ(
      compare_headline(r),
      (std::vector<std::string>{
          "m at 400G: mFabric takes 12.50 s per iteration and its network costs $1,000,000 "
          "(paper formulas); the fat-tree run failed, so there is nothing to compare it with.",
          "1 run failed: m at 400G on fat-tree (the errors are with the results)."}));
  r.runs.erase(r.runs.begin());
  EXPECT_EQ(compare_headline(r).at(0),
            "m at 400G: mFabric takes 12.50 s per iteration and its network costs $1,000,000 "
            "(paper formulas); there is no fat-tree run to compare it with.");
  r.runs[0].error = "no route";
  EXPECT_EQ(compare_headline(r).at(0),
            "m at 400G: the mfabric run failed, so there is no verdict.");
  r = one_model();
  r.runs[1].fabric = "topoopt";
  r.runs[1].reconfiguration.reset();
  EXPECT_EQ(compare_headline(r).at(0).rfind("No mFabric run in this comparison", 0), 0u);
  EXPECT_TRUE(compare_headline(CompareResult{}).empty());
}

TEST(CompareHeadline, EveryMfabricVariantHasItsSentenceNamedByItsLabel) {
  CompareResult r = one_model();
  CompareRun variant = r.runs[1];
  variant.fabric = "mfabric:alpha=4";
  variant.iteration_time_s = 20;  // speed 0.50x, perf/$ 0.50 / 0.25 = 2.00x
  r.runs.push_back(variant);
  const std::vector<std::string> h = compare_headline(r);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].rfind("m at 400G: mFabric (mfabric) trains at 0.80x", 0), 0u) << h[0];
  EXPECT_EQ(h[1].rfind("m at 400G: mFabric (mfabric:alpha=4) trains at 0.50x", 0), 0u) << h[1];
  EXPECT_NE(h[1].find("2.00x its perf/$"), std::string::npos) << h[1];
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
