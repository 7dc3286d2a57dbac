#include "report/compare_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/output_text.h"
#include "report/compare_html.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/gnuplot_script.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

using study::CompareResult;
using study::CompareRun;

constexpr const char* kFiguresField = "report.html";

// Fabric colours (Tableau 10): colour k is gnuplot linetype k + 1, the same fabric has the same
// colour in every plot.
constexpr std::array<const char*, 10> kFabricColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                        "#59a14f", "#b07aa1", "#edc948", "#ff9da7",
                                                        "#9c755f", "#bab0ac"};
// Filled point shapes first (circle, square, triangles, diamond), then open ones.
constexpr std::array<int, 10> kFabricPoints = {7, 5, 9, 11, 13, 6, 4, 8, 10, 12};
// The Pareto plot's point shapes, one per link speed: open (circle, square, triangle up, diamond,
// triangle down, pentagon, then plus, cross, star), so that shapes drawn on one another all show;
// and the sizes of its fabrics' points, the first fabric's largest.
constexpr std::array<int, 9> kLinkPoints = {6, 4, 8, 12, 10, 14, 1, 2, 3};
constexpr double kLargestPoint = 3.2;
constexpr double kSmallestPoint = 1.2;

int fabric_linetype(std::size_t fabric) {
  return static_cast<int>(fabric % kFabricColours.size()) + 1;
}

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

// A run that can be in the plots: it finished, at a real link speed.
bool in_plots(const CompareRun& run) {
  return run.error.empty() && std::isfinite(run.link_gbps) && run.link_gbps > 0;
}

// A figure that can be plotted: present, finite and positive.
std::optional<double> plottable(std::optional<double> x) {
  if (x && std::isfinite(*x) && *x > 0) return x;
  return std::nullopt;
}
std::optional<double> plottable(double x) {
  return plottable(std::optional<double>(x));
}

// `set xtics (...)` naming positions 0, 1, ... with `labels`.
std::string xtics_command(const std::vector<std::string>& labels, const std::string& options) {
  return fmt::format("set xtics {} ({})", options, gnuplot_tic_list(labels));
}

// A canvas in the style of every figure of the page: the fabrics' colours and point shapes as
// linetypes, %g on y, no automatic key titles.
GnuplotScript compare_canvas(int width, int height) {
  GnuplotScript s(width, height);
  s.line("set format y '%g'");
  s.line("set key noautotitle");
  s.axes();
  for (std::size_t k = 0; k < kFabricColours.size(); ++k)
    s.line(fmt::format("set linetype {} lc rgb '{}' lw 2 pt {} ps 1.3", k + 1, kFabricColours[k],
                       kFabricPoints[k]));
  return s;
}

// The tooltips of a plot's points, shown when the pointer rests on one. gnuplot draws a point
// with a tooltip as a `hypertext` label, which its SVG shows through a script of its own that the
// page does not have; the labels are only names here ('tip0', 'tip1': the data column of
// name_column()), and in_svg() replaces gnuplot's handlers by an SVG <title> holding the text,
// which browsers show as they are. The text never passes through gnuplot, so it needs no
// gnuplot quoting.
class Tooltips {
 public:
  // The number that names `text` in a data block.
  double add(std::string text) {
    tips_.push_back(std::move(text));
    return static_cast<double>(tips_.size() - 1);
  }
  // The `using` column that makes a tooltip's name from data column `column`.
  static std::string name_column(int column) {
    return fmt::format("(sprintf('tip%d', ${}))", column);
  }
  // gnuplot's SVG with each named hypertext label's handlers replaced by its <title>; a label in
  // a form this does not know is left as gnuplot wrote it (without its tooltip, and harmless).
  std::string in_svg(const std::string& svg) const {
    static const std::string kOpen = "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'tip";
    static const std::string kClose =
        "')\" onmouseout=\"gnuplot_svg.hideHypertext()\"><title> </title>";
    std::string out;
    std::size_t at = 0;
    for (std::size_t found = svg.find(kOpen); found != std::string::npos;
         found = svg.find(kOpen, at)) {
      std::size_t digits = found + kOpen.size();
      std::size_t index = 0;
      while (digits < svg.size() && std::isdigit(static_cast<unsigned char>(svg[digits])) &&
             index < tips_.size())
        index = index * 10 + static_cast<std::size_t>(svg[digits++] - '0');
      if (digits == found + kOpen.size() || index >= tips_.size() ||
          svg.compare(digits, kClose.size(), kClose) != 0) {
        out.append(svg, at, digits - at);
        at = digits;
        continue;
      }
      out.append(svg, at, found - at);
      out += "<g><title>" + html_text(tips_[index]) + "</title>";
      at = digits + kClose.size();
    }
    out.append(svg, at, std::string::npos);
    return out;
  }

