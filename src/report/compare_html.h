// report.html of `mfabric compare --out DIR` (docs/compare.md): one self-contained page
// (inline CSS, inline SVG plots drawn by gnuplot, no scripts, no external files) that opens with
// the verdict (compare_report.h's headline) and holds the comparison's plots, where mFabric's
// time goes, and its results table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "study/compare.h"

namespace mfabric::report {

// The ids of the page's figures (<figure id="...">), in page order.
inline constexpr const char* kCompareFigureIds[] = {
    "plot-iteration-time",   // iteration time / fat-tree's, per model, one panel per link speed
    "plot-perf-per-dollar",  // perf/$ / fat-tree's vs link speed
    "plot-cost-components",  // network cost by component (the comparison's convention), per link
    "plot-cost-vs-time",     // network cost vs iteration time, both relative to the fat-tree
    "plot-timeline",         // r.timeline: reconfigurations and all-to-alls of one mFabric run
};

// The models' ratios of one fabric and link speed as plot (b) draws them: the geometric mean
// (the mean of ratios that treats 2x and 0.5x symmetrically), the lowest and the highest.
// `ratios` must be non-empty and positive.
struct RatioSpread {
  double geometric_mean = 0;
  double lowest = 0;
  double highest = 0;
};
RatioSpread ratio_spread(const std::vector<double>& ratios);

// The page. A failed run (non-empty error) is in the table with its error and in no plot; a
// plot needing a figure that no run has (no fat-tree run, no timeline) says so instead of
// being drawn. mfabric::Error (field "report.html") when gnuplot is not installed or fails:
// the page is whole or not made.
std::string compare_html(const study::CompareResult& r);

}  // namespace mfabric::report
