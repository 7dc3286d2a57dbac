#include "report/compare_html.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/provenance.h"
#include "report/compare_figures.h"
#include "report/compare_report.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

using study::CompareResult;
using study::CompareRun;

constexpr const char* kField = "report.html";

// The page's own additions to the reports' shared style sheet (html_page.h).
constexpr const char* kCompareStyle = R"(section#verdict { background: #fff; border: 1px solid #ddd;
  border-left: 5px solid #59a14f; border-radius: 6px; padding: 10px 16px; margin: 12px 0; }
p.verdict { font-size: 17px; margin: 6px 0; }
p.set { color: #555; margin: 10px 0 4px; font-size: 14px; }
ul.breakdown { margin: 8px 0; padding-left: 22px; }
)";

std::string number_cell(double x, const char* format, const std::string& title = "") {
  const std::string attribute = title.empty() ? "" : fmt::format(" title=\"{}\"", html_text(title));
  if (!std::isfinite(x)) return fmt::format("<td class=\"num\"{}>n/a</td>", attribute);
  return fmt::format("<td class=\"num\"{}>{}</td>", attribute,
                     fmt::format(fmt::runtime(format), x));
}
std::string optional_cell(const std::optional<double>& x, const char* format,
                          const std::string& title = "") {
  if (!x) return "<td class=\"num\" title=\"no fat-tree run to relate to\">&#8211;</td>";
  return number_cell(*x, format, title);
}
std::string dollars_cell(double usd) {
  if (!std::isfinite(usd)) return "<td class=\"num\">n/a</td>";
  return fmt::format("<td class=\"num\">{}</td>", dollars(usd));
}
std::string empty_cells(int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += "<td></td>";
  return out;
}

