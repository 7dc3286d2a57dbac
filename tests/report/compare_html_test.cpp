// report.html of `mfabric compare` (compare_html.h), built from a hand-made CompareResult and
// checked as text: figures, plotted elements, escaping, failed runs, missing data, tooltips, the
// paper-sized page and write_compare_outputs (rendered in compare_html_chromium_test.cpp).
#include "report/compare_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/compare_figure_kit.h"
#include "report/compare_figures.h"
#include "report/compare_report.h"
#include "report/compare_samples.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

TEST(CompareHtml, EveryFigureHasAPlotWithData) {
  const std::string html = compare_html(sample());
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id : kCompareFigureIds) {
    SCOPED_TRACE(id);
    const std::string f = figure(html, id);
    ASSERT_FALSE(f.empty());
    EXPECT_NE(f.find("<figcaption>"), std::string::npos);
    EXPECT_EQ(count(f, "<svg"), 1u);
    EXPECT_EQ(f.find("Not drawn"), std::string::npos);
    // More than a key sample: the data itself was drawn.
    EXPECT_GE(most_drawn_in_a_plot(f), 3u);
  }
}

// Whether every '&' in `html` starts one of the character references the page uses.
bool ampersands_are_references(const std::string& html) {
  for (std::size_t at = html.find('&'); at != std::string::npos; at = html.find('&', at + 1)) {
    const std::size_t semi = html.find(';', at);
    if (semi == std::string::npos) return false;
    const std::string ref = html.substr(at + 1, semi - at - 1);
    const bool named =
        ref == "amp" || ref == "lt" || ref == "gt" || ref == "quot" || ref == "middot";
    const bool numeric = ref.size() > 1 && ref[0] == '#' &&
                         ref.find_first_not_of("0123456789", 1) == std::string::npos;
    if (!named && !numeric) return false;
  }
  return true;
}

// A run with a verdict's spread gets a whisker from its fastest to its slowest pair (relative
// time is the inverse of speed); without a spread, no whisker is drawn.
TEST(CompareHtml, TheIterationTimePlotDrawsTheSpreadAsWhiskers) {
  CompareResult r = one_model();
  const CompareDimensions d(r);
  ASSERT_TRUE(iteration_time_figure(r, d).script.has_value());
  EXPECT_EQ(iteration_time_figure(r, d).script->text().find("yerrorbars"), std::string::npos);
  r.spread_seeds = 2;
  r.runs[0].spread = {{2, "default", 8, ""}};
  r.runs[1].spread = {{2, "default", 12, ""}};  // speeds 0.80 and 0.67: relative 1.25 to 1.5
  study::relate_to_fat_tree(r.runs, r.cost_convention);
  const std::string script = iteration_time_figure(r, d).script->text();
  EXPECT_NE(script.find("using 1:2:4:5 with yerrorbars"), std::string::npos) << script;
  EXPECT_NE(script.find(" 1.25 12.5 1.25 1.5"), std::string::npos) << script;
}

TEST(CompareHtml, IsSelfContained) {
  const std::string html = compare_html(sample());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/1999/xhtml"), std::string::npos);
  // No reference to anything outside the page: every href is a fragment of the page.
  const std::vector<std::string> hrefs = attribute_values(html, "href", false);
  EXPECT_FALSE(hrefs.empty());
  for (const std::string& h : hrefs)
    EXPECT_EQ(h.rfind('#', 0), 0u) << h;
}

TEST(CompareHtml, IdsAreUniqueAcrossPlots) {
  const std::string html = compare_html(sample());
  std::set<std::string> seen;
  const std::vector<std::string> ids = attribute_values(html, "id", true);
  for (const std::string& id : ids)
    EXPECT_TRUE(seen.insert(id).second) << "duplicate id " << id;
  EXPECT_GT(ids.size(), 20u);
  // References point to ids of the same plot.
  EXPECT_NE(html.find("href='#plot-timeline-gpPt"), std::string::npos);
  EXPECT_EQ(html.find("href='#gpPt"), std::string::npos);
}

