// The sweep report's figures: the reference runs as lines, log or from-zero y axes, tics in the
// field's unit and a legend entry per series. Results are made up by hand (no simulation), the
// scripts are run by gnuplot and the SVG's text read back.
#include "report/sweep_figure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/sweep_report.h"

namespace mfabric::report {
namespace {

// As tests/study/data/small-sweep.yaml: three delays at two link speeds, and the fat-tree at
// 400G, which does not set the delay (x): the reference.
constexpr const char* kDelaySweep = R"(
name: delay
experiment:
  cluster: {servers: 4, link: 400G}
  fabric: "mfabric:alpha=6,region=4"
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8, global_batch: 16}
grid:
  fabric.reconfiguration: [10us, 25ms, 1s]
  cluster.link: [100G, 400G]
points:
  - {fabric: fat-tree, cluster.link: 400G}
x: fabric.reconfiguration
)";

// A finished run per point with these iteration times, tokens/s 1000 / time and a network of
// $1M: the three metrics are then simple functions of the time.
study::SweepResult runs_with_times(const std::vector<double>& seconds,
                                   const std::string& fabric = "mfabric") {
  study::SweepResult r;
  for (std::size_t k = 0; k < seconds.size(); ++k) {
    study::SweepRun run;
    run.index = k;
    run.figures.fabric = fabric;
    run.figures.iteration_time_s = seconds[k];
    run.figures.tokens_per_s = 1000 / seconds[k];
    run.figures.cost_paper.nics = 1e6;
    r.runs.push_back(run);
  }
  return r;
}