std::string table_html(const CompareResult& r) {
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  const fabric::CostConvention other = convention == fabric::CostConvention::Built
                                           ? fabric::CostConvention::Paper
                                           : fabric::CostConvention::Built;
  const char* name = study::cost_convention_label(convention);
  std::string out = fmt::format(
      "<div class=\"table-wrap\">\n<table>\n<thead><tr><th>model</th><th>link</th>"
      "<th>fabric</th><th>all-to-all</th><th>GPUs</th><th>iteration time (s)</th>"
      "<th>speed vs fat-tree</th>"
      "<th>tokens/s</th><th>network cost, {} (USD)</th><th>perf/$ vs fat-tree ({})</th>"
      "<th>network cost, {} (USD)</th><th>reconfigurations</th>"
      "<th>reconfiguring (s, summed over regions)</th>"
      "<th>all-to-alls held (s, summed over the holds)</th></tr></thead>\n<tbody>\n",
      name, name, study::cost_convention_label(other));
  for (const CompareRun& run : r.runs) {
    const bool failed = !run.error.empty();
    // The all-to-all's cell: with several tried (the strongest baseline), each one's time as
    // its tooltip.
    std::string tried;
    for (const study::AllToAllTrial& t : run.all_to_all_trials) {
      tried +=
          (tried.empty() ? "" : "; ") +
          (t.error.empty() ? fmt::format("{} {}", t.algorithm, seconds_text(t.iteration_time_s))
                           : fmt::format("{} failed", t.algorithm));
    }
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"num\">{}</td><td title=\"{}\">{}</td><td "
        "title=\"{}\">{}</td>",
        failed ? " class=\"failed\"" : "", html_text(run.model),
        html_text(link_label(run.link_gbps)), html_text(run.fabric_spec), html_text(run.fabric),
        html_text(tried), html_text(all_to_all_cell(run)));
    if (failed) {
      out += fmt::format("<td colspan=\"10\" class=\"error\">failed: {}</td></tr>\n",
                         html_text(run.error));
      continue;
    }
    // The absolute figures behind each ratio, as the cell's tooltip.
    const CompareRun* fat_tree = study::fat_tree_of(r.runs, run);
    std::string time_title, per_dollar_title;
    if (fat_tree) {
      time_title =
          fmt::format("{} (the fat-tree's) / {}: {}", seconds_text(fat_tree->iteration_time_s),
                      seconds_text(run.iteration_time_s),
                      run.iteration_time_s > 0
                          ? faster_or_slower(fat_tree->iteration_time_s / run.iteration_time_s)
                          : std::string("n/a"));
      const double cost = run.cost(convention).total();
      const double fat_tree_cost = fat_tree->cost(convention).total();
      if (std::isfinite(cost) && std::isfinite(fat_tree_cost))
        per_dollar_title =
            fmt::format("(1 / {} / {}) / (1 / {} / {}), the fat-tree's below the line",
                        seconds_text(run.iteration_time_s), dollars(cost),
                        seconds_text(fat_tree->iteration_time_s), dollars(fat_tree_cost));
    }
    out += fmt::format("<td class=\"num\">{}</td>", run.gpus);
    out += number_cell(run.iteration_time_s, "{:.4g}");
    out += optional_cell(speed_vs_fat_tree(run), "{:.3f}x", time_title);
    out += std::isfinite(run.tokens_per_s)
               ? fmt::format("<td class=\"num\">{}</td>", whole_number(run.tokens_per_s))
               : std::string("<td class=\"num\">n/a</td>");
    out += dollars_cell(run.cost(convention).total());
    out += optional_cell(run.perf_per_dollar_vs_fat_tree, "{:.3f}x", per_dollar_title);
    out += dollars_cell(run.cost(other).total());
    if (run.reconfiguration) {
      out += fmt::format("<td class=\"num\">{}</td>", run.reconfiguration->count);
      out += number_cell(run.reconfiguration->time_s, "{:.4g}");
      out += number_cell(run.reconfiguration->held_time_s, "{:.4g}");
    } else {
      out += empty_cells(3);
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n</div>\n";
  return out;
}

// Where the mFabric runs' time goes: a row per run, then the sentences of the first one as the
// worked reading of the columns.
std::string breakdown_html(const CompareResult& r) {
  std::string rows;
  std::vector<std::string> example;
  for (const CompareRun& run : r.runs) {
    if (!run.reconfiguration || !run.error.empty()) continue;
    const study::ReconfigurationSummary& c = *run.reconfiguration;
    const double t = run.iteration_time_s;
    const bool split = std::isfinite(run.compute_s) && run.compute_s > 0 &&
                       std::isfinite(run.exposed_communication_s) && std::isfinite(t);
    const CompareRun* fat_tree = study::fat_tree_of(r.runs, run);
    const double iterations = std::max(1, run.iterations);
    const double critical = c.critical_held_s / iterations;
    rows += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td>", html_text(run.model),
                        html_text(link_label(run.link_gbps)), html_text(run.fabric));
    rows += number_cell(t, "{:.4g}");
    if (split) {
      rows += number_cell(run.compute_s, "{:.4g}");
      rows += number_cell(run.exposed_communication_s, "{:.4g}");
      rows += number_cell(std::max(0.0, t - run.compute_s - run.exposed_communication_s), "{:.4g}");
    } else {
      rows += empty_cells(3);
    }
    rows += fat_tree && fat_tree->compute_s > 0
                ? number_cell(fat_tree->exposed_communication_s, "{:.4g}")
                : empty_cells(1);
    rows += fmt::format("<td class=\"num\">{}{}</td>", with_commas(c.holds),
                        c.all_to_alls > 0 ? " of " + with_commas(c.all_to_alls) : "");
    rows += number_cell(c.held_time_s, "{:.4g}");
    rows += c.holds > 0 ? number_cell(c.held_time_s / static_cast<double>(c.holds) * 1e3, "{:.3g}")
                        : empty_cells(1);
    rows += fmt::format("<td class=\"num\">{}, {}{}</td>", with_commas(c.critical_holds),
                        html_text(seconds_text(critical)),
                        std::isfinite(critical / t) && t > 0
                            ? fmt::format(" ({:.1f}%)", 100 * critical / t)
                            : std::string());
    rows += "</tr>\n";
    if (example.empty()) example = time_breakdown_text(run);
  }
  std::string out =
      "<section id=\"time-breakdown\">\n<h2>Where mFabric&#39;s time goes</h2>\n"
      "<p>Per iteration and averaged over the job&#39;s GPUs: the compute a GPU is given, the "
      "time its compute stream waits for communication (holds for circuits included), and the "
      "rest, idle otherwise (pipeline bubbles: waiting for other GPUs&#39; work). The "
      "fat-tree&#39;s wait of the same model and "
      "link is beside it. Counts and sums over the holds cover the whole run; the holds wait side "
      "by side (every region, and the EP groups within a region, at the same time), so their "
      "summed wait is not part of the iteration: the holds on the critical path are, and their "
      "wait per iteration is set against the iteration time.</p>\n";
  if (rows.empty()) {
    return out + "<p class=\"missing\">Not shown: no mFabric run finished.</p>\n</section>\n";
  }
  out +=
      "<div class=\"table-wrap\">\n<table>\n<thead><tr><th>model</th><th>link</th>"
      "<th>fabric</th><th>iteration (s)</th><th>compute (s)</th>"
      "<th>waiting for communication (s)</th><th>otherwise idle (s)</th>"
      "<th>fat-tree: waiting for communication (s)</th><th>all-to-alls held for circuits</th>"
      "<th>held, summed over the holds (s)</th><th>mean hold (ms)</th>"
      "<th>on the critical path: holds, wait per iteration (share of it)</th>"
      "</tr></thead>\n<tbody>\n" +
      rows + "</tbody>\n</table>\n</div>\n";
  if (!example.empty()) {
    out += "<p>For the first of them, in words:</p>\n<ul class=\"breakdown\">\n";
    for (const std::string& sentence : example)
      out += "<li>" + html_text(sentence) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
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
  const bool built = study::counted_convention(r.cost_convention) == fabric::CostConvention::Built;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>mfabric compare: {} runs, seed {}</title>\n<style>\n{}{}</style>\n</head>\n<body>\n"
      "<main>\n<h1>mfabric compare</h1>\n<section id=\"verdict\">\n",
      r.runs.size(), r.seed, report_style(), kCompareStyle);
  for (const std::string& sentence : compare_headline(r))
    out += "<p class=\"verdict\">" + html_text(sentence) + "</p>\n";
  for (const Surprise& x : surprises(r))
    out += "<p class=\"set\">Surprise: " + html_text(surprise_text(x)) + "</p>\n";
  out += "<p class=\"set\">This set: " + html_text(compare_set_text(r)) + "</p>\n";
  out += provenance_html() + "</section>\n";
  out += fmt::format(
      "<section id=\"how-to-read\">\n<h2>How to read this report</h2>\n<ul class=\"how\">\n"
      "<li>Every training job (model) runs on every fabric at every link speed; a run is one "
      "simulated training iteration of the whole cluster.</li>\n"
      "<li>Figures marked <em>relative to the fat-tree</em> divide by the non-blocking (1:1) "
      "fat-tree run of the same model and link speed: iteration time below 1 is faster, "
      "perf/$ above 1 is better.</li>\n"
      "<li>perf/$ is (1 / iteration time) / network cost. Network cost is in US dollars at the "
      "paper&#39;s Table 4 prices, counted by <strong>{}</strong> ({}) in every cost and perf/$ "
      "figure of this page; the results table also gives the cost counted by {}.</li>\n"
      "<li>Hover over a point of the perf/$ and Pareto plots, or over a ratio in the table, for "
      "the absolute figures behind it.</li>\n"
      "<li>Runs that failed are listed in the table with their error and left out of the "
      "plots; a plot whose data is missing says so instead of being drawn.</li>\n"
      "<li>The same numbers are in results.json and results.csv next to this page.</li>\n"
      "</ul>\n</section>\n<h2>Plots</h2>\n",
      study::cost_convention_label(r.cost_convention),
      built ? "the bill of materials of the topology as built"
            : "each fabric&#39;s bill of materials from the paper&#39;s formulas",
      study::cost_convention_label(built ? fabric::CostConvention::Paper
                                         : fabric::CostConvention::Built));
  out += compare_figures_html(r, d);
  out += breakdown_html(r);
  out += "<section id=\"results\">\n<h2>Results</h2>\n";
  out += table_html(r);
  out += "</section>\n</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace mfabric::report
