// Figures (a) and (b) of compare's report.html (compare_figure_kit.h): the iteration time and
// the performance per dollar of each fabric relative to the fat-tree of the same model and link.
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

}  // namespace

// (a) Iteration time / fat-tree's: one panel per link speed, models on x, a bar per fabric.
PageFigure iteration_time_figure(const CompareResult& r, const CompareDimensions& d) {
  PageFigure f{"plot-iteration-time",
               "Iteration time relative to the fat-tree",
               "One panel per link speed; for each model a bar per fabric: its iteration time "
               "divided by the fat-tree&#39;s (same model, same link speed), labelled with the "
               "iteration time itself in seconds. Below 1 (the dashed line) is faster than the "
               "fat-tree. A whisker on a bar is its range over the verdict&#39;s spread (the "
               "seeds and the routing skew band: docs/compare.md).",
               std::nullopt,
               "",
               {}};
  // bars[link][fabric] = rows {model position, ratio, iteration time (s), low, high}: low and
  // high the ratio's range over the verdict's spread (the ratio itself without one).
  std::vector<std::vector<std::vector<std::vector<double>>>> bars(
      d.links.size(), std::vector<std::vector<std::vector<double>>>(d.fabrics.size()));
  const std::vector<study::Verdict> verdicts =
      study::verdicts(r.runs, study::counted_convention(r.cost_convention));
  std::vector<bool> fabric_used(d.fabrics.size(), false), model_used(d.models.size(), false);
  double top = 1;
  for (const CompareRun& run : r.runs) {
    const std::optional<double> ratio_value = plottable(run.relative_iteration_time);
    const std::optional<double> seconds = plottable(run.iteration_time_s);
    if (!in_plots(run) || !ratio_value || !seconds) continue;
    // Relative time is the inverse of speed: the slowest pair is the range's top.
    double low = *ratio_value, high = *ratio_value;
    for (const study::Verdict& v : verdicts) {
      if (v.model == run.model && v.link_gbps == run.link_gbps && v.fabric == run.fabric &&
          v.pairs > 1 && v.speed.low > 0 && v.speed.high > 0) {
        low = 1 / v.speed.high;
        high = 1 / v.speed.low;
      }
    }
    bars[d.link(run)][d.fabric(run)].push_back(
        {static_cast<double>(d.model(run)), *ratio_value, *seconds, low, high});
    fabric_used[d.fabric(run)] = true;
    model_used[d.model(run)] = true;
    top = std::max(top, high);
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
      // The spread's whiskers, where a bar has one.
      const bool ranged = std::any_of(rows.begin(), rows.end(),
                                      [](const std::vector<double>& x) { return x[3] != x[4]; });
      if (ranged) {
        series.push_back(fmt::format(
            "${} using 1:2:4:5 with yerrorbars pt -1 lw 1.5 lc rgb '#111111' notitle", name));
      }
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

}  // namespace mfabric::report