// The text of every <text> element of an SVG: tic labels, axis labels, legend entries.
std::vector<std::string> svg_texts(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex text("<text[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

bool has(const std::vector<std::string>& texts, const std::string& t) {
  return std::find(texts.begin(), texts.end(), t) != texts.end();
}

std::string svg_of(const study::SweepSpec& spec, const study::SweepResult& r, SweepMetric m) {
  const std::string script = sweep_figure_script(spec, r, sweep_axis(spec), m);
  return script.empty() ? "" : run_gnuplot(script, "report.html");
}

const SweepLine* line_titled(const std::vector<SweepLine>& lines, const std::string& title) {
  for (const SweepLine& l : lines) {
    if (l.title == title) return &l;
  }
  return nullptr;
}

TEST(SweepFigure, TheReferenceRunIsALineAcrossTheAxisNamedInTheLegend) {
  const study::SweepSpec spec = study::parse_sweep(kDelaySweep, "d.yaml");
  ASSERT_EQ(spec.points.size(), 7u);
  // Points 0-5: (10us, 100G), (10us, 400G), (25ms, 100G), ...; point 6: the fat-tree, 6.5 s.
  const study::SweepResult r = runs_with_times({11, 7.1, 11.1, 7.2, 12, 8, 6.5}, "mfabric");
  const std::vector<SweepLine> lines =
      sweep_lines(spec, r, sweep_axis(spec), SweepMetric::IterationTime);
  ASSERT_EQ(lines.size(), 3u);
  const SweepLine* reference = line_titled(lines, "fat-tree (reference), 400G");
  ASSERT_NE(reference, nullptr) << lines.back().title;
  EXPECT_TRUE(reference->reference && reference->across_axis);
  // Flat at the fat-tree's time, from the smallest delay to the largest.
  ASSERT_EQ(reference->points.size(), 2u);
  EXPECT_NEAR(reference->points[0].first, 10e-6, 1e-15);
  EXPECT_NEAR(reference->points[1].first, 1.0, 1e-12);
  EXPECT_EQ(reference->points[0].second, 6.5);
  EXPECT_EQ(reference->points[1].second, 6.5);
  // Each metric has it: tokens/s is 1000 / 6.5 for the fat-tree.
  const std::vector<SweepLine> tokens_lines =
      sweep_lines(spec, r, sweep_axis(spec), SweepMetric::TokensPerSecond);
  const SweepLine* tokens = line_titled(tokens_lines, "fat-tree (reference), 400G");
  ASSERT_NE(tokens, nullptr);
  EXPECT_DOUBLE_EQ(tokens->points[0].second, 1000 / 6.5);
  // ...and it reaches the drawing, in the legend, in every figure of the page.
  const std::string html = sweep_html(spec, r);
  std::size_t figures_with_it = 0;
  for (const std::string& t : svg_texts(html))
    figures_with_it += t == "fat-tree (reference), 400G" ? 1 : 0;
  EXPECT_EQ(figures_with_it, 3u);
  // A failed reference has no line.
  study::SweepResult failed = r;
  failed.runs[6].figures.error = "too large";
  EXPECT_EQ(sweep_lines(spec, failed, sweep_axis(spec), SweepMetric::IterationTime).size(), 2u);
}

TEST(SweepFigure, EachSeriesIsNamedByWhatTellsItApart) {
  const study::SweepSpec spec = study::parse_sweep(kDelaySweep, "d.yaml");
  const study::SweepResult r = runs_with_times({11, 7.1, 11.1, 7.2, 12, 8, 6.5});
  const std::vector<std::string> texts = svg_texts(svg_of(spec, r, SweepMetric::IterationTime));
  EXPECT_TRUE(has(texts, "100G") && has(texts, "400G")) << ::testing::PrintToString(texts);
  EXPECT_FALSE(has(texts, "delay")) << "the sweep's name is not a series";

  // Two models, two efficiencies (bare numbers: with their field's name) and a switching rule
  // every point shares (left out of the names): four series.
  const study::SweepSpec models = study::parse_sweep(R"(
name: models
experiment:
  cluster: {servers: 4}
  fabric: {kind: mfabric, region: 4}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8}
grid:
  workload.model: [mixtral-8x7b, mixtral-8x22b]
  calibration.compute.expert_gemm: [0.5, 0.25]
  fabric.switching: [when-faster]
  fabric.reconfiguration: [1ms, 25ms]
x: fabric.reconfiguration
)",
                                                     "m.yaml");
  const study::SweepResult mr = runs_with_times({1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<SweepLine> lines =
      sweep_lines(models, mr, sweep_axis(models), SweepMetric::IterationTime);
  std::vector<std::string> titles;
  for (const SweepLine& l : lines)
    titles.push_back(l.title);
  EXPECT_EQ(titles, (std::vector<std::string>{
                        "mixtral-8x7b, expert_gemm=0.5", "mixtral-8x7b, expert_gemm=0.25",
                        "mixtral-8x22b, expert_gemm=0.5", "mixtral-8x22b, expert_gemm=0.25"}));
  const std::vector<std::string> drawn =
      svg_texts(svg_of(models, mr, SweepMetric::TokensPerSecond));
  for (const std::string& t : titles)
    EXPECT_TRUE(has(drawn, t)) << t;
}

TEST(SweepFigure, FieldsMovingWithXMakeOneLine) {
  // The alpha study: the NIC count and the EPS rate change with alpha, one value each; the
  // fat-tree sets no alpha.
  const study::SweepSpec spec = study::parse_sweep(R"(
name: alpha
experiment:
  cluster: {servers: 8, link: 100G}
  fabric: {kind: mfabric, alpha: 6, region: 8}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8}
points:
  - {fabric.alpha: 2, cluster.nics_per_server: 4, fabric.eps_link: 208.7G}
  - {fabric.alpha: 4, cluster.nics_per_server: 6, fabric.eps_link: 156.6G}
  - {fabric.alpha: 6, cluster.nics_per_server: 8, fabric.eps_link: 100G}
  - {fabric: fat-tree}
x: fabric.alpha
)",
                                                   "a.yaml");
  study::SweepResult r = runs_with_times({9, 8, 7, 6});
  r.runs[3].figures.fabric = "fat-tree";
  const std::vector<SweepLine> lines =
      sweep_lines(spec, r, sweep_axis(spec), SweepMetric::IterationTime);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].title, "mfabric");  // the one series: named by its fabric
  EXPECT_EQ(lines[0].points.size(), 3u);
  EXPECT_FALSE(lines[0].reference);
  EXPECT_EQ(lines[1].title, "fat-tree (reference)");
  EXPECT_EQ(lines[1].points.front().first, 2);
  EXPECT_EQ(lines[1].points.back().first, 6);
}

