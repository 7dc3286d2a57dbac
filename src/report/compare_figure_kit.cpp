#include "report/compare_figure_kit.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "report/gnuplot.h"
#include "report/html_page.h"

namespace mfabric::report {

int fabric_linetype(std::size_t fabric) {
  return static_cast<int>(fabric % kFabricColours.size()) + 1;
}

bool in_plots(const study::CompareRun& run) {
  return run.error.empty() && std::isfinite(run.link_gbps) && run.link_gbps > 0;
}

std::optional<double> plottable(std::optional<double> x) {
  if (x && std::isfinite(*x) && *x > 0) return x;
  return std::nullopt;
}
std::optional<double> plottable(double x) {
  return plottable(std::optional<double>(x));
}

std::string xtics_command(const std::vector<std::string>& labels, const std::string& options) {
  return fmt::format("set xtics {} ({})", options, gnuplot_tic_list(labels));
}

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

std::string Tooltips::in_svg(const std::string& svg) const {
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

}  // namespace mfabric::report
