// Figures (c) and (d) of compare's report.html (compare_figure_kit.h): the network cost by
// component in the comparison's convention, and cost against iteration time, both relative to
// the fat-tree.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/output_text.h"
#include "report/compare_figure_kit.h"
#include "report/compare_html.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/gnuplot_script.h"
#include "report/html_page.h"

namespace mfabric::report {

using study::CompareResult;
using study::CompareRun;

namespace {

// The Pareto plot's point shapes, one per link speed: open (circle, square, triangle up, diamond,
// triangle down, pentagon, then plus, cross, star), so that shapes drawn on one another all show;
// and the sizes of its fabrics' points, the first fabric's largest.
constexpr std::array<int, 9> kLinkPoints = {6, 4, 8, 12, 10, 14, 1, 2, 3};
constexpr double kLargestPoint = 3.2;
constexpr double kSmallestPoint = 1.2;

// A network cost component of the paper's convention (fabric/cost.h).
struct CostComponent {
  const char* name;
  const char* colour;
  double fabric::CostBreakdown::*usd;
};
const std::array<CostComponent, 6> kComponents = {{
    {"NICs", "#4e79a7", &fabric::CostBreakdown::nics},
    {"transceivers", "#f28e2b", &fabric::CostBreakdown::transceivers},
    {"switch ports", "#59a14f", &fabric::CostBreakdown::switch_ports},
    {"OCS ports", "#e15759", &fabric::CostBreakdown::ocs_ports},
    {"patch-panel ports", "#b07aa1", &fabric::CostBreakdown::patch_panel_ports},
    {"fibres", "#9c755f", &fabric::CostBreakdown::fibres},
}};

// Smallest and largest of `values` with `include` and a margin of `pad` of the span either side.
std::pair<double, double> padded_range(const std::vector<double>& values, double include,
                                       double pad) {
  double lo = include, hi = include;
  for (double v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double margin = std::max(hi - lo, 0.05 * std::max(std::abs(hi), 1e-12)) * pad;
  return {lo - margin, hi + margin};
}

}  // namespace

// (c) Network cost by component, in the comparison's convention: one panel per link speed, a
// stacked bar per fabric. The cost depends on the fabric, the servers and the link speed, not on
// the model: each bar is the first finished run of that fabric and link speed.
PageFigure cost_figure(const CompareResult& r, const CompareDimensions& d) {
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  const std::string convention_name = study::cost_convention_label(convention);
  PageFigure f{
      "plot-cost-components",
      "Network cost by component (" + convention_name + ")",
      fmt::format("One panel per link speed; a bar per fabric, its network cost counted by {} "
                  "and split into the paper&#39;s components (the total, in million USD, is "
                  "written above the bar). The cost does not depend on the model: each bar is "
                  "the fabric&#39;s first finished run at that link speed.",
                  convention_name),
      std::nullopt,
      "",
      {}};
  // cost[link][fabric]
  std::vector<std::vector<const fabric::CostBreakdown*>> cost(
      d.links.size(), std::vector<const fabric::CostBreakdown*>(d.fabrics.size(), nullptr));
  for (const CompareRun& run : r.runs)
    if (in_plots(run) && plottable(run.cost(convention).total()) &&
        !cost[d.link(run)][d.fabric(run)])
      cost[d.link(run)][d.fabric(run)] = &run.cost(convention);
  std::vector<std::size_t> links;
  std::vector<bool> component_used(kComponents.size(), false);
  for (std::size_t l = 0; l < d.links.size(); ++l) {
    bool any = false;
    for (const fabric::CostBreakdown* c : cost[l]) {
      if (!c) continue;
      any = true;
      for (std::size_t i = 0; i < kComponents.size(); ++i)
        if (plottable(c->*kComponents[i].usd)) component_used[i] = true;
    }
    if (any) links.push_back(l);
  }
  if (links.empty()) {
    f.missing = "No run finished, so there is no cost to show.";
    return f;
  }

  // Two panels a row (one when there is one link speed).
  const std::size_t columns = links.size() > 1 ? 2 : 1;
  const std::size_t rows_of_panels = (links.size() + columns - 1) / columns;
  const double width = 1100, key_px = 60, panel_h = 340;
  const double panel_w = (width - 10) / static_cast<double>(columns);
  GnuplotScript s =
      compare_canvas(static_cast<int>(width),
                     static_cast<int>(key_px + panel_h * static_cast<double>(rows_of_panels) + 10));
  s.line("set multiplot");
  s.line("set style fill solid 0.9 border lc rgb '#333333'");
  std::vector<std::string> key;
  for (std::size_t i = 0; i < kComponents.size(); ++i)
    if (component_used[i])
      key.push_back(fmt::format("keyentry with boxxyerror lc rgb '{}' title {}",
                                kComponents[i].colour, gnuplot_string(kComponents[i].name)));
  s.key_strip(5, key_px - 5, key);
  s.line("set ylabel " + gnuplot_string("network cost (million USD, " + convention_name + ")"));
  for (std::size_t p = 0; p < links.size(); ++p) {
    const std::size_t l = links[p];
    std::vector<std::size_t> fabrics;
    double panel_top = 0;
    for (std::size_t k = 0; k < d.fabrics.size(); ++k)
      if (cost[l][k]) {
        fabrics.push_back(k);
        panel_top = std::max(panel_top, cost[l][k]->total());
      }
    std::vector<std::string> names;
    for (std::size_t k : fabrics)
      names.push_back(d.fabrics[k]);
    const double left = 5 + panel_w * static_cast<double>(p % columns);
    const double top_px = key_px + panel_h * static_cast<double>(p / columns);
    s.area(left + 85, top_px + 45, left + panel_w - 15, top_px + panel_h - 90);
    s.line("set title " + gnuplot_string(link_label(d.links[l]) + " links"));
    // Each panel has its own scale: costs grow with the link speed, and the totals are written.
    s.line(fmt::format("set yrange [0:{}]", gnuplot_number(panel_top / 1e6 * 1.15)));
    s.line(fmt::format("set xrange [-0.6:{}]",
                       gnuplot_number(static_cast<double>(fabrics.size()) - 0.4)));
    s.line(xtics_command(names, "rotate by 25 right"));
    std::vector<std::string> series;
    std::vector<std::vector<double>> totals;
    for (std::size_t i = 0; i < kComponents.size(); ++i) {
      std::vector<std::vector<double>> rows;
      for (std::size_t j = 0; j < fabrics.size(); ++j) {
        const fabric::CostBreakdown& c = *cost[l][fabrics[j]];
        double below = 0;
        for (std::size_t b = 0; b < i; ++b)
          if (plottable(c.*kComponents[b].usd)) below += c.*kComponents[b].usd;
        const std::optional<double> v = plottable(c.*kComponents[i].usd);
        if (!v) continue;
        const double x = static_cast<double>(j);
        rows.push_back(
            {x, (below + *v / 2) / 1e6, x - 0.32, x + 0.32, below / 1e6, (below + *v) / 1e6});
      }
      if (rows.empty()) continue;
      const std::string name = fmt::format("c_{}_{}", p, i);
      s.block(name, rows);
      series.push_back(fmt::format("${} using 1:2:3:4:5:6 with boxxyerror lc rgb '{}'", name,
                                   kComponents[i].colour));
    }
    for (std::size_t j = 0; j < fabrics.size(); ++j)
      totals.push_back({static_cast<double>(j), cost[l][fabrics[j]]->total() / 1e6});
    const std::string totals_name = fmt::format("c_{}_total", p);
    s.block(totals_name, totals);
    series.push_back(
        fmt::format("${} using 1:2:(sprintf('%.3g', $2)) with labels offset 0,0.8 font 'sans,12'",
                    totals_name));
    s.line("plot " + join_strings(series, ", \\\n  "));
  }
  s.line("unset multiplot");
  f.script = std::move(s);
  return f;
}

// (d) Cost vs iteration time, both relative to the fat-tree: a point per run, its colour the
// fabric's, its shape the link speed's. Points coincide: the fat-tree's of every link speed at
// (1, 1), and rail-optimized costs what the fat-tree does and may be as fast. So the shapes are
// open, and each fabric's points have a size of their own, the largest drawn first: points at
// one place show as outlines around each other.
PageFigure pareto_figure(const CompareResult& r, const CompareDimensions& d) {
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  const char* convention_name = study::cost_convention_label(convention);
  PageFigure f{
      "plot-cost-vs-time",
      "Network cost vs iteration time (Pareto view)",
      fmt::format(
          "A point per run: x its iteration time divided by the fat-tree&#39;s, y its network "
          "cost ({}) divided by the fat-tree&#39;s, both for the same model and link speed. The "
          "colour is the fabric, the shape the link speed. The fat-tree is at (1, 1); lower left "
          "is faster and cheaper. The shapes are open and each fabric has a size of its own, the "
          "largest drawn first, so that points at the same place (the fat-tree&#39;s of every "
          "link speed, or rail-optimized on the fat-tree) show as outlines around each other. "
          "Hover over a point&#39;s outline for its iteration times and costs.",
          convention_name),
      std::nullopt,
      "",
      {}};
  // points[fabric] = rows {x, y, tooltip, point shape}
  std::vector<std::vector<std::vector<double>>> points(d.fabrics.size());
  std::vector<bool> link_used(d.links.size(), false);
  std::vector<double> xs, ys;
  for (const CompareRun& run : r.runs) {
    const CompareRun* fat_tree = in_plots(run) ? study::fat_tree_of(r.runs, run) : nullptr;
    if (!fat_tree) continue;
    const double cost = run.cost(convention).total();
    const double fat_tree_cost = fat_tree->cost(convention).total();
    const std::optional<double> time = plottable(run.iteration_time_s / fat_tree->iteration_time_s);
    const std::optional<double> cost_ratio = plottable(cost / fat_tree_cost);
    if (!time || !cost_ratio) continue;
    const std::string tip = fmt::format(
        "{}, {} at {}: {:.4g} s per iteration against the fat-tree's {:.4g} s ({:.2f}x); network "
        "cost {} against {} ({:.2f}x, {}); perf/$ {:.2f}x the fat-tree's.",
        run.model, run.fabric, link_label(run.link_gbps), run.iteration_time_s,
        fat_tree->iteration_time_s, *time, dollars(cost), dollars(fat_tree_cost), *cost_ratio,
        convention_name, 1 / (*time * *cost_ratio));
    const std::size_t link = d.link(run);
    points[d.fabric(run)].push_back({*time, *cost_ratio, f.tooltips.add(tip),
                                     static_cast<double>(kLinkPoints[link % kLinkPoints.size()])});
    link_used[link] = true;
    xs.push_back(*time);
    ys.push_back(*cost_ratio);
  }
  if (xs.empty()) {
    f.missing =
        "No finished run has a finished fat-tree run of the same model and link speed "
        "to relate to.";
    return f;
  }
  std::vector<std::size_t> fabrics;
  for (std::size_t k = 0; k < d.fabrics.size(); ++k)
    if (!points[k].empty()) fabrics.push_back(k);
  GnuplotScript s = compare_canvas(1100, 500);
  std::vector<std::string> series;
  for (std::size_t j = 0; j < fabrics.size(); ++j) {
    const std::size_t k = fabrics[j];
    const double size = fabrics.size() == 1
                            ? kLargestPoint
                            : kLargestPoint - (kLargestPoint - kSmallestPoint) *
                                                  static_cast<double>(j) /
                                                  static_cast<double>(fabrics.size() - 1);
    // A fabric's points in one series, each with its link speed's shape (column 4).
    const std::string name = fmt::format("d_{}", k);
    s.block(name, points[k]);
    series.push_back(
        fmt::format("${} using 1:2:{}:4 with labels hypertext point lt {} pt variable ps {}", name,
                    Tooltips::name_column(3), fabric_linetype(k), gnuplot_number(size)));
  }
  for (std::size_t k : fabrics)
    series.push_back(fmt::format("keyentry with points lt {} pt 6 ps 1.3 title {}",
                                 fabric_linetype(k), gnuplot_string(d.fabrics[k])));
  for (std::size_t l = 0; l < d.links.size(); ++l)
    if (link_used[l])
      series.push_back(
          fmt::format("keyentry with points pt {} ps 1.3 lw 2 lc rgb '#555555' title {}",
                      kLinkPoints[l % kLinkPoints.size()], gnuplot_string(link_label(d.links[l]))));
  const auto [x_lo, x_hi] = padded_range(xs, 1, 0.08);
  const auto [y_lo, y_hi] = padded_range(ys, 1, 0.08);
  s.area(90, 20, s.width() - 200, s.height() - 80);
  s.line(
      fmt::format("set xrange [{}:{}]", gnuplot_number(std::max(0.0, x_lo)), gnuplot_number(x_hi)));
  s.line(
      fmt::format("set yrange [{}:{}]", gnuplot_number(std::max(0.0, y_lo)), gnuplot_number(y_hi)));
  s.line("set grid xtics ytics back lc rgb '#dddddd' lw 1 dt 1");
  s.line("set xlabel " + gnuplot_string("iteration time / fat-tree's"));
  s.line("set ylabel " +
         gnuplot_string(fmt::format("network cost / fat-tree's ({})", convention_name)));
  s.line("set key at screen " + s.x(s.width() - 185) + "," + s.y(20) +
         " left top vertical spacing 1.3");
  s.line(
      "set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead dt 2 lw 1.5 "
      "lc rgb '#777777' back");
  s.line(
      "set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 "
      "lc rgb '#777777' back");
  s.line("plot " + join_strings(series, ", \\\n  "));
  f.script = std::move(s);
  return f;
}

}  // namespace mfabric::report