TEST(SweepFigure, AHeatmapReferenceOnTheAxisIsADashedLineOverX) {
  const study::SweepSpec spec = study::parse_sweep(R"(
name: links
experiment:
  cluster: {servers: 8}
  fabric: fat-tree
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8}
grid:
  fabric: [fat-tree, "mfabric:alpha=6,region=8"]
  cluster.link: [100G, 400G, 1.6T]
x: cluster.link
heatmap: {x: cluster.link, y: fabric, reference: {fabric: fat-tree}}
)",
                                                   "l.yaml");
  const study::SweepResult r = runs_with_times({3, 2, 1, 4, 3, 2});
  const SweepAxis axis = sweep_axis(spec);
  const std::vector<SweepLine> lines = sweep_lines(spec, r, axis, SweepMetric::IterationTime);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].title, "mfabric:alpha=6,region=8");
  EXPECT_EQ(lines[1].title, "fat-tree (reference)");
  EXPECT_TRUE(lines[1].reference);
  EXPECT_FALSE(lines[1].across_axis);
  EXPECT_EQ(lines[1].points.size(), 3u);
  // Rates are written as links are: 100G, 400G, 1.6T (16x: a log axis).
  EXPECT_TRUE(axis.logarithmic);
  const std::vector<std::string> texts = svg_texts(svg_of(spec, r, SweepMetric::IterationTime));
  for (const char* tic : {"100G", "400G", "1.6T", "fat-tree (reference)"})
    EXPECT_TRUE(has(texts, tic)) << tic << " in " << ::testing::PrintToString(texts);
}

TEST(SweepFigure, TimeTicsAreWrittenInTheFieldsUnit) {
  const study::SweepSpec spec = study::parse_sweep(kDelaySweep, "d.yaml");
  const SweepAxis axis = sweep_axis(spec);
  EXPECT_EQ(axis.unit, "s");
  EXPECT_TRUE(axis.logarithmic);  // 10us to 1s
  const std::vector<std::string> texts = svg_texts(
      svg_of(spec, runs_with_times({11, 7.1, 11.1, 7.2, 12, 8, 6.5}), SweepMetric::IterationTime));
  for (const char* tic : {"10us", "25ms", "1s"})
    EXPECT_TRUE(has(texts, tic)) << tic << " in " << ::testing::PrintToString(texts);
  for (const std::string& t : texts)
    EXPECT_EQ(t.find("e-0"), std::string::npos) << t;

  // Sizes too, and more values than fit: at most a dozen tics, the first value among them.
  std::string sizes = "experiment: {cluster: {servers: 4}}\ngrid:\n  max_memory: [";
  for (int i = 0; i < 30; ++i)
    sizes += (i > 0 ? ", " : "") + std::to_string(i + 1) + "MiB";
  const SweepAxis many = sweep_axis(study::parse_sweep(sizes + "]\n", "s.yaml"));
  EXPECT_EQ(many.unit, "B");
  EXPECT_LE(many.tics.size(), 12u);
  ASSERT_FALSE(many.tics.empty());
  EXPECT_EQ(many.tics.front().label, "1MiB");
  EXPECT_EQ(many.tics.front().at, 1024.0 * 1024);
}