 private:
  std::vector<std::string> tips_;
};

// A figure of the page: drawn (script) or, without the data it needs, explained (missing).
struct PageFigure {
  std::string id;
  std::string title;
  std::string caption_html;  // already escaped
  std::optional<GnuplotScript> script;
  std::string missing;
  Tooltips tooltips;
};

// "0.45" or "0.45-0.61": the smallest and largest of `values` (non-empty) as `text` writes them.
template <class Text>
std::string range_text(std::vector<double> values, Text text) {
  std::sort(values.begin(), values.end());
  const std::string low = text(values.front()), high = text(values.back());
  return low == high ? low : low + "-" + high;
}

std::string million_dollars(double usd) {
  return fmt::format("${:.3g}M", usd / 1e6);
}

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

// (a) Iteration time / fat-tree's: one panel per link speed, models on x, a bar per fabric.
PageFigure iteration_time_figure(const CompareResult& r, const CompareDimensions& d) {
  PageFigure f{"plot-iteration-time",
               "Iteration time relative to the fat-tree",
               "One panel per link speed; for each model a bar per fabric: its iteration time "
               "divided by the fat-tree&#39;s (same model, same link speed), labelled with the "
               "iteration time itself in seconds. Below 1 (the dashed line) is faster than the "
               "fat-tree.",
               std::nullopt,
               "",
               {}};
  // bars[link][fabric] = rows {model position, ratio, iteration time (s)}
  std::vector<std::vector<std::vector<std::vector<double>>>> bars(
      d.links.size(), std::vector<std::vector<std::vector<double>>>(d.fabrics.size()));
  std::vector<bool> fabric_used(d.fabrics.size(), false), model_used(d.models.size(), false);
  double top = 1;
  for (const CompareRun& run : r.runs) {
    const std::optional<double> ratio_value = plottable(run.relative_iteration_time);
    const std::optional<double> seconds = plottable(run.iteration_time_s);
    if (!in_plots(run) || !ratio_value || !seconds) continue;
    bars[d.link(run)][d.fabric(run)].push_back(
        {static_cast<double>(d.model(run)), *ratio_value, *seconds});
    fabric_used[d.fabric(run)] = true;
    model_used[d.model(run)] = true;
    top = std::max(top, *ratio_value);
  }
  // Models on x: those with a bar, at positions 0, 1, ...
  std::vector<std::string> models;
  std::vector<double> model_x(d.models.size(), 0);
  for (std::size_t m = 0; m < d.models.size(); ++m)
    if (model_used[m]) {
      model_x[m] = static_cast<double>(models.size());
      models.push_back(d.models[m]);
    }
  std::vector<std::size_t> fabrics, links;
  for (std::size_t k = 0; k < d.fabrics.size(); ++k)
    if (fabric_used[k]) fabrics.push_back(k);
  for (std::size_t l = 0; l < d.links.size(); ++l)
    for (const auto& rows : bars[l])
      if (!rows.empty()) {
        links.push_back(l);
        break;
      }
  if (links.empty()) {
    f.missing =
        "No finished run has a finished fat-tree run of the same model and link speed "
        "to relate to.";
    return f;
  }

  const double panel_px = 290, width = 1100;
  // The key strip's height: gnuplot gives every entry the width of the longest title (about 8
  // pixels a character, and the sample), as many to a row as fit; 20 pixels a row. Eight fabrics
  // with "+hierarchical" names take three rows.
  std::size_t longest = 0;
  for (std::size_t k : fabrics)
    longest = std::max(longest, display_width(valid_utf8(d.fabrics[k])));
  const std::size_t per_row = std::max<std::size_t>(
      1, static_cast<std::size_t>((width - 20) / (8 * static_cast<double>(longest) + 80)));
  const double key_px = 30 + 20 * static_cast<double>((fabrics.size() + per_row - 1) / per_row);
  const double bar = 0.8 / static_cast<double>(fabrics.size());
  GnuplotScript s =
      compare_canvas(static_cast<int>(width),
                     static_cast<int>(key_px + panel_px * static_cast<double>(links.size()) + 10));
  s.line("set multiplot");
  s.line("set style fill solid 0.9 border lc rgb '#333333'");
  std::vector<std::string> key;
  for (std::size_t k : fabrics)
    key.push_back(fmt::format("keyentry with boxes lt {} title {}", fabric_linetype(k),
                              gnuplot_string(d.fabrics[k])));
  s.key_strip(5, key_px - 5, key);
  s.line(fmt::format("set boxwidth {} absolute", gnuplot_number(bar)));
  s.line(fmt::format("set xrange [-0.5:{}]",
                     gnuplot_number(static_cast<double>(models.size()) - 0.5)));
  // Room above the highest bar for its label, written upwards.
  s.line(fmt::format("set yrange [0:{}]", gnuplot_number(top * 1.4)));
  s.line(xtics_command(models, models.size() > 6 ? "rotate by 20 right" : ""));
  s.line("set ylabel " + gnuplot_string("iteration time / fat-tree's"));
  s.line(
      "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 "
      "lc rgb '#333333' front");
  for (std::size_t p = 0; p < links.size(); ++p) {
    const double panel_top = key_px + panel_px * static_cast<double>(p);
    s.area(90, panel_top + 45, width - 20, panel_top + panel_px - (models.size() > 6 ? 85 : 50));
    s.line("set title " + gnuplot_string(link_label(d.links[links[p]]) + " links"));
    std::vector<std::string> series;
    for (std::size_t j = 0; j < fabrics.size(); ++j) {
      // Bars of one model side by side, centred on the model's position.
      auto rows = bars[links[p]][fabrics[j]];
      if (rows.empty()) continue;
      const double offset =
          (static_cast<double>(j) - (static_cast<double>(fabrics.size()) - 1) / 2) * bar;
      for (auto& row : rows)
        row[0] = model_x[static_cast<std::size_t>(row[0])] + offset;
      const std::string name = fmt::format("a_{}_{}", p, j);
      s.block(name, rows);
      series.push_back(
          fmt::format("${} using 1:2 with boxes lt {}", name, fabric_linetype(fabrics[j])));
      series.push_back(fmt::format(
          "${} using 1:2:(sprintf('%.3g s', $3)) with labels rotate by 90 left offset 0,0.4 "
          "font 'sans,11' tc rgb '#333333'",
          name));
    }
    s.line("plot " + join_strings(series, ", \\\n  "));
  }
  s.line("unset multiplot");
  f.script = std::move(s);
  return f;
}