TEST(CompareHtml, NamesAreEscaped) {
  const std::string html = compare_html(sample());
  // No raw markup from a name: every '<' opens a tag of the page or of gnuplot's SVG.
  EXPECT_EQ(html.find("<tral"), std::string::npos);
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_EQ(html.find("<stalled"), std::string::npos);
  // Every '&' starts a character reference.
  EXPECT_TRUE(ampersands_are_references(html));
  // The table has the names escaped...
  EXPECT_NE(html.find("<td>Mix&lt;tral&gt; &amp; &quot;8x7b&quot;</td>"), std::string::npos);
  EXPECT_NE(html.find("topo &quot;opt&quot; &amp; &lt;x&gt;</td>"), std::string::npos);
  // ...and gnuplot received them intact (single quote undoubled, & and < escaped in its SVG).
  const std::string bars = figure(html, "plot-iteration-time");
  EXPECT_NE(bars.find("qwen'moe"), std::string::npos);
  EXPECT_NE(bars.find("Mix&lt;tral"), std::string::npos);
  EXPECT_NE(figure(html, "plot-cost-vs-time").find("topo \"opt\" &amp; &lt;x"), std::string::npos);
  EXPECT_NE(figure(html, "plot-timeline").find("Mix&lt;tral&gt; &amp; &quot;8x7b&quot; 100G"),
            std::string::npos);
}

TEST(CompareHtml, FailedRunIsInTheTableAndInNoPlot) {
  const std::string html = compare_html(sample());
  const std::size_t row = html.find("<tr class=\"failed\">");
  ASSERT_NE(row, std::string::npos);
  const std::string tr = html.substr(row, html.find("</tr>", row) - row);
  EXPECT_NE(tr.find(kFailedFabric), std::string::npos);
  EXPECT_NE(tr.find("failed: transfer 3 &lt;stalled&gt; &amp; &quot;no route&quot;"),
            std::string::npos);
  for (const char* id : kCompareFigureIds)
    EXPECT_EQ(figure(html, id).find(kFailedFabric), std::string::npos) << id;
  EXPECT_NE(html.find("13 runs (1 failed)"), std::string::npos);
  EXPECT_NE(html.find("seed 7"), std::string::npos);
  // The 12 finished runs and the failed one are rows of the table.
  EXPECT_EQ(count(html.substr(html.find("<section id=\"results\">")), "<tr"), 1u + 13u);
}

TEST(CompareHtml, CostBarsAreLabelledWithTheirTotals) {
  const std::string bars = figure(compare_html(sample()), "plot-cost-components");
  // Paper cost in million USD, summed by hand from the components of sample().
  for (const char* total : {">4.7<", ">2.2<", ">2.6<", ">9.4<", ">4.4<", ">5.2<"})
    EXPECT_NE(bars.find(total), std::string::npos) << total;
  // Only the components some fabric has: every one of the six here.
  for (const char* component :
       {"NICs", "transceivers", "switch ports", "OCS ports", "patch-panel ports", "fibres"})
    EXPECT_NE(bars.find(component), std::string::npos) << component;
}

TEST(CompareHtml, WithoutAFatTreeTheRelativePlotsSaySo) {
  const std::string html = compare_html(sample(false));
  for (const char* id : {"plot-iteration-time", "plot-perf-per-dollar", "plot-cost-vs-time"}) {
    const std::string f = figure(html, id);
    EXPECT_EQ(f.find("<svg"), std::string::npos) << id;
    EXPECT_NE(f.find("Not drawn"), std::string::npos) << id;
  }
  for (const char* id : {"plot-cost-components", "plot-timeline"})
    EXPECT_GE(most_drawn_in_a_plot(figure(html, id)), 3u) << id;
}

TEST(CompareHtml, LongTimelineGetsAZoomedPanel) {
  CompareResult r = sample();
  r.timeline.clear();
  for (int i = 0; i < 60; ++i)
    r.timeline.push_back({i * 0.01, i * 0.01 + 0.004, i % 3 == 0});
  const std::string f = figure(compare_html(r), "plot-timeline");
  EXPECT_NE(f.find("first 40 bars"), std::string::npos);
  EXPECT_NE(f.find("whole run"), std::string::npos);
  EXPECT_NE(f.find("top row, 20 reconfigurations"), std::string::npos);  // reconfigurations
  EXPECT_NE(f.find("bottom row, 40 all-to-alls"), std::string::npos);    // all-to-alls
}

TEST(CompareHtml, OverlappingSpansAreOneBar) {
  CompareResult r = sample();
  r.timeline.clear();
  // 9 rounds of 5 all-to-alls at once (one per EP group of the region): 9 bars, no zoom.
  for (int i = 0; i < 45; ++i)
    r.timeline.push_back({(i / 5) * 0.01, (i / 5) * 0.01 + 0.004 + (i % 5) * 0.0001, false});
  const std::string f = figure(compare_html(r), "plot-timeline");
  EXPECT_NE(f.find("top row, 0 reconfigurations"), std::string::npos);
  EXPECT_NE(f.find("bottom row, 45 all-to-alls"), std::string::npos);
  EXPECT_EQ(f.find("first 40 bars"), std::string::npos);
  EXPECT_GE(most_drawn_in_a_plot(f), 3u);
}

