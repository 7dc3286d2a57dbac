#include "report/sweep_heatmap.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "report/sweep_report.h"

namespace mfabric::report {
namespace {

// Two delays x two efficiencies of mFabric under two policies, and the fat-tree at each
// efficiency: the reference of an mFabric point is the fat-tree point of its efficiency.
constexpr const char* kSweep = R"(
experiment:
  cluster: {servers: 8}
  fabric: {kind: mfabric, region: 8}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8}
  calibration: {compute: {expert_gemm: 0.5}}
grid:
  calibration.compute.expert_gemm: [0.5, 0.25]
  fabric.policy: [block, paper-sim]
  fabric.reconfiguration: [25ms, 10us]
points:
  - {calibration.compute.expert_gemm: 0.5, fabric: fat-tree}
  - {calibration.compute.expert_gemm: 0.25, fabric: fat-tree}
heatmap:
  x: fabric.reconfiguration
  y: calibration.compute.expert_gemm
  reference: {fabric: fat-tree}
)";

study::SweepResult result_with_times(const study::SweepSpec& spec) {
  study::SweepResult r;
  for (std::size_t k = 0; k < spec.points.size(); ++k) {
    study::SweepRun run;
    run.index = k;
    // mFabric points: 11, 12, ... seconds; the fat-tree at 0.5: 10 s, at 0.25: 20 s.
    run.figures.iteration_time_s = static_cast<double>(11 + k);
    if (k == 8) run.figures.iteration_time_s = 10;
    if (k == 9) run.figures.iteration_time_s = 20;
    r.runs.push_back(run);
  }
  return r;
}

TEST(SweepHeatmap, EachPointOverItsReferenceByHand) {
  const study::SweepSpec spec = study::parse_sweep(kSweep, "h.yaml");
  ASSERT_TRUE(spec.heatmap);
  ASSERT_EQ(spec.points.size(), 10u);
  study::SweepResult r = result_with_times(spec);
  r.runs[3].figures.error = "failed";  // left out
  const std::vector<HeatmapCell> cells = heatmap_cells(spec, r);
  ASSERT_EQ(cells.size(), 7u);
  // Point 0: gemm 0.5, block, 25ms: 11 s over the fat-tree's 10 s at 0.5.
  EXPECT_EQ(cells[0].panel, "fabric.policy=block");
  EXPECT_EQ(cells[0].x, "25ms");
  EXPECT_EQ(cells[0].y, "0.5");
  EXPECT_DOUBLE_EQ(cells[0].ratio, 1.1);
  // Point 4: gemm 0.25, block, 25ms: 15 s over 20 s.
  EXPECT_EQ(cells[3].y, "0.25");
  EXPECT_DOUBLE_EQ(cells[3].ratio, 15.0 / 20.0);
  // Points 2 and 3 are paper-sim: their own panel; 3 failed.
  EXPECT_EQ(cells[2].panel, "fabric.policy=paper-sim");
  EXPECT_DOUBLE_EQ(cells[2].ratio, 1.3);
  // Without the fat-tree at 0.25, the 0.25 points have no reference.
  r.runs[9].figures.error = "failed";
  EXPECT_EQ(heatmap_cells(spec, r).size(), 3u);
  // JSON and text carry them; a sweep without a heatmap adds no key.
  EXPECT_EQ(sweep_json(spec, result_with_times(spec), false).at("heatmap").at("cells").size(), 8u);
  EXPECT_NE(sweep_text(spec, result_with_times(spec)).find("iteration time over the reference"),
            std::string::npos);
}

TEST(SweepHeatmap, OneFigurePerPanelOnThePage) {
  const study::SweepSpec spec = study::parse_sweep(kSweep, "h.yaml");
  const std::string html = heatmap_html(spec, heatmap_cells(spec, result_with_times(spec)));
  EXPECT_NE(html.find("<figure id=\"heatmap-0\">"), std::string::npos);
  EXPECT_NE(html.find("<figure id=\"heatmap-1\">"), std::string::npos);
  EXPECT_EQ(html.find("<figure id=\"heatmap-2\">"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("1.10"), std::string::npos);  // point 0's cell label
}

TEST(SweepHeatmap, AxesSortByValueWhenEveryValueIsANumber) {
  EXPECT_EQ(heatmap_axis({"25ms", "10us", "1ms", "100ms", "10ms"}),
            (std::vector<std::string>{"10us", "1ms", "10ms", "25ms", "100ms"}));
  EXPECT_EQ(heatmap_axis({"1.0", "0.0645", "0.5", "0.5"}),
            (std::vector<std::string>{"0.0645", "0.5", "1.0"}));
  EXPECT_EQ(heatmap_axis({"block", "paper-sim", "block"}),
            (std::vector<std::string>{"block", "paper-sim"}));
}

TEST(SweepHeatmap, BadHeatmapsAreOneLine) {
  const std::string base = kSweep;
  const auto error_of = [](const std::string& text) {
    try {
      study::parse_sweep(text, "h.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string s = base;
  s.replace(s.find("  y: calibration"), std::string("  y: calibration.compute.expert_gemm").size(),
            "  y: cluster.link");
  EXPECT_EQ(error_of(s),
            "h.yaml: heatmap.y: 'cluster.link' is not a field of the sweep (its fields: "
            "calibration.compute.expert_gemm, fabric.policy, fabric.reconfiguration, fabric)");
  s = base;
  s.replace(s.find("{fabric: fat-tree}\n"), std::string("{fabric: fat-tree}").size(),
            "{fabric: rail-optimized}");
  EXPECT_EQ(error_of(s),
            "h.yaml: heatmap.reference: no point of the sweep sets these fields to these values");
}

}  // namespace
}  // namespace mfabric::report