// Hover text of a point of plot (b): the absolute figures behind one fabric's ratio at one link
// speed (its runs, one per model).
std::string perf_per_dollar_tip(const CompareResult& r, const std::vector<const CompareRun*>& runs,
                                const std::vector<double>& ratios, const RatioSpread& spread,
                                fabric::CostConvention convention) {
  const CompareRun& first = *runs.front();
  std::string tip =
      fmt::format("{} at {}: perf/$ {:.2f}x the fat-tree's, the geometric mean of {} model{}",
                  first.fabric, link_label(first.link_gbps), spread.geometric_mean, ratios.size(),
                  ratios.size() == 1 ? "" : "s");
  if (fmt::format("{:.2f}", spread.lowest) != fmt::format("{:.2f}", spread.highest))
    tip += fmt::format(" ({:.2f}x to {:.2f}x)", spread.lowest, spread.highest);
  std::vector<double> cost, fat_tree_cost, time, fat_tree_time;
  for (const CompareRun* run : runs) {
    const CompareRun* fat_tree = study::fat_tree_of(r.runs, *run);
    if (!fat_tree) continue;
    cost.push_back(run->cost(convention).total());
    fat_tree_cost.push_back(fat_tree->cost(convention).total());
    time.push_back(run->iteration_time_s);
    fat_tree_time.push_back(fat_tree->iteration_time_s);
  }
  if (!cost.empty()) {
    const auto seconds = [](double x) { return fmt::format("{:.3g}", x); };
    tip += fmt::format(
        ". Network cost {} against the fat-tree's {} ({}); iteration time {} s against {} s.",
        range_text(cost, million_dollars), range_text(fat_tree_cost, million_dollars),
        study::cost_convention_label(convention), range_text(time, seconds),
        range_text(fat_tree_time, seconds));
  }
  return tip;
}