TEST(CompareHtml, OddValuesStayOutOfThePlots) {
  CompareResult r = sample();
  CompareRun nan_link = r.runs[0];
  nan_link.link_gbps = std::nan("");
  nan_link.model = "nan-link-model";
  CompareRun nan_time = r.runs[1];
  nan_time.model = "nan-time-model";
  nan_time.iteration_time_s = std::nan("");
  nan_time.relative_iteration_time = std::nan("");
  nan_time.perf_per_dollar_vs_fat_tree = std::numeric_limits<double>::infinity();
  CompareRun unicode = r.runs[2];
  unicode.model = "mod\xC3\xA8le \xE6\xA8\xA1\xE5\x9E\x8B\x01";  // "modèle 模型" and a control
  r.runs.insert(r.runs.end(), {nan_link, nan_time, unicode});
  r.timeline.push_back({std::nan(""), 1, true});
  r.timeline.push_back({2, 1, false});  // ends before it starts
  const std::string html = compare_html(r);
  for (const char* id : kCompareFigureIds) {
    const std::string f = figure(html, id);
    EXPECT_EQ(f.find("nan-link-model"), std::string::npos) << id;
    EXPECT_EQ(f.find("nan-time-model"), std::string::npos) << id;
    EXPECT_GE(most_drawn_in_a_plot(f), 3u) << id;
  }
  EXPECT_NE(figure(html, "plot-iteration-time").find("mod\xC3\xA8le \xE6\xA8\xA1\xE5\x9E\x8B "),
            std::string::npos);
  EXPECT_NE(html.find("<td>mod\xC3\xA8le \xE6\xA8\xA1\xE5\x9E\x8B\xEF\xBF\xBD</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>nan-time-model</td>"), std::string::npos);
  EXPECT_NE(html.find("top row, 2 reconfigurations"),
            std::string::npos);  // the two bad spans left out
}

TEST(CompareHtml, NoRunsStillMakesAPage) {
  CompareResult r;
  const std::string html = compare_html(r);
  for (const char* id : kCompareFigureIds)
    EXPECT_NE(figure(html, id).find("Not drawn"), std::string::npos) << id;
  EXPECT_NE(html.find("0 runs (0 failed)"), std::string::npos);
}

