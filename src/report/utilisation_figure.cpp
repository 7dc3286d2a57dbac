#include "report/utilisation_figure.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "report/format.h"
#include "report/gnuplot.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

// A class keeps its colour from fabric to fabric (Tableau 10).
const char* colour_of(std::string_view id) {
  if (id == "nvlink") return "#76b7b2";
  if (id == "pcie") return "#bab0ac";
  if (id.starts_with("nic-")) return "#4e79a7";
  if (id.starts_with("leaf-")) return "#f28e2b";
  if (id.ends_with("-core")) return "#59a14f";
  if (id == "ocs") return "#e15759";
  if (id == "patch-panel") return "#b07aa1";
  return "#9c755f";
}

constexpr int kWidth = 1100;
constexpr int kHeight = 440;
constexpr double kKeyBottom = 60;

}  // namespace

GnuplotScript utilisation_script(const UtilisationSeries& s) {
  const bool in_ms = s.end_s() < 1.0;
  // Picoseconds per unit of x: divided from whole picoseconds, 10 ms is 0.01 s exactly as
  // printed.
  const double unit = in_ms ? 1e9 : 1e12;
  const auto x = [&](Time t) { return static_cast<double>(t.ps()) / unit; };
  GnuplotScript script(kWidth, kHeight);
  script.line("set key noautotitle");
  const std::vector<LinkClass>& classes = s.classes().classes;
  std::vector<std::string> key;
  std::vector<std::string> series;
  for (std::size_t k = 0; k < classes.size(); ++k) {
    // Steps: each bin's value from its start to the next; the last bin's held to the run's end.
    std::vector<std::vector<double>> rows;
    for (std::int64_t b = 0; b < s.bins(); ++b)
      rows.push_back({x(s.start(b)), s.utilisation(k, b)});
    if (s.bins() > 0) rows.push_back({x(s.end()), s.utilisation(k, s.bins() - 1)});
    const std::string name = fmt::format("class{}", k);
    script.block(name, rows);
    const std::string style = fmt::format("lc rgb '{}' lw 2", colour_of(classes[k].id));
    key.push_back(
        fmt::format("keyentry with lines {} title {}", style, gnuplot_string(classes[k].label)));
    series.push_back(fmt::format("${} using 1:2 with steps {}", name, style));
  }
  script.line("set multiplot");
  script.key_strip(5, kKeyBottom - 5, key);
  script.area(80, kKeyBottom + 10, kWidth - 25, kHeight - 55);
  script.line("set yrange [0:1]");
  script.line("set ytics 0.2");
  script.line("set format y '%g'");
  script.line("set format x '%g'");
  script.line(fmt::format("set xrange [0:{}]", gnuplot_number(x(s.end()))));
  script.line("set xlabel " + gnuplot_string(in_ms ? "time (ms)" : "time (s)"));
  script.line("set ylabel " + gnuplot_string("utilisation"));
  script.line("set grid xtics ytics back lc rgb '#dddddd' lw 1 dt 1");
  script.line("plot " + join_strings(series, ", \\\n  "));
  script.line("unset multiplot");
  return script;
}

std::string utilisation_figure_html(const UtilisationSeries& s, const std::string& field) {
  std::string out = fmt::format(
      "<figure id=\"{}\">\n<figcaption><strong>Link utilisation over time.</strong> A line per "
      "link class: the bytes its links carried in each time bin of {} over what they could "
      "carry (both directions, at their built rates). Circuits are counted on the fibres of "
      "their NICs to the optical switch. Per class and bin in utilisation.csv.</figcaption>\n",
      kUtilisationFigureId, html_text(to_string(s.bin())));
  const std::string svg = inline_svg(run_gnuplot(utilisation_script(s).text(), field),
                                     std::string(kUtilisationFigureId) + "-");
  out += svg;
  if (!svg.empty() && svg.back() != '\n') out += '\n';
  out += "</figure>\n";
  return out;
}

}  // namespace mfabric::report
