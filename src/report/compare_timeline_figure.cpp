// Figure (e) of compare's report.html (compare_figure_kit.h): one mFabric run's region, its
// reconfigurations against its all-to-alls.
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

// Bars of the whole run above which a second panel zooms on the first ones.
constexpr std::size_t kZoomBars = 40;

std::string count_text(std::size_t n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace

// (e) The timeline of one mFabric run: its region's reconfigurations against its all-to-alls.
// Spans of one kind that overlap in time (the all-to-alls of the region's EP groups run
// together) are drawn as one bar; the whole run, and with more than kZoomBars bars a second
// panel zoomed on the first ones.
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

}  // namespace mfabric::report