// (b) perf/$ / fat-tree's vs link speed: per fabric the geometric mean over models, error bars
// from the smallest to the largest model.
PageFigure perf_per_dollar_figure(const CompareResult& r, const CompareDimensions& d) {
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  PageFigure f{"plot-perf-per-dollar",
               "perf/$ relative to the fat-tree",
               fmt::format("For each fabric and link speed: perf/$ (1 / iteration time / network "
                           "cost, {}) divided by the fat-tree&#39;s, the geometric mean over the "
                           "models (points and lines); the error bars run from the lowest to the "
                           "highest model. Above 1 (the dashed line) is more perf/$ than the "
                           "fat-tree. Hover over a point for its costs and iteration times.",
                           study::cost_convention_label(convention)),
               std::nullopt,
               "",
               {}};
  // values[fabric][link] = the models' ratios, of runs[fabric][link]
  std::vector<std::vector<std::vector<double>>> values(
      d.fabrics.size(), std::vector<std::vector<double>>(d.links.size()));
  std::vector<std::vector<std::vector<const CompareRun*>>> runs(
      d.fabrics.size(), std::vector<std::vector<const CompareRun*>>(d.links.size()));
  for (const CompareRun& run : r.runs) {
    const std::optional<double> v = plottable(run.perf_per_dollar_vs_fat_tree);
    if (!in_plots(run) || !v) continue;
    values[d.fabric(run)][d.link(run)].push_back(*v);
    runs[d.fabric(run)][d.link(run)].push_back(&run);
  }
  GnuplotScript s = compare_canvas(1100, 460);
  std::vector<std::string> series;
  std::vector<double> all, links_used;
  for (std::size_t k = 0; k < d.fabrics.size(); ++k) {
    std::vector<std::vector<double>> rows, tips;
    for (std::size_t l = 0; l < d.links.size(); ++l) {
      if (values[k][l].empty()) continue;
      const RatioSpread spread = ratio_spread(values[k][l]);
      rows.push_back({d.links[l], spread.geometric_mean, spread.lowest, spread.highest});
      tips.push_back(
          {d.links[l], spread.geometric_mean,
           f.tooltips.add(perf_per_dollar_tip(r, runs[k][l], values[k][l], spread, convention))});
      all.push_back(spread.highest);
      links_used.push_back(d.links[l]);
    }
    if (rows.empty()) continue;
    // Lines join link speeds in increasing order.
    std::sort(rows.begin(), rows.end());
    const std::string name = fmt::format("b_{}", k);
    s.block(name, rows);
    s.block(name + "_tips", tips);
    series.push_back(fmt::format("${} using 1:2:3:4 with yerrorlines lt {} title {}", name,
                                 fabric_linetype(k), gnuplot_string(d.fabrics[k])));
    // The same points again, as hover targets.
    series.push_back(fmt::format("${}_tips using 1:2:{} with labels hypertext point lt {} pt {}",
                                 name, Tooltips::name_column(3), fabric_linetype(k),
                                 kFabricPoints[k % kFabricPoints.size()]));
  }
  if (series.empty()) {
    f.missing =
        "No finished run has a finished fat-tree run of the same model and link speed "
        "to relate to.";
    return f;
  }
  std::sort(links_used.begin(), links_used.end());
  links_used.erase(std::unique(links_used.begin(), links_used.end()), links_used.end());
  std::vector<std::string> link_tics;
  for (double l : links_used)
    link_tics.push_back(fmt::format("'{:g}' {}", l, gnuplot_number(l)));
  s.area(90, 20, s.width() - 200, s.height() - 80);
  s.line("set logscale x 2");
  s.line(fmt::format("set xrange [{}:{}]", gnuplot_number(links_used.front() / 1.3),
                     gnuplot_number(links_used.back() * 1.3)));
  s.line(fmt::format("set xtics ({})", join_strings(link_tics, ", ")));
  s.line(fmt::format("set yrange [0:{}]",
                     gnuplot_number(*std::max_element(all.begin(), all.end()) * 1.12 + 0.05)));
  s.line("set xlabel " + gnuplot_string("link speed (Gb/s, log scale)"));
  s.line("set ylabel " + gnuplot_string(fmt::format("perf/$ / fat-tree's ({})",
                                                    study::cost_convention_label(convention))));
  s.line("set key at screen " + s.x(s.width() - 185) + "," + s.y(20) +
         " left top vertical samplen 2 spacing 1.3");
  s.line(
      "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 "
      "lc rgb '#333333' back");
  s.line("set bars 2");
  s.line("plot " + join_strings(series, ", \\\n  "));
  f.script = std::move(s);
  return f;
}

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

