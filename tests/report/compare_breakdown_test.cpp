// Where mFabric's iteration time goes (time_breakdown_text), in compare's text and its page.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/compare_html.h"
#include "report/compare_report.h"
#include "report/compare_samples.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

// The paper-sized numbers of the issue: Mixtral 8x22B at 400G on 1024 GPUs.
CompareRun breakdown_run() {
  CompareRun r = run("mixtral-8x22b", 400, "mfabric", 15.3, cost(1e6, 0, 0, 0, 0, 0), 0, 0);
  r.gpus = 1024;
  r.iterations = 1;
  r.compute_s = 5;
  r.exposed_communication_s = 3.3;
  study::ReconfigurationSummary c;
  c.count = 120;
  c.time_s = 3;
  c.holds = 13736;
  c.all_to_alls = 20480;
  c.held_time_s = 301.6;
  c.regions = 16;
  c.critical_holds = 107;
  c.critical_held_s = 4.6;
  r.reconfiguration = c;
  return r;
}

TEST(CompareBreakdown, SaysWhereTheTimeGoesAndWhatTheSummedHoldsAre) {
  CompareRun r = breakdown_run();
  // Idle otherwise: 15.3 - 5 - 3.3 = 7; mean hold 301.6 / 13,736 = 21.96 ms; critical path
  // 4.6 / 15.3 = 30.07%.
  EXPECT_EQ(time_breakdown_text(r),
            (std::vector<std::string>{
                "mixtral-8x22b at 400G on mfabric: of the 15.30 s iteration, a GPU computes for "
                "5.00 s, waits for communication for 3.30 s (holds for circuits included) and is "
                "otherwise idle for 7.00 s (pipeline bubbles: waiting for other GPUs' work); "
                "means over the job's 1,024 GPUs.",
                "120 reconfigurations: circuits down for 3.00 s summed over the 16 regions.",
                "All-to-alls held for circuits: 13,736 of 20,480, 301.6 s summed over those holds "
                "(22 ms each on average); the 16 regions, and the EP groups within one, wait at "
                "the same time, so the sum is not part of the iteration. On the critical path: "
                "107 holds, 4.60 s of the 15.30 s iteration (30.1%)."}));
  // Over two iterations the critical path's wait is shared out per iteration: 9.2 / 2 = 4.6.
  r.iterations = 2;
  r.reconfiguration->critical_held_s = 9.2;
  const std::vector<std::string> two = time_breakdown_text(r);
  ASSERT_EQ(two.size(), 3u);
  EXPECT_NE(two[1].find("120 reconfigurations over its 2 iterations"), std::string::npos);
  EXPECT_NE(two[2].find("13,736 of 20,480 over its 2 iterations"), std::string::npos);
  EXPECT_NE(two[2].find("4.60 s per iteration of the 15.30 s iteration (30.1%)"), std::string::npos)
      << two[2];
  // No holds; no reconfiguration summary (not mFabric); a failed run.
  r = breakdown_run();
  r.reconfiguration->holds = 0;
  r.reconfiguration->held_time_s = 0;
  EXPECT_EQ(time_breakdown_text(r).back(), "No all-to-all waited for circuits.");
  r.reconfiguration.reset();
  EXPECT_TRUE(time_breakdown_text(r).empty());
  r = breakdown_run();
  r.error = "stalled";
  EXPECT_TRUE(time_breakdown_text(r).empty());
}

// The result with the breakdown run and its fat-tree, in both text and page.
TEST(CompareBreakdown, IsInTheTextOutputAndThePage) {
  CompareResult r;
  CompareRun ft = run("mixtral-8x22b", 400, "fat-tree", 10, cost(2e6, 0, 0, 0, 0, 0), 10, 2e6);
  ft.compute_s = 5;
  ft.exposed_communication_s = 1.25;
  r.runs = {ft, breakdown_run()};
  r.runs[1].relative_iteration_time = 15.3 / 10;
  r.runs[1].perf_per_dollar_vs_fat_tree = (10 * 2e6) / (15.3 * 1e6);
  const std::string text = compare_text(r);
  EXPECT_NE(text.find("where mFabric's time goes:"), std::string::npos) << text;
  EXPECT_NE(text.find("13,736 of 20,480"), std::string::npos) << text;
  const std::string html = compare_html(r);
  const std::size_t section = html.find("<section id=\"time-breakdown\">");
  ASSERT_NE(section, std::string::npos);
  const std::string breakdown = html.substr(section, html.find("</section>", section) - section);
  // compute, waiting, idle otherwise, the fat-tree's wait; holds of all, their sum, mean; the
  // critical path.
  for (const char* cell : {">5<", ">3.3<", ">7<", ">1.25<", ">13,736 of 20,480<", ">301.6<", ">22<",
                           ">107, 4.60 s (30.1%)<"})
    EXPECT_NE(breakdown.find(cell), std::string::npos) << cell;
  EXPECT_NE(breakdown.find("so the sum is not part of the iteration"), std::string::npos);
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
