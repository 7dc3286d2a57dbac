#include "report/compare_html.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/compare_figures.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

using study::CompareResult;
using study::CompareRun;

constexpr const char* kField = "report.html";

std::string number_cell(double x, const char* format) {
  if (!std::isfinite(x)) return "<td class=\"num\">n/a</td>";
  return fmt::format("<td class=\"num\">{}</td>", fmt::format(fmt::runtime(format), x));
}
std::string optional_cell(const std::optional<double>& x, const char* format) {
  if (!x) return "<td class=\"num\" title=\"no fat-tree run to relate to\">&#8211;</td>";
  return number_cell(*x, format);
}
std::string dollars_cell(double usd) {
  if (!std::isfinite(usd)) return "<td class=\"num\">n/a</td>";
  return fmt::format("<td class=\"num\">{}</td>", dollars(usd));
}

std::string table_html(const CompareResult& r) {
  std::string out =
      "<div "
      "class=\"table-wrap\">\n<table>\n<thead><tr><th>model</th><th>link</th><th>fabric</"
      "th><th>GPUs</th>"
      "<th>iteration time (s)</th><th>vs fat-tree</th><th>tokens/s</th>"
      "<th>network cost, built (USD)</th><th>network cost, paper (USD)</th>"
      "<th>perf. per dollar vs fat-tree</th><th>reconfigurations</th>"
      "<th>reconfiguring (s)</th><th>all-to-alls held (s)</th></tr></thead>\n<tbody>\n";
  for (const CompareRun& run : r.runs) {
    const bool failed = !run.error.empty();
    out += fmt::format("<tr{}><td>{}</td><td class=\"num\">{}</td><td title=\"{}\">{}</td>",
                       failed ? " class=\"failed\"" : "", html_text(run.model),
                       html_text(link_label(run.link_gbps)), html_text(run.fabric_spec),
                       html_text(run.fabric));
    if (failed) {
      out += fmt::format("<td colspan=\"10\" class=\"error\">failed: {}</td></tr>\n",
                         html_text(run.error));
      continue;
    }
    out += fmt::format("<td class=\"num\">{}</td>", run.gpus);
    out += number_cell(run.iteration_time_s, "{:.4g}");
    out += optional_cell(run.relative_iteration_time, "{:.3f}");
    out += std::isfinite(run.tokens_per_s)
               ? fmt::format("<td class=\"num\">{}</td>", whole_number(run.tokens_per_s))
               : std::string("<td class=\"num\">n/a</td>");
    out += dollars_cell(run.cost_built.total());
    out += dollars_cell(run.cost_paper.total());
    out += optional_cell(run.perf_per_dollar_vs_fat_tree, "{:.3f}");
    if (run.reconfiguration) {
      out += fmt::format("<td class=\"num\">{}</td>", run.reconfiguration->count);
      out += number_cell(run.reconfiguration->time_s, "{:.4g}");
      out += number_cell(run.reconfiguration->held_time_s, "{:.4g}");
    } else {
      out += "<td></td><td></td><td></td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n</div>\n";
  return out;
}

}  // namespace

RatioSpread ratio_spread(const std::vector<double>& ratios) {
  if (ratios.empty()) throw Error("", kField, "internal: no ratios to summarise");
  RatioSpread s{0, ratios.front(), ratios.front()};
  double log_sum = 0;
  for (double x : ratios) {
    log_sum += std::log(x);
    s.lowest = std::min(s.lowest, x);
    s.highest = std::max(s.highest, x);
  }
  s.geometric_mean = std::exp(log_sum / static_cast<double>(ratios.size()));
  return s;
}

std::string compare_html(const CompareResult& r) {
  // Also when there is nothing to plot: without gnuplot there is never a page.
  require_gnuplot(kField);

  const CompareDimensions d(r);
  std::size_t failed = 0;
  for (const CompareRun& run : r.runs)
    failed += run.error.empty() ? 0 : 1;

  std::vector<std::string> model_names, link_names, fabric_names;
  for (const std::string& m : d.models)
    model_names.push_back(html_text(m));
  for (double l : d.links)
    link_names.push_back(html_text(link_label(l)));
  for (const std::string& k : d.fabrics)
    fabric_names.push_back(html_text(k));

  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>mfabric compare: {} runs, seed {}</title>\n<style>\n{}</style>\n</head>\n<body>\n"
      "<main>\n<h1>mfabric compare</h1>\n"
      "<p class=\"summary\">Seed {} &middot; assumptions: {} &middot; calibration: {} &middot; "
      "{} runs ({} failed) &middot; models: {} &middot; links: {} &middot; fabrics: {}</p>\n",
      r.runs.size(), r.seed, report_style(), r.seed, study::to_string(r.assumptions),
      html_text(r.calibration), r.runs.size(), failed,
      join_strings(model_names, ", "), join_strings(link_names, ", "),
      join_strings(fabric_names, ", "));
  out +=
      "<section id=\"how-to-read\">\n<h2>How to read this report</h2>\n<ul class=\"how\">\n"
      "<li>Every training job (model) runs on every fabric at every link speed; a run is one "
      "simulated training iteration of the whole cluster.</li>\n"
      "<li>Figures marked <em>relative to the fat-tree</em> divide by the non-blocking (1:1) "
      "fat-tree run of the same model and link speed: iteration time below 1 is faster, "
      "performance per dollar above 1 is better.</li>\n"
      "<li>Network cost is in US dollars in the paper&#39;s convention (its formulas and Table 4 "
      "prices); the table also gives the cost counted from the built topology.</li>\n"
      "<li>Runs that failed are listed in the table with their error and left out of the "
      "plots; a plot whose data is missing says so instead of being drawn.</li>\n"
      "<li>The same numbers are in results.json and results.csv next to this page.</li>\n"
      "</ul>\n</section>\n<h2>Plots</h2>\n";
  out += compare_figures_html(r, d);
  out += "<section id=\"results\">\n<h2>Results</h2>\n";
  out += table_html(r);
  out += "</section>\n</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace mfabric::report