// (e) The timeline of one mFabric run: its region's reconfigurations against its all-to-alls.
// Spans of one kind that overlap in time (the all-to-alls of the region's EP groups run
// together) are drawn as one bar; the whole run, and with more than kZoomBars bars a second
// panel zoomed on the first ones.
constexpr std::size_t kZoomBars = 40;

std::string count_text(std::size_t n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

PageFigure timeline_figure(const CompareResult& r) {
  PageFigure f{"plot-timeline",
               "Reconfigurations against all-to-alls (one mFabric run)",
               "",
               std::nullopt,
               "",
               {}};
  std::vector<study::TimelineSpan> spans;
  for (const study::TimelineSpan& span : r.timeline)
    if (std::isfinite(span.start_s) && std::isfinite(span.end_s) && span.end_s >= span.start_s)
      spans.push_back(span);
  if (spans.empty()) {
    f.caption_html =
        "Region 0 of the first mFabric run that finished: its circuit reconfigurations against "
        "its expert-parallel all-to-alls.";
    f.missing = "No mFabric run finished with a timeline.";
    return f;
  }
  std::size_t reconfigurations = 0;
  for (const auto& span : spans)
    reconfigurations += span.reconfiguration ? 1 : 0;

  // Bars: by kind, then by start; a span starting before the previous bar of its kind ends
  // extends that bar. Then in order of start, both kinds together.
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return std::tie(a.reconfiguration, a.start_s) < std::tie(b.reconfiguration, b.start_s);
  });
  std::vector<study::TimelineSpan> bars;
  for (const auto& span : spans) {
    if (!bars.empty() && bars.back().reconfiguration == span.reconfiguration &&
        span.start_s <= bars.back().end_s)
      bars.back().end_s = std::max(bars.back().end_s, span.end_s);
    else
      bars.push_back(span);
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  const bool zoom = bars.size() > kZoomBars;

  const std::string run_name = r.timeline_run.empty() ? "the mFabric run" : r.timeline_run;
  f.caption_html = fmt::format(
      "{}: region 0&#39;s circuit reconfigurations (top row, {}) and its expert-parallel "
      "all-to-alls (bottom row, {}); spans of a row that overlap in time are drawn as one bar. "
      "Time in seconds from the start of the run.{}",
      html_text(run_name), count_text(reconfigurations, "reconfiguration"),
      count_text(spans.size() - reconfigurations, "all-to-all"),
      zoom ? fmt::format(" The lower panel zooms on the first {} bars (the shaded window above).",
                         kZoomBars)
           : "");

  const double panel_h = 220;
  GnuplotScript s = compare_canvas(1100, static_cast<int>(panel_h * (zoom ? 2 : 1) + 10));
  std::vector<std::vector<double>> reconfiguration_rows, all_to_all_rows;
  for (const auto& bar : bars) {
    const double y = bar.reconfiguration ? 1 : 0;
    (bar.reconfiguration ? reconfiguration_rows : all_to_all_rows)
        .push_back({(bar.start_s + bar.end_s) / 2, y, bar.start_s, bar.end_s, y - 0.3, y + 0.3});
  }
  if (!reconfiguration_rows.empty()) s.block("e_reconfiguration", reconfiguration_rows);
  if (!all_to_all_rows.empty()) s.block("e_all_to_all", all_to_all_rows);
  std::vector<std::string> series;
  if (!reconfiguration_rows.empty())
    series.push_back(
        "$e_reconfiguration using 1:2:3:4:5:6 with boxxyerror lc rgb '#e15759' "
        "fs solid 0.85 border lc rgb '#e15759'");
  if (!all_to_all_rows.empty())
    series.push_back(
        "$e_all_to_all using 1:2:3:4:5:6 with boxxyerror lc rgb '#4e79a7' "
        "fs solid 0.85 border lc rgb '#4e79a7'");
  const std::string plot = "plot " + join_strings(series, ", \\\n  ");

  double end = 0;
  for (const auto& bar : bars)
    end = std::max(end, bar.end_s);
  double zoom_end = 0;
  for (std::size_t i = 0; i < std::min(kZoomBars, bars.size()); ++i)
    zoom_end = std::max(zoom_end, bars[i].end_s);
  const double start = bars.front().start_s;
  const auto range = [](double from, double to) {
    const double pad = std::max((to - from) * 0.01, 1e-9);
    return fmt::format("set xrange [{}:{}]", gnuplot_number(from - pad), gnuplot_number(to + pad));
  };

  s.line("set multiplot");
  s.line("set yrange [-0.6:1.6]");
  s.line("set ytics ('reconfiguration' 1, 'all-to-all' 0)");
  s.line("set grid noytics xtics back lc rgb '#dddddd' lw 1 dt 1");
  s.line("set format x '%g'");
  s.line("set xlabel " + gnuplot_string("time (s)"));
  s.area(140, 45, s.width() - 20, panel_h - 80);
  s.line("set title " + gnuplot_string("whole run"));
  s.line(range(std::min(0.0, start), end));
  if (zoom)
    s.line(
        fmt::format("set object 1 rect from {}, graph 0 to {}, graph 1 fc rgb '#eeeeee' "
                    "fs solid 1.0 noborder behind",
                    gnuplot_number(start), gnuplot_number(zoom_end)));
  s.line(plot);
  if (zoom) {
    s.line("unset object 1");
    s.area(140, panel_h + 45, s.width() - 20, 2 * panel_h - 80);
    s.line("set title " + gnuplot_string(fmt::format("first {} bars", kZoomBars)));
    s.line(range(start, zoom_end));
    s.line(plot);
  }
  s.line("unset multiplot");
  f.script = std::move(s);
  return f;
}

