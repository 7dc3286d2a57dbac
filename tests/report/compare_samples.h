// Hand-made comparisons and HTML probes shared by the tests of compare's report.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "report/compare_report.h"

// Helpers in a namespace of their own: test files are compiled several to a translation unit.
namespace mfabric::report::compare_html_test {

namespace fs = std::filesystem;
using study::CompareResult;
using study::CompareRun;

// Names that need escaping in gnuplot strings, XML and HTML.
inline const std::string kModelA = "Mix<tral> & \"8x7b\"";
inline const std::string kModelB = "qwen'moe";
inline const std::string kTopo = "topo \"opt\" & <x>";
inline const std::string kFailedFabric = "only-in-a-failed-run";

inline fabric::CostBreakdown cost(double nics, double transceivers, double switch_ports, double ocs,
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
inline CompareRun run(const std::string& model, double gbps, const std::string& fabric,
                      double time_s, const fabric::CostBreakdown& paper, double fat_tree_s,
                      double fat_tree_usd) {
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
inline CompareResult sample(bool with_fat_tree = true) {
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
inline std::string figure(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<figure id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  const std::size_t end = html.find("</figure>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The most drawing elements (path, polygon, polyline, rect, use, circle) in one of gnuplot's
// plot groups (<g id="...gnuplot_plot_N">, one per plotted series, up to its matching </g>). A
// series with a key entry draws a sample (at most two elements) and its data; one with data only
// draws its data.
inline std::size_t most_drawn_in_a_plot(const std::string& svg) {
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

// The values of every `name=` attribute in the page, quoted with ' or ", in order; `space`: only
// where whitespace comes before the name (a plain scan: <regex> would cost the suite's build more
// than these checks are worth).
inline std::vector<std::string> attribute_values(const std::string& html, const std::string& name,
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

// One model at one link speed, costed in both conventions: the fat-tree (10 s; $4M by the paper's
// formulas, $3M built) and mFabric (12.5 s; $1M paper, $2M built).
inline CompareResult one_model() {
  CompareResult r;
  CompareRun ft = run("m", 400, "fat-tree", 10, cost(4e6, 0, 0, 0, 0, 0), 10, 4e6);
  ft.cost_built = cost(3e6, 0, 0, 0, 0, 0);
  CompareRun mf = run("m", 400, "mfabric", 12.5, cost(1e6, 0, 0, 0, 0, 0), 10, 4e6);
  mf.cost_built = cost(2e6, 0, 0, 0, 0, 0);
  r.runs = {ft, mf};
  return r;
}

}  // namespace mfabric::report::compare_html_test
