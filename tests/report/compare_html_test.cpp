// report.html of `mfabric compare` (compare_html.h): built from a hand-made CompareResult,
// checked as text (figures, plotted elements, escaping, failed runs, missing data) and rendered
// in headless Chromium (Debian's chromium; skipped when it is not installed).
#include "report/compare_html.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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
#include <thread>
#include <vector>

#include "core/error.h"
#include "report/compare_report.h"
#include "report/gnuplot.h"
#include "test_text.h"

// Helpers in a namespace of their own: test files are compiled several to a translation unit.
namespace mfabric::report::compare_html_test {
namespace {

namespace fs = std::filesystem;
using study::CompareResult;
using study::CompareRun;
using testing::slurp;

// Names that need escaping in gnuplot strings, XML and HTML.
const std::string kModelA = "Mix<tral> & \"8x7b\"";
const std::string kModelB = "qwen'moe";
const std::string kTopo = "topo \"opt\" & <x>";
const std::string kFailedFabric = "only-in-a-failed-run";

fabric::CostBreakdown cost(double nics, double transceivers, double switch_ports, double ocs,
                           double patch_panel, double fibres) {
  fabric::CostBreakdown c;
  c.nics = nics;
  c.transceivers = transceivers;
  c.switch_ports = switch_ports;
  c.ocs_ports = ocs;
  c.patch_panel_ports = patch_panel;
  c.fibres = fibres;
  return c;
}

// One run with its figures relative to a fat-tree of iteration time `fat_tree_s` and paper cost
// `fat_tree_usd` (the definitions of compare.h), or none when fat_tree_s is 0.
CompareRun run(const std::string& model, double gbps, const std::string& fabric, double time_s,
               const fabric::CostBreakdown& paper, double fat_tree_s, double fat_tree_usd) {
  CompareRun r;
  r.model = model;
  r.link_gbps = gbps;
  r.fabric = fabric;
  r.fabric_spec = fabric + ":spec";
  r.gpus = 64;
  r.iteration_time_s = time_s;
  r.tokens_per_s = 128.0 * 4096 / time_s;
  r.cost_paper = paper;
  r.cost_built = paper;
  r.cost_built.fibres *= 1.5;
  if (fat_tree_s > 0) {
    r.relative_iteration_time = time_s / fat_tree_s;
    r.perf_per_dollar_vs_fat_tree = (1 / time_s / paper.total()) / (1 / fat_tree_s / fat_tree_usd);
  }
  return r;
}

// 2 models x 2 links (100G, 400G) x 3 fabrics (fat-tree, a TopoOpt with an awkward name,
// mfabric), a timeline of five spans, and one failed run of a fabric that has no other run.
// Paper costs in million USD: fat-tree 4.7, topo 2.2, mfabric 2.6 at 100G, twice that at 400G.
CompareResult sample(bool with_fat_tree = true) {
  CompareResult r;
  r.seed = 7;
  for (const std::string& model : {kModelA, kModelB}) {
    for (double gbps : {100.0, 400.0}) {
      const double scale = gbps / 100 > 1 ? 2 : 1;
      const double t_ft = (model == kModelA ? 10.0 : 5.0) / scale;
      const auto ft = cost(1e6 * scale, 2e6 * scale, 1.5e6 * scale, 0, 0, 0.2e6 * scale);
      const auto topo = cost(1e6 * scale, 0.9e6 * scale, 0, 0, 0.2e6 * scale, 0.1e6 * scale);
      const auto mf =
          cost(1e6 * scale, 0.8e6 * scale, 0.3e6 * scale, 0.4e6 * scale, 0, 0.1e6 * scale);
      const double ref = with_fat_tree ? t_ft : 0;
      if (with_fat_tree) r.runs.push_back(run(model, gbps, "fat-tree", t_ft, ft, ref, ft.total()));
      r.runs.push_back(run(model, gbps, kTopo, t_ft * 1.5, topo, ref, ft.total()));
      CompareRun m = run(model, gbps, "mfabric", t_ft * 1.05, mf, ref, ft.total());
      m.reconfiguration = study::ReconfigurationSummary{"block", "greedy", 12, 0.3, 0.1, 1e9, 1e8};
      r.runs.push_back(m);
    }
  }
  CompareRun failed;
  failed.model = kModelB;
  failed.link_gbps = 400;
  failed.fabric = kFailedFabric;
  failed.error = "transfer 3 <stalled> & \"no route\"";
  r.runs.push_back(failed);
  r.timeline_run = kModelA + " 100G mfabric";
  r.timeline = {{0, 0.025, true},
                {0.03, 0.05, false},
                {0.06, 0.08, false},
                {0.09, 0.115, true},
                {0.12, 0.14, false}};
  return r;
}

// The markup of <figure id="id"> up to its </figure>, or "" when there is none.
std::string figure(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<figure id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  const std::size_t end = html.find("</figure>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The most drawing elements (path, polygon, polyline, rect, use, circle) in one of gnuplot's
// plot groups (<g id="...gnuplot_plot_N">, one per plotted series, up to its matching </g>). A
// series with a key entry draws a sample (at most two elements) and its data; one with data only
// draws its data.
std::size_t most_drawn_in_a_plot(const std::string& svg) {
  std::size_t most = 0;
  for (std::size_t at = svg.find("gnuplot_plot_"); at != std::string::npos;
       at = svg.find("gnuplot_plot_", at + 1)) {
    const std::size_t open = svg.rfind("<g", at);
    if (open == std::string::npos || svg.find('>', open) < at) continue;  // not an id of a <g>
    int depth = 0;
    std::size_t i = open, end = svg.size();
    while (i < svg.size()) {
      if (svg.compare(i, 3, "<g ") == 0 || svg.compare(i, 3, "<g>") == 0) ++depth;
      if (svg.compare(i, 4, "</g>") == 0 && --depth == 0) {
        end = i;
        break;
      }
      ++i;
    }
    const std::string group = svg.substr(open, end - open);
    std::size_t drawn = 0;
    for (const char* element : {"<path", "<polygon", "<polyline", "<rect", "<use", "<circle"})
      drawn += count(group, element);
    most = std::max(most, drawn);
  }
  return most;
}

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

// The values of every `name=` attribute in the page, quoted with ' or ", in order; `space`: only
// where whitespace comes before the name (a plain scan: <regex> would cost the suite's build more
// than these checks are worth).
std::vector<std::string> attribute_values(const std::string& html, const std::string& name,
                                          bool space) {
  std::vector<std::string> out;
  const std::string key = name + "=";
  for (std::size_t at = html.find(key); at != std::string::npos; at = html.find(key, at + 1)) {
    if (space && (at == 0 || !std::isspace(static_cast<unsigned char>(html[at - 1])))) continue;
    const std::size_t q = at + key.size();
    if (q >= html.size() || (html[q] != '\'' && html[q] != '"')) continue;
    const std::size_t end = html.find(html[q], q + 1);
    if (end == std::string::npos) break;
    out.push_back(html.substr(q + 1, end - q - 1));
  }
  return out;
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

// One model at one link speed, costed in both conventions: the fat-tree (10 s; $4M by the paper's
// formulas, $3M built) and mFabric (12.5 s; $1M paper, $2M built).
CompareResult one_model() {
  CompareResult r;
  CompareRun ft = run("m", 400, "fat-tree", 10, cost(4e6, 0, 0, 0, 0, 0), 10, 4e6);
  ft.cost_built = cost(3e6, 0, 0, 0, 0, 0);
  CompareRun mf = run("m", 400, "mfabric", 12.5, cost(1e6, 0, 0, 0, 0, 0), 10, 4e6);
  mf.cost_built = cost(2e6, 0, 0, 0, 0, 0);
  r.runs = {ft, mf};
  return r;
}

TEST(CompareHeadline, ASentencePerModelAndLinkWithTheFiguresBehindIt) {
  CompareResult r = one_model();
  // Speed 10 / 12.5 = 0.80x; cost 1 / 4 = 0.25x; perf/$ 0.80 / 0.25 = 3.20x.
  EXPECT_EQ(compare_headline(r),
            std::vector<std::string>{
                "m at 400G: mFabric trains at 0.80x the fat-tree's speed (12.50 s vs 10.00 s per "
                "iteration) for 0.25x its network cost ($1,000,000 vs $4,000,000, paper "
                "formulas), 3.20x its perf/$."});
  // Built: cost 2 / 3 = 0.67x, perf/$ 0.80 / (2 / 3) = 1.20x.
  r.cost_convention = fabric::CostConvention::Built;
  EXPECT_EQ(compare_headline(r),
            std::vector<std::string>{
                "m at 400G: mFabric trains at 0.80x the fat-tree's speed (12.50 s vs 10.00 s per "
                "iteration) for 0.67x its network cost ($2,000,000 vs $3,000,000, built "
                "topology), 1.20x its perf/$."});
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

TEST(CompareConvention, EveryCostAndPerfPerDollarFigureNamesTheConvention) {
  CompareResult r = one_model();
  for (const auto convention : {fabric::CostConvention::Paper, fabric::CostConvention::Built}) {
    r.cost_convention = convention;
    study::relate_to_fat_tree(r.runs, convention);
    const bool built = convention == fabric::CostConvention::Built;
    const std::string name = built ? "built topology" : "paper formulas";
    SCOPED_TRACE(name);
    // perf/$ of mFabric: (10 x 4) / (12.5 x 1) = 3.2 on paper, (10 x 3) / (12.5 x 2) = 1.2 built.
    const double per_dollar = built ? 1.2 : 3.2;
    EXPECT_NEAR(*r.runs[1].perf_per_dollar_vs_fat_tree, per_dollar, 1e-12);
    const std::string text = compare_text(r);
    EXPECT_NE(text.find("cost (" + name + ")"), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("{:.2f}x", per_dollar)), std::string::npos) << text;
    EXPECT_NE(text.find("network cost by " + name), std::string::npos) << text;
    const nlohmann::json j = compare_json(r, false);
    EXPECT_EQ(j.at("cost_convention"), built ? "built" : "paper");
    EXPECT_NEAR(j.at("runs").at(1).at("perf_per_dollar_vs_fat_tree").get<double>(), per_dollar,
                1e-12);
    std::ostringstream csv;
    write_compare_csv(r, csv);
    EXPECT_NE(csv.str().find(fmt::format(",{},", built ? "built" : "paper")), std::string::npos);
    const std::string html = compare_html(r);
    EXPECT_NE(html.find("<th>perf/$ vs fat-tree (" + name + ")</th>"), std::string::npos);
    EXPECT_NE(html.find("<th>network cost, " + name + " (USD)</th>"), std::string::npos);
    EXPECT_NE(figure(html, "plot-cost-components").find("(" + name + ")"), std::string::npos);
    // The axes (gnuplot's SVG text keeps the quote as it is).
    EXPECT_NE(figure(html, "plot-perf-per-dollar").find("fat-tree's (" + name + ")"),
              std::string::npos);
    EXPECT_NE(figure(html, "plot-cost-vs-time").find("fat-tree's (" + name + ")"),
              std::string::npos);
    // The cost bars are the convention's: mFabric's total in million USD.
    EXPECT_NE(figure(html, "plot-cost-components").find(built ? ">2<" : ">1<"), std::string::npos);
    // The other names are not used for the figure.
    for (const char* old : {"perf. per dollar", "performance per dollar", "tokens/s per $M"}) {
      EXPECT_EQ(html.find(old), std::string::npos) << old;
      EXPECT_EQ(text.find(old), std::string::npos) << old;
    }
  }
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

TEST(Gnuplot, CanvasTicsAndDataBlocksAreTheScriptsOwnLines) {
  EXPECT_EQ(gnuplot_svg_canvas(960, 420),
            "set encoding utf8\n"
            "set terminal svg size 960,420 fixed noenhanced font 'sans,13' background rgb "
            "'white'\n");
  EXPECT_EQ(gnuplot_tic_list({"a", "it's"}), "'a' 0, 'it''s' 1");
  EXPECT_EQ(gnuplot_tic_list({}), "");
  EXPECT_EQ(gnuplot_data_block("s0", {{1, 2.5}, {3, -4}}), "$s0 << EOD\n1 2.5\n3 -4\nEOD\n");
}

TEST(Gnuplot, StringsAreSingleQuotedWithQuotesDoubled) {
  EXPECT_EQ(gnuplot_string("it's"), "'it''s'");
  EXPECT_EQ(gnuplot_string("a\nb\tc"), "'a b c'");
  EXPECT_EQ(gnuplot_string("$x \"y\" \\n"), "'$x \"y\" \\n'");
}

TEST(Gnuplot, InlineSvgPrefixesIdsAndReferencesOnly) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<svg id=\"a\">\n<defs><path id='p1'/><path id='p10'/></defs>"
      "<use xlink:href='#p1'/><use xlink:href='#p10'/><g filter='url(#p1)'/>"
      "<text>'#p1' \"#p1\"</text><rect fill=\"#p1\"/></svg>";
  EXPECT_EQ(inline_svg(svg, "x-"),
            "<svg id=\"x-a\">\n<defs><path id='x-p1'/><path id='x-p10'/></defs>"
            "<use xlink:href='#x-p1'/><use xlink:href='#x-p10'/><g filter='url(#x-p1)'/>"
            "<text>'#p1' \"#p1\"</text><rect fill=\"#x-p1\"/></svg>");
}

TEST(Gnuplot, AFailingScriptIsAnError) {
  try {
    run_gnuplot("set terminal svg\nplot $nothing using 1:2\n", "report.html");
    ADD_FAILURE() << "expected mfabric::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "report.html");
    EXPECT_EQ(e.message(), "gnuplot failed: line 2: no datablock named $nothing");
  }
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

// Runs fn() with TMPDIR set to a new empty directory; true if the directory is empty after.
template <class F>
bool leaves_no_temporary_files(F&& fn) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric-html-tmpdir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::setenv("TMPDIR", dir.c_str(), 1);
  fn();
  if (old)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  const bool empty = fs::is_empty(dir);
  fs::remove_all(dir);
  return empty;
}

TEST(Gnuplot, TemporaryDirectoryIsRemovedAfterSuccessAndFailure) {
  EXPECT_TRUE(leaves_no_temporary_files([] {
    EXPECT_NE(run_gnuplot("set terminal svg\nplot x\n", "report.html").find("</svg>"),
              std::string::npos);
  }));
  EXPECT_TRUE(leaves_no_temporary_files(
      [] { EXPECT_THROW(run_gnuplot("plot $nothing\n", "report.html"), Error); }));
}

TEST(Gnuplot, ARunPastItsTimeIsStopped) {
  const auto start = std::chrono::steady_clock::now();
  try {
    run_gnuplot("pause 20\n", "report.html", 0.3);
    ADD_FAILURE() << "expected mfabric::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "gnuplot did not finish within 0.3 s");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// --- headless Chromium ---------------------------------------------------------------------

struct Child {
  pid_t pid = -1;
};

// Starts `argv` in its own process group with stdout to `out`, stderr to `err`.
Child start(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::setpgid(0, 0);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (std::string& a : copy)
      args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

// The exit code, or -1 when the child (and its process group) was killed past `timeout`.
int finish(const Child& c, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
      ::kill(-c.pid, SIGKILL);  // helpers Chromium may have left behind
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-c.pid, SIGKILL);
      ::waitpid(c.pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// sample() and a rail-optimized run for each fat-tree run with its time and cost: the two
// coincide at (1, 1) of the Pareto plot, as they nearly do in real comparisons.
CompareResult with_rail_on_the_fat_tree(CompareResult r) {
  std::vector<CompareRun> rail;
  for (const CompareRun& run : r.runs)
    if (run.fabric == "fat-tree") {
      CompareRun copy = run;
      copy.fabric = "rail-optimized";
      rail.push_back(copy);
    }
  r.runs.insert(r.runs.end(), rail.begin(), rail.end());
  return r;
}

// "$4,700,000": whole dollars with thousands separators.
std::string usd(double x) {
  std::string digits = std::to_string(std::llround(x));
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return "$" + digits;
}

// Text as Chromium serialises a text node: & < > escaped, quotes as they are.
std::string dom_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// The verdict the page should open with, a sentence per mfabric run, computed here from the
// runs' own figures (compare.h's definitions, the paper's cost convention).
std::vector<std::string> expected_verdict(const CompareResult& r) {
  std::vector<std::string> out;
  for (const CompareRun& m : r.runs) {
    if (m.fabric != "mfabric") continue;
    for (const CompareRun& f : r.runs) {
      if (f.fabric != "fat-tree" || f.model != m.model || f.link_gbps != m.link_gbps) continue;
      const double speed = f.iteration_time_s / m.iteration_time_s;
      const double cost_ratio = m.cost_paper.total() / f.cost_paper.total();
      out.push_back(fmt::format(
          "{} at {:g}G: mFabric trains at {:.2f}x the fat-tree's speed ({:.2f} s vs {:.2f} s per "
          "iteration) for {:.2f}x its network cost ({} vs {}, paper formulas), {:.2f}x its "
          "perf/$.",
          m.model, m.link_gbps, speed, m.iteration_time_s, f.iteration_time_s, cost_ratio,
          usd(m.cost_paper.total()), usd(f.cost_paper.total()), speed / cost_ratio));
      break;
    }
  }
  return out;
}

// The value of attribute `name` in the tag `tag` ("" when absent), quoted either way.
std::string attribute(const std::string& tag, const std::string& name) {
  const std::vector<std::string> values = attribute_values(tag, name, true);
  return values.empty() ? "" : values.front();
}

// A point gnuplot drew: where (its translate), how large (its scale), its colour and shape.
struct Marker {
  std::string at;
  double scale = 0;
  std::string colour;  // "rgb(78,121,167)"
  std::string shape;   // the symbol it uses
};

std::vector<Marker> markers(const std::string& svg) {
  std::vector<Marker> out;
  for (std::size_t at = svg.find("<use"); at != std::string::npos; at = svg.find("<use", at + 1)) {
    const std::string tag = svg.substr(at, svg.find('>', at) - at);
    const std::string transform = attribute(tag, "transform");
    const std::size_t scale = transform.find(" scale(");
    if (transform.rfind("translate(", 0) != 0 || scale == std::string::npos) continue;
    Marker m;
    m.at = transform.substr(0, scale);
    m.scale = std::stod(transform.substr(scale + 7));
    for (char c : attribute(tag, "color"))
      if (c != ' ') m.colour += c;
    m.shape = attribute(tag, "xlink:href");
    out.push_back(m);
  }
  return out;
}

TEST(CompareHtmlChromium, RendersEveryPlot) {
  const std::optional<std::string> chromium = find_on_path("chromium");
  if (!chromium) GTEST_SKIP() << "chromium not installed (scripts/install-deps.sh installs it)";

  const fs::path dir =
      fs::temp_directory_path() / ("mfabric-html-chromium-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Removed also when an assertion below ends the test early.
  struct RemoveAtEnd {
    fs::path path;
    ~RemoveAtEnd() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_at_end{dir};
  const fs::path page = dir / "report.html";
  const CompareResult result = with_rail_on_the_fat_tree(sample());
  {
    std::ofstream out(page, std::ios::binary);
    out << compare_html(result);
  }
  const fs::path shot = dir / "report.png";
  const std::string url = "file://" + page.string();
  const std::vector<std::string> common = {*chromium,          "--headless",
                                           "--no-sandbox",     "--disable-gpu",
                                           "--no-first-run",   "--disable-dev-shm-usage",
                                           "--hide-scrollbars"};
  std::vector<std::string> dump = common, screenshot = common;
  dump.push_back("--user-data-dir=" + (dir / "profile-dom").string());
  dump.insert(dump.end(), {"--dump-dom", url});
  screenshot.push_back("--user-data-dir=" + (dir / "profile-png").string());
  screenshot.insert(screenshot.end(),
                    {"--screenshot=" + shot.string(), "--window-size=1400,4000", url});
  // Both at once: each Chromium spends most of its time starting up.
  const Child dom_child = start(dump, dir / "dom.html", dir / "dom.err");
  const Child png_child = start(screenshot, dir / "png.out", dir / "png.err");
  const int dom_exit = finish(dom_child, std::chrono::seconds(60));
  const int png_exit = finish(png_child, std::chrono::seconds(60));
  ASSERT_EQ(dom_exit, 0) << slurp(dir / "dom.err");
  ASSERT_EQ(png_exit, 0) << slurp(dir / "png.err");

  // The DOM as Chromium parsed it: every figure with its svg (a broken escape would have
  // moved or dropped elements), and the table with the failed run.
  const std::string dom = slurp(dir / "dom.html");
  for (const char* id : kCompareFigureIds) {
    SCOPED_TRACE(id);
    const std::string f = figure(dom, id);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(count(f, "<svg"), 1u);
    EXPECT_GE(most_drawn_in_a_plot(f), 3u);
  }
  EXPECT_NE(dom.find("<tr class=\"failed\">"), std::string::npos);

  // The page opens with the verdict, before any figure: a sentence per model and link speed.
  const std::vector<std::string> verdict = expected_verdict(result);
  ASSERT_EQ(verdict.size(), 4u);
  for (const std::string& sentence : verdict) {
    const std::size_t at = dom.find("<p class=\"verdict\">" + dom_text(sentence) + "</p>");
    EXPECT_NE(at, std::string::npos) << sentence;
    EXPECT_LT(at, dom.find("<figure"));
  }
  EXPECT_NE(dom.find("runs (1 failed)"), std::string::npos);

  // The Pareto plot: a key entry per link speed, and every fabric's points drawn, one per run
  // and one in the key (gnuplot's colours of the page's fabric palette).
  const std::string pareto = figure(dom, "plot-cost-vs-time");
  for (const char* link : {">100 Gb/s<", ">400 Gb/s<"})
    EXPECT_NE(pareto.find(link), std::string::npos) << link;
  const std::vector<Marker> drawn = markers(pareto);
  const auto count_colour = [&](const std::string& colour) {
    return std::count_if(drawn.begin(), drawn.end(),
                         [&](const Marker& m) { return m.colour == colour; });
  };
  EXPECT_EQ(count_colour("rgb(78,121,167)"), 5) << "fat-tree";
  EXPECT_EQ(count_colour("rgb(242,142,43)"), 5) << "topo";
  EXPECT_EQ(count_colour("rgb(225,87,89)"), 5) << "mfabric";
  EXPECT_EQ(count_colour("rgb(118,183,178)"), 0) << "the failed run's fabric";
  EXPECT_EQ(count_colour("rgb(89,161,79)"), 5) << "rail-optimized";
  EXPECT_EQ(count_colour("rgb(85,85,85)"), 2) << "the link speeds' key entries";
  // Points at one place: those of different fabrics are drawn largest first, so that each shows
  // around the next; the fat-tree's and rail-optimized's do coincide, with both link speeds'
  // shapes.
  bool coincide = false;
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    std::set<std::string> colours = {drawn[i].colour}, shapes = {drawn[i].shape};
    for (std::size_t j = i + 1; j < drawn.size(); ++j) {
      if (drawn[j].at != drawn[i].at) continue;
      colours.insert(drawn[j].colour);
      shapes.insert(drawn[j].shape);
      if (drawn[j].colour != drawn[i].colour) {
        EXPECT_GT(drawn[i].scale, drawn[j].scale) << drawn[i].at << " " << drawn[j].colour;
      }
    }
    coincide |= colours.size() >= 2 && shapes.size() >= 2;
  }
  EXPECT_TRUE(coincide);
  // Each point carries its figures as a tooltip (16 runs in the plot).
  EXPECT_GE(count(pareto, "<title>"), 16u);
  EXPECT_NE(pareto.find("<title>qwen'moe, rail-optimized at 100 Gb/s: 5 s per iteration against "
                        "the fat-tree's 5 s (1.00x)"),
            std::string::npos);

  // The screenshot: a PNG of the window's size with something on it (a blank page of this
  // size compresses to a few KB).
  ASSERT_TRUE(fs::exists(shot));
  const std::string png = slurp(shot);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 1400u);
  EXPECT_EQ(be32(20), 4000u);
  EXPECT_GT(png.size(), 100u * 1024);
  if (const char* keep = std::getenv("MFABRIC_KEEP_REPORT")) {
    fs::copy_file(page, fs::path(keep) / "report.html", fs::copy_options::overwrite_existing);
    fs::copy_file(shot, fs::path(keep) / "report.png", fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
