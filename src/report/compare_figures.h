// The figures of report.html of `mfabric compare` (compare_html.h, docs/compare.md), drawn
// by gnuplot: iteration time and perf/$ relative to the fat-tree, the network cost by component,
// cost against time, and one mFabric run's timeline. Costs are counted in the comparison's
// convention (CompareResult::cost_convention), named in the figures; points of the perf/$ and
// Pareto plots carry the absolute figures behind them as tooltips (SVG <title>).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "study/compare.h"

namespace mfabric::report {

// The models, link speeds and fabrics of the comparison, in the order of the runs (failed runs
// included, so that a fabric keeps its colour whichever runs fail; link speeds only of runs
// that are plotted).
struct CompareDimensions {
  std::vector<std::string> models;
  std::vector<double> links;
  std::vector<std::string> fabrics;

  explicit CompareDimensions(const study::CompareResult& r);
  static std::size_t index(const auto& list, const auto& value) {
    return static_cast<std::size_t>(std::find(list.begin(), list.end(), value) - list.begin());
  }
  std::size_t model(const study::CompareRun& run) const { return index(models, run.model); }
  // Only for runs that are plotted (the others' link speeds are not listed).
  std::size_t link(const study::CompareRun& run) const { return index(links, run.link_gbps); }
  std::size_t fabric(const study::CompareRun& run) const { return index(fabrics, run.fabric); }
};

// "400 Gb/s".
std::string link_label(double gbps);

// The page's figures (kCompareFigureIds, in that order), each a <figure> element: drawn, or a
// note saying what it would need. mfabric::Error (field "report.html") when gnuplot fails.
std::string compare_figures_html(const study::CompareResult& r, const CompareDimensions& d);

}  // namespace mfabric::report
