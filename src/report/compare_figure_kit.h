// What the figures of compare's report.html (compare_figures.h) share: the fabrics' colours and
// point shapes, which runs and figures can be plotted, the canvas every figure starts from, the
// points' tooltips, and a figure of the page (drawn, or explained when its data is missing).
// Each figure, or group of figures, is a source of its own: compare_ratio_figures.cpp (iteration
// time and perf/$ relative to the fat-tree), compare_cost_figures.cpp (the cost by component,
// cost against time), compare_timeline_figure.cpp (one mFabric run's timeline); they are put
// together in compare_figures.cpp. Internal to compare's page.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/compare_figures.h"
#include "report/gnuplot_script.h"
#include "study/compare.h"

namespace mfabric::report {

// Fabric colours (Tableau 10): colour k is gnuplot linetype k + 1, the same fabric has the same
// colour in every plot.
inline constexpr std::array<const char*, 10> kFabricColours = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};
// Filled point shapes first (circle, square, triangles, diamond), then open ones.
inline constexpr std::array<int, 10> kFabricPoints = {7, 5, 9, 11, 13, 6, 4, 8, 10, 12};
// The gnuplot linetype of fabric k of the comparison: its colour and point shape.
int fabric_linetype(std::size_t fabric);

// A run that can be in the plots: it finished, at a real link speed.
bool in_plots(const study::CompareRun& run);

// A figure that can be plotted: present, finite and positive.
std::optional<double> plottable(std::optional<double> x);
std::optional<double> plottable(double x);

// `set xtics (...)` naming positions 0, 1, ... with `labels`.
std::string xtics_command(const std::vector<std::string>& labels, const std::string& options);

// A canvas in the style of every figure of the page: the fabrics' colours and point shapes as
// linetypes, %g on y, no automatic key titles.
GnuplotScript compare_canvas(int width, int height);

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
  std::string in_svg(const std::string& svg) const;

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

// The figures, each drawn from the comparison's runs (d: its models, links and fabrics).
// (a) and (b), compare_ratio_figures.cpp.
PageFigure iteration_time_figure(const study::CompareResult& r, const CompareDimensions& d);
PageFigure perf_per_dollar_figure(const study::CompareResult& r, const CompareDimensions& d);
// (c) and (d), compare_cost_figures.cpp.
PageFigure cost_figure(const study::CompareResult& r, const CompareDimensions& d);
PageFigure pareto_figure(const study::CompareResult& r, const CompareDimensions& d);
// (e), compare_timeline_figure.cpp.
PageFigure timeline_figure(const study::CompareResult& r);

}  // namespace mfabric::report