TEST(SweepFigure, ValuesOverDecadesGetALogAxisOthersALinearOneFromZero) {
  const study::SweepSpec spec = study::parse_sweep(kDelaySweep, "d.yaml");
  // A 1 s delay on the 100G link: 2,500 s, against 7 s elsewhere.
  const study::SweepResult slow = runs_with_times({11, 7.1, 11.1, 7.2, 2500, 8, 6.5});
  const std::string log_script =
      sweep_figure_script(spec, slow, sweep_axis(spec), SweepMetric::IterationTime);
  EXPECT_NE(log_script.find("set logscale y"), std::string::npos);
  // Powers of ten from the one below 6.5 s to the one above 2,500 s.
  const std::vector<std::string> log_texts = svg_texts(run_gnuplot(log_script, "report.html"));
  for (const char* tic : {"1s", "10s", "100s", "1000s", "10000s"})
    EXPECT_TRUE(has(log_texts, tic)) << tic << " in " << ::testing::PrintToString(log_texts);

  // Powers of ten at either end are drawn too: 0.2 to 50 s is 100ms to 100s, and tokens/s
  // (1000 / time) 20 to 5,000 is 10 to 10k.
  const study::SweepResult spread = runs_with_times({0.2, 0.3, 50, 0.4, 0.5, 0.6, 0.25});
  const std::vector<std::string> time_texts =
      svg_texts(svg_of(spec, spread, SweepMetric::IterationTime));
  for (const char* tic : {"100ms", "1s", "10s", "100s"})
    EXPECT_TRUE(has(time_texts, tic)) << tic << " in " << ::testing::PrintToString(time_texts);
  const std::vector<std::string> token_texts =
      svg_texts(svg_of(spec, spread, SweepMetric::TokensPerSecond));
  for (const char* tic : {"10", "100", "1k", "10k"})
    EXPECT_TRUE(has(token_texts, tic)) << tic << " in " << ::testing::PrintToString(token_texts);

  const study::SweepResult close = runs_with_times({11, 7.1, 11.1, 7.2, 12, 8, 6.5});
  const std::string linear_script =
      sweep_figure_script(spec, close, sweep_axis(spec), SweepMetric::IterationTime);
  EXPECT_EQ(linear_script.find("set logscale y"), std::string::npos);
  EXPECT_NE(linear_script.find("set yrange [0:"), std::string::npos);
  // 0 to 12 s in round steps: 0, 2.5, ..., 12.5 s (a fifth of 12 is 2.4; the next round step
  // is 2.5).
  const std::vector<std::string> texts = svg_texts(run_gnuplot(linear_script, "report.html"));
  for (const char* tic : {"0s", "2.5s", "5s", "7.5s", "10s", "12.5s"})
    EXPECT_TRUE(has(texts, tic)) << tic << " in " << ::testing::PrintToString(texts);
  for (const std::string& t : texts)
    EXPECT_FALSE(!t.empty() && t.front() == '-') << "negative tic " << t;
}

TEST(SweepFigure, ValueScaleByHand) {
  const std::optional<ValueScale> log = value_scale({7, 2500}, "s");
  ASSERT_TRUE(log && log->logarithmic);
  EXPECT_EQ(log->low, 1);
  EXPECT_EQ(log->high, 1e4);
  ASSERT_EQ(log->tics.size(), 5u);
  EXPECT_EQ(log->tics[0].label, "1s");
  EXPECT_EQ(log->tics[4].label, "10000s");
  // Just over a decade: 0.5 to 8 s is 100ms to 10s.
  const std::optional<ValueScale> small = value_scale({0.5, 8.1}, "s");
  ASSERT_TRUE(small && small->logarithmic);
  EXPECT_EQ(small->tics.front().label, "100ms");
  EXPECT_EQ(small->tics.back().label, "10s");
  // Sixty decades: at most nine tics, covering both ends.
  const std::optional<ValueScale> wide = value_scale({1e-30, 1e30}, "count");
  ASSERT_TRUE(wide && wide->logarithmic);
  EXPECT_LE(wide->tics.size(), 9u);
  EXPECT_LE(wide->low, 1e-30);
  EXPECT_GE(wide->high, 1e30);
  // Within a decade: linear from 0, a round step, the greatest value covered.
  const std::optional<ValueScale> tokens = value_scale({48745, 74634}, "count");
  ASSERT_TRUE(tokens && !tokens->logarithmic);
  EXPECT_EQ(tokens->low, 0);
  std::vector<std::string> labels;
  for (const GnuplotTic& t : tokens->tics)
    labels.push_back(t.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"0", "20k", "40k", "60k", "80k"}));
  // Nothing to scale, or nothing a scale can be made of: no scale, no crash.
  EXPECT_FALSE(value_scale({}, "s"));
  EXPECT_FALSE(value_scale({NAN, INFINITY}, "s"));
  EXPECT_FALSE(value_scale({-1, 2}, "s"));
  EXPECT_FALSE(value_scale({1e308, 1.7e308}, "count"));
  const std::optional<ValueScale> tiny = value_scale({5e-324, 1}, "count");
  ASSERT_TRUE(tiny);
  EXPECT_FALSE(tiny->logarithmic);
  const std::optional<ValueScale> zeros = value_scale({0, 0}, "s");
  ASSERT_TRUE(zeros);
  EXPECT_GT(zeros->high, zeros->low);
}