std::string figure_html(const PageFigure& f) {
  std::string out =
      fmt::format("<figure id=\"{}\">\n<figcaption><strong>{}.</strong> {}</figcaption>\n", f.id,
                  html_text(f.title), f.caption_html);
  if (f.script) {
    const std::string svg =
        inline_svg(f.tooltips.in_svg(run_gnuplot(f.script->text(), kFiguresField)), f.id + "-");
    out += svg;
    if (!svg.empty() && svg.back() != '\n') out += '\n';
  } else {
    out += fmt::format("<p class=\"missing\">Not drawn: {}</p>\n", html_text(f.missing));
  }
  out += "</figure>\n";
  return out;
}

}  // namespace

CompareDimensions::CompareDimensions(const CompareResult& r) {
  for (const CompareRun& run : r.runs) {
    if (std::find(models.begin(), models.end(), run.model) == models.end())
      models.push_back(run.model);
    if (in_plots(run) && std::find(links.begin(), links.end(), run.link_gbps) == links.end())
      links.push_back(run.link_gbps);
    if (std::find(fabrics.begin(), fabrics.end(), run.fabric) == fabrics.end())
      fabrics.push_back(run.fabric);
  }
}

std::string link_label(double gbps) {
  return fmt::format("{:g} Gb/s", gbps);
}

std::string compare_figures_html(const CompareResult& r, const CompareDimensions& d) {
  const std::vector<PageFigure> figures = {iteration_time_figure(r, d),
                                           perf_per_dollar_figure(r, d), cost_figure(r, d),
                                           pareto_figure(r, d), timeline_figure(r)};
  std::string out;
  for (const PageFigure& f : figures)
    out += figure_html(f);
  return out;
}

}  // namespace mfabric::report