TEST(CompareHtml, WithoutGnuplotNothingIsMade) {
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  const fs::path empty =
      fs::temp_directory_path() / ("mfabric-empty-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  ::setenv("PATH", empty.c_str(), 1);
  try {
    compare_html(sample());
    ADD_FAILURE() << "expected mfabric::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "report.html");
    EXPECT_EQ(e.message(), "gnuplot not found: install gnuplot (scripts/install-deps.sh)");
  }
  ::setenv("PATH", saved.c_str(), 1);
  fs::remove_all(empty);
}

// compare --out DIR: report.html is one file of the set; without gnuplot no file is written.
TEST(CompareOutputs, ReportHtmlIsPartOfTheSet) {
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric-compare-outputs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_compare_outputs(sample(), dir.string());
  for (const char* name : kCompareOutputFiles)
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  std::ifstream in(dir / "report.html", std::ios::binary);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_EQ(page.str(), compare_html(sample()));

  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", "/nonexistent-mfabric-test", 1);
  EXPECT_THROW(check_compare_outputs(dir.string()), Error);
  const fs::path fresh = dir / "fresh";
  EXPECT_THROW(write_compare_outputs(sample(), fresh.string()), Error);
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(fs::exists(fresh));
  fs::remove_all(dir);
}

TEST(CompareHtml, PlotPointsCarryTheirAbsoluteFiguresAsTooltips) {
  const std::string html = compare_html(sample());
  // gnuplot's own hover script is not on the page: its calls are replaced by SVG titles.
  EXPECT_EQ(html.find("gnuplot_svg"), std::string::npos);
  EXPECT_EQ(html.find("onmousemove"), std::string::npos);
  // qwen'moe at 400G: fat-tree 5 / 2 = 2.5 s and $9.4M; mfabric 2.625 s and $5.2M.
  const std::string pareto = figure(html, "plot-cost-vs-time");
  EXPECT_NE(pareto.find("<title>qwen&#39;moe, mfabric at 400 Gb/s: 2.625 s per iteration against "
                        "the fat-tree&#39;s 2.5 s (1.05x); network cost $5,200,000 against "
                        "$9,400,000 (0.55x, paper formulas); perf/$ 1.72x the fat-tree&#39;s."
                        "</title>"),
            std::string::npos);
  // mfabric at 100G over both models: perf/$ (10 x 4.7) / (10.5 x 2.6) = 1.72x for each.
  EXPECT_NE(figure(html, "plot-perf-per-dollar")
                .find("<title>mfabric at 100 Gb/s: perf/$ 1.72x the fat-tree&#39;s, the "
                      "geometric mean of 2 models. Network cost $2.6M against the "
                      "fat-tree&#39;s $4.7M (paper formulas); iteration time 5.25-10.5 s against "
                      "5-10 s.</title>"),
            std::string::npos);
  // The bars of iteration time are labelled with it: 10.5 s for the first model's mfabric.
  EXPECT_NE(figure(html, "plot-iteration-time").find(">10.5 s<"), std::string::npos);
}

TEST(CompareHtml, RatioSpreadIsTheGeometricMeanAndRange) {
  const RatioSpread s = ratio_spread({1, 4});
  EXPECT_DOUBLE_EQ(s.geometric_mean, 2);
  EXPECT_DOUBLE_EQ(s.lowest, 1);
  EXPECT_DOUBLE_EQ(s.highest, 4);
  const RatioSpread t = ratio_spread({0.5, 2, 8});  // (0.5 x 2 x 8)^(1/3) = 2
  EXPECT_NEAR(t.geometric_mean, 2, 1e-12);
  EXPECT_THROW(ratio_spread({}), Error);
}

// The paper's evaluation: 5 models x 4 link speeds x 5 fabrics and a long timeline.
CompareResult paper_sized() {
  CompareResult r;
  const std::vector<std::string> fabrics = {"fat-tree", "fat-tree-3to1", "rail-optimized",
                                            "topoopt", "mfabric"};
  const std::vector<double> slowdown = {1, 1.3, 1.1, 1.6, 1.02};
  const std::vector<double> cost_share = {1, 0.55, 0.8, 0.45, 0.5};
  const std::vector<std::string> models = {"mixtral-8x22b", "mixtral-8x7b", "qwen-moe-32",
                                           "deepseek-r1", "llama-moe-6.7b"};
  for (std::size_t m = 0; m < models.size(); ++m)
    for (double gbps : {100.0, 200.0, 400.0, 800.0})
      for (std::size_t k = 0; k < fabrics.size(); ++k) {
        const double t_ft = (10.0 + static_cast<double>(m)) * (1 + 40 / gbps);
        const double s = gbps / 100;
        const auto ft = cost(2e6 * s, 6e6 * s, 4e6 * s, 0, 0, 0.3e6);
        auto c =
            cost(2e6 * s, 6e6 * s * cost_share[k], 4e6 * s * cost_share[k],
                 fabrics[k] == "mfabric" ? 1e6 : 0, fabrics[k] == "topoopt" ? 0.5e6 : 0, 0.3e6);
        const double t =
            t_ft * (1 + (slowdown[k] - 1) * (1 + static_cast<double>(m) / 10) * (100 / gbps + 0.5));
        r.runs.push_back(run(models[m], gbps, fabrics[k], t, c, t_ft, ft.total()));
      }
  r.timeline_run = "mixtral-8x22b 400G mfabric";
  double now = 0.5;
  for (int layer = 0; layer < 120; ++layer) {
    if (layer % 2 == 0) r.timeline.push_back({now, now + 0.025, true});
    now += layer % 2 == 0 ? 0.027 : 0.004;
    r.timeline.push_back({now, now + 0.012, false});
    now += 0.03;
  }
  return r;
}

TEST(CompareHtml, PaperSizedComparison) {
  const auto start = std::chrono::steady_clock::now();
  const std::string html = compare_html(paper_sized());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const char* id : kCompareFigureIds)
    EXPECT_GE(most_drawn_in_a_plot(figure(html, id)), 3u) << id;
  EXPECT_NE(html.find("100 runs (0 failed)"), std::string::npos);
  std::cout << "paper-sized report: " << html.size() / 1024 << " KiB in " << seconds << " s\n";
  // MFABRIC_KEEP_REPORT=DIR keeps the page to look at.
  if (const char* keep = std::getenv("MFABRIC_KEEP_REPORT")) {
    std::ofstream out(fs::path(keep) / "paper-sized.html", std::ios::binary);
    out << html;
  }
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
