// The figures of compare's report.html put together (compare_figures.h): each drawn by gnuplot
// into the page's SVG, or a note saying what it would need. The figures themselves are in
// compare_ratio_figures.cpp, compare_cost_figures.cpp and compare_timeline_figure.cpp, with what
// they share in compare_figure_kit.h.
#include "report/compare_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report/compare_figure_kit.h"
#include "report/gnuplot.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

using study::CompareResult;
using study::CompareRun;

constexpr const char* kFiguresField = "report.html";

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