TEST(SweepFigure, TicLabelsByHand) {
  EXPECT_EQ(tic_label(1e-6, "s"), "1us");
  EXPECT_EQ(tic_label(0.025, "s"), "25ms");
  EXPECT_EQ(tic_label(1.5, "s"), "1.5s");
  EXPECT_EQ(tic_label(1e-15, "s"), "1e-15s");
  EXPECT_EQ(tic_label(1e30, "s"), "1e+30s");
  EXPECT_EQ(tic_label(400, "Gbit/s"), "400G");
  EXPECT_EQ(tic_label(1600, "Gbit/s"), "1.6T");
  EXPECT_EQ(tic_label(2 * 1024 * 1024, "B"), "2MiB");
  EXPECT_EQ(tic_label(1.5e6, "count"), "1.5M");
  EXPECT_EQ(tic_label(0, "count"), "0");
  EXPECT_EQ(tic_label(0.0645, ""), "0.0645");
  EXPECT_EQ(tic_label(4096, ""), "4096");
  EXPECT_EQ(tic_label(NAN, "s"), "");
}

TEST(SweepFigure, CategoriesAndMissingResultsDrawOrSayWhy) {
  // Fabrics by name on x; a point at another link sets no fabric: the reference, across.
  const study::SweepSpec spec = study::parse_sweep(R"(
experiment:
  cluster: {servers: 8, link: 400G}
  fabric: fat-tree
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8}
points:
  - {fabric: topoopt}
  - {fabric: rail-optimized}
  - {cluster.link: 100G}
x: fabric
)",
                                                   "c.yaml");
  const SweepAxis axis = sweep_axis(spec);
  EXPECT_EQ(axis.unit, "category");
  EXPECT_EQ(axis.categories, (std::vector<std::string>{"topoopt", "rail-optimized"}));
  study::SweepResult r = runs_with_times({2, 3, 4}, "fat-tree");
  std::vector<SweepLine> lines = sweep_lines(spec, r, axis, SweepMetric::IterationTime);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].title, "100G (reference)");
  EXPECT_EQ(lines[1].points.front().first, 0);
  EXPECT_EQ(lines[1].points.back().first, 1);
  EXPECT_TRUE(has(svg_texts(svg_of(spec, r, SweepMetric::IterationTime)), "100G (reference)"));
  // No tokens anywhere: that figure says so; every point failed: no line at all.
  for (study::SweepRun& run : r.runs)
    run.figures.tokens_per_s = 0;
  EXPECT_NE(sweep_figure_html(spec, r, axis, SweepMetric::TokensPerSecond).find("Not drawn"),
            std::string::npos);
  for (study::SweepRun& run : r.runs)
    run.figures.error = "failed";
  EXPECT_TRUE(sweep_lines(spec, r, axis, SweepMetric::IterationTime).empty());
  EXPECT_EQ(sweep_figure_script(spec, r, axis, SweepMetric::IterationTime), "");
  // Runs that name no point of the sweep are ignored.
  study::SweepResult stray = runs_with_times({1, 2, 3, 4, 5});
  EXPECT_EQ(sweep_lines(spec, stray, axis, SweepMetric::IterationTime).size(), 2u);
}

TEST(SweepFigure, ExtremeValuesStillDraw) {
  const study::SweepSpec spec = study::parse_sweep(kDelaySweep, "d.yaml");
  study::SweepResult r = runs_with_times({1e-12, 1e-12, 1e6, 1e-12, 1e-12, 1e-12, 9e6});
  r.runs[0].figures.tokens_per_s = 1e-30;
  r.runs[1].figures.tokens_per_s = 1e30;
  r.runs[2].figures.cost_paper.nics = 1e300;
  for (SweepMetric m : {SweepMetric::IterationTime, SweepMetric::TokensPerSecond,
                        SweepMetric::TokensPerSecondPerMusd})
    EXPECT_NE(svg_of(spec, r, m).find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace mfabric::report
