// The plots of a sweep's report.html (docs/sweep.md, "Outputs"): one metric against the x
// field, a line per series (a combination of the other fields) and the reference runs, on
// axes whose ticks are written in the quantity's unit.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/gnuplot.h"
#include "report/sweep_report.h"
#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::report {

// What a figure plots, per point (docs/sweep.md).
enum class SweepMetric { IterationTime, TokensPerSecond, TokensPerSecondPerMusd };

// perf/$: tokens/s per million dollars of network cost counted by `convention`; nullopt without
// tokens or a cost.
std::optional<double> tokens_per_musd(const study::CompareRun& r,
                                      fabric::CostConvention convention);

// One line of a figure.
struct SweepLine {
  std::string title;       // its legend entry
  bool reference = false;  // a reference run: drawn dashed
  // A reference point that does not set the x field: its value over the whole axis (two points,
  // at the axis's ends), drawn without marks.
  bool across_axis = false;
  std::vector<std::pair<double, double>> points;  // (x, y), by x
};

// The lines of `metric`'s figure: first the series, a line per combination of the point's other
// fields (fields that move with x, one value per value of x, do not split a line), then the
// reference runs: the points that do not set the x field, and those of a heatmap's reference
// that do (a line over x). A series is named by the values that tell it from the others
// ("mixtral-8x22b, 400G"; a plain number or a boolean with its field's last name,
// "expert_gemm=0.5"), a reference by its own fields ("fat-tree (reference), 400G"); what is
// the same for every line is left out (a single series is named by its fabric). Failed
// points, points without the metric and, for the series, points without a place on the axis
// are left out.
std::vector<SweepLine> sweep_lines(const study::SweepSpec& spec, const study::SweepResult& r,
                                   const SweepAxis& axis, SweepMetric metric);

// The y axis of a figure, from the values it plots.
struct ValueScale {
  bool logarithmic = false;
  double low = 0, high = 0;
  std::vector<GnuplotTic> tics;  // from low to high, both included
};
// Logarithmic when the values, all positive, span more than a decade (max / min > 10): from the
// power of ten at or below the least to the one at or above the greatest, a tic at each power
// (at every k-th when there are more than 8 decades). Else linear from 0 to a multiple of a
// round step (1, 2, 2.5 or 5 times a power of ten) at or above the greatest, 3 to 5 steps. The
// tics are labelled in `unit` (tic_label). nullopt when there is no finite value, a value is
// negative, or the numbers are beyond what a round step can be made of (a figure then lets
// gnuplot choose, from 0).
std::optional<ValueScale> value_scale(const std::vector<double>& values, const std::string& unit);

// `value` written in an axis's unit: "s" a time ("1us", "25ms", "1.5s"), "Gbit/s" a link rate
// ("100G", "1.6T"), "B" a size ("2MiB"), "count" with an SI prefix ("500k", "1.5M"), "" a plain
// number as written in C ("0.25", "4096"). A time below a picosecond or beyond the simulator's
// range is written in seconds ("1e-15s").
std::string tic_label(double value, const std::string& unit);

// The gnuplot script of `metric`'s figure (an SVG canvas; report/gnuplot.h runs it), or "" when
// it has no line.
std::string sweep_figure_script(const study::SweepSpec& spec, const study::SweepResult& r,
                                const SweepAxis& axis, SweepMetric metric);

// The figure for report.html: its caption and the inlined SVG, or a note that there is nothing
// to draw. mfabric::Error (field "report.html") when gnuplot fails.
std::string sweep_figure_html(const study::SweepSpec& spec, const study::SweepResult& r,
                              const SweepAxis& axis, SweepMetric metric);

}  // namespace mfabric::report
