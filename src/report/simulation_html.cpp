#include "report/simulation_html.h"

#include <fmt/format.h>

#include "report/format.h"
#include "report/html_page.h"
#include "report/utilisation_figure.h"

namespace mfabric::report {
namespace {

constexpr const char* kField = "report.html";

// A rate in bytes per second as the table shows it: "12.8 TB/s".
std::string bytes_per_second(double bps) {
  const char* units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
  std::size_t u = 0;
  while (bps >= 1000 && u + 1 < std::size(units)) {
    bps /= 1000;
    ++u;
  }
  return fmt::format("{:.3g} {}", bps, units[u]);
}

std::string classes_table(const UtilisationSeries& s) {
  std::string out =
      "<div class=\"table-wrap\">\n<table>\n<thead><tr><th>link class</th><th>id "
      "(utilisation.csv)</th><th>links</th><th>capacity (both directions)</th><th>bytes "
      "carried</th><th>mean utilisation</th><th>busiest bin</th></tr></thead>\n<tbody>\n";
  for (std::size_t k = 0; k < s.classes().classes.size(); ++k) {
    const LinkClass& c = s.classes().classes[k];
    double bytes = 0;
    for (std::int64_t b = 0; b < s.bins(); ++b)
      bytes += s.bytes(k, b);
    out += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td "
        "class=\"num\">{:.1f}%</td></tr>\n",
        html_text(c.label), html_text(c.id), with_commas(c.links),
        bytes_per_second(c.capacity_bytes_per_s), whole_number(bytes), 100 * s.mean_utilisation(k),
        100 * s.peak_utilisation(k));
  }
  out += "</tbody>\n</table>\n</div>\n";
  return out;
}

}  // namespace

std::string simulation_html(const SimulationReport& r, const UtilisationSeries& series,
                            const std::vector<std::string>& files) {
  const std::string figure = utilisation_figure_html(series, kField);
  std::vector<std::string> names;
  for (const std::string& f : files)
    names.push_back(fmt::format("<code>{}</code>", html_text(f)));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>mfabric simulate: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n<main>\n"
      "<h1>mfabric simulate</h1>\n"
      "<p class=\"summary\">{} &middot; fabric {} &middot; {} GPUs &middot; {} backend &middot; "
      "seed {} &middot; iteration time {} &middot; run {} simulated</p>\n",
      html_text(r.experiment.source), report_style(), html_text(r.experiment.source),
      html_text(r.topology.spec()), r.graph.job_gpus(), html_text(r.experiment.backend),
      r.experiment.seed, html_text(to_string(r.result.mean_iteration_time())),
      html_text(to_string(r.result.makespan)));
  out += provenance_html();
  out += figure;
  out += "<section id=\"classes\">\n<h2>Link classes</h2>\n";
  out += classes_table(series);
  out += "</section>\n<section id=\"files\">\n<h2>Files</h2>\n<p>Next to this page: " +
         join_strings(names, ", ") +
         " (docs/formats.md). trace.json, flows.csv and utilisation_links.csv are written when "
         "asked for (simulate --trace, --flows, --links-over-time).</p>\n</section>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace mfabric::report
