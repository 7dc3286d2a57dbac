#include "report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

#include "core/json_text.h"
#include "core/output_files.h"
#include "core/output_text.h"
#include "report/compare_html.h"
#include "report/compare_paper.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/table.h"
#include "study/run_json.h"

namespace mfabric::report {
namespace {

nlohmann::json optional_number(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

std::string link_text(double gbps) {
  return fmt::format("{}G", whole_number(gbps));
}

// min-max of a list, "1.23x" or "1.10-1.45x".
std::string span_text(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.front() == v.back() || fmt::format("{:.2f}", v.front()) == fmt::format("{:.2f}", v.back()))
    return ratio(v.front());
  return fmt::format("{:.2f}-{}", v.front(), ratio(v.back()));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

nlohmann::json compare_json(const study::CompareResult& r, bool timing) {
  nlohmann::json runs = nlohmann::json::array();
  for (const study::CompareRun& run : r.runs) {
    nlohmann::json j = {
        {"model", run.model},
        {"link_gbps", run.link_gbps},
        {"fabric", run.fabric},
        {"fabric_spec", run.fabric_spec},
        {"gpus", run.gpus},
        {"iteration_time_s", run.iteration_time_s},
        {"relative_iteration_time", optional_number(run.relative_iteration_time)},
        {"tokens_per_s", run.tokens_per_s},
        {"cost_usd", {{"built", run.cost_built.total()}, {"paper", run.cost_paper.total()}}},
        {"cost_paper_usd_by_component", study::cost_components_json(run.cost_paper)},
        {"perf_per_dollar_vs_fat_tree", optional_number(run.perf_per_dollar_vs_fat_tree)},
    };
    if (run.reconfiguration) {
      j["reconfiguration"] = study::reconfiguration_json(*run.reconfiguration);
      j["reconfiguration"]["critical_holds"] = run.reconfiguration->critical_holds;
      j["reconfiguration"]["critical_held_s"] = run.reconfiguration->critical_held_s;
    }
    if (!run.error.empty()) j["error"] = run.error;
    if (timing) j["wall_time_s"] = run.wall_time_s;
    runs.push_back(std::move(j));
  }
  nlohmann::json spans = nlohmann::json::array();
  for (const study::TimelineSpan& s : r.timeline) {
    spans.push_back({{"start_s", s.start_s},
                     {"end_s", s.end_s},
                     {"kind", s.reconfiguration ? "reconfiguration" : "all-to-all"}});
  }
  return {{"schema_version", kCompareSchema},
          {"seed", r.seed},
          {"calibration", r.calibration},
          {"assumptions", study::to_string(r.assumptions)},
          {"paper_checks", r.assumptions == study::Assumptions::Paper
                               ? paper_checks_json(paper_checks(r))
                               : nlohmann::json::array()},
          {"backend", r.backend},
          {"completion_batching", r.completion_batching},
          {"runs", std::move(runs)},
          {"timeline", {{"run", r.timeline_run}, {"spans", std::move(spans)}}}};
}

void write_compare_csv(const study::CompareResult& r, std::ostream& out) {
  out << "model,link_gbps,fabric,gpus,iteration_time_s,relative_iteration_time,tokens_per_s,"
         "cost_built_usd,cost_paper_usd,perf_per_dollar_vs_fat_tree,reconfigurations,"
         "reconfiguration_held_s,error\n";
  const auto number = [](double x) { return fmt::format("{}", x); };
  const auto optional = [&](const std::optional<double>& x) { return x ? number(*x) : ""; };
  for (const study::CompareRun& run : r.runs) {
    out << csv_field(run.model) << ',' << number(run.link_gbps) << ',' << csv_field(run.fabric)
        << ',' << run.gpus << ',' << number(run.iteration_time_s) << ','
        << optional(run.relative_iteration_time) << ',' << number(run.tokens_per_s) << ','
        << number(run.cost_built.total()) << ',' << number(run.cost_paper.total()) << ','
        << optional(run.perf_per_dollar_vs_fat_tree) << ','
        << (run.reconfiguration ? std::to_string(run.reconfiguration->count) : "") << ','
        << (run.reconfiguration ? number(run.reconfiguration->held_time_s) : "") << ','
        << csv_field(run.error) << '\n';
  }
}

std::string compare_text(const study::CompareResult& r) {
  Table t({"model", "link", "fabric", "iteration", "vs fat-tree", "tokens/s", "cost (paper)",
           "perf/$ vs fat-tree", "reconfigurations"},
          {Table::Align::Left, Table::Align::Right, Table::Align::Left, Table::Align::Right,
           Table::Align::Right, Table::Align::Right, Table::Align::Right, Table::Align::Right,
           Table::Align::Right});
  for (const study::CompareRun& run : r.runs) {
    if (!run.error.empty()) {
      t.add_row(
          {run.model, link_text(run.link_gbps), run.fabric, "failed", "-", "-", "-", "-", "-"});
      continue;
    }
    t.add_row({run.model, link_text(run.link_gbps), run.fabric,
               fmt::format("{:.3f}s", run.iteration_time_s),
               run.relative_iteration_time ? ratio(*run.relative_iteration_time) : "-",
               whole_number(run.tokens_per_s), dollars(run.cost_paper.total()),
               run.perf_per_dollar_vs_fat_tree ? ratio(*run.perf_per_dollar_vs_fat_tree) : "-",
               run.reconfiguration ? with_commas(run.reconfiguration->count) : "-"});
  }
  std::string out = t.render();

  // Headline: mFabric against each other fabric, per link speed, over the models.
  std::map<double, std::map<std::string, std::map<std::string, const study::CompareRun*>>> by;
  for (const study::CompareRun& run : r.runs) {
    if (run.error.empty() && run.iteration_time_s > 0)
      by[run.link_gbps][run.fabric][run.model] = &run;
  }
  std::string headline;
  for (const auto& [link, fabrics] : by) {
    const auto m = fabrics.find("mfabric");
    if (m == fabrics.end()) continue;
    std::vector<std::string> parts;
    for (const auto& [fabric, models] : fabrics) {
      if (fabric == "mfabric") continue;
      std::vector<double> speed, per_dollar, cheaper;
      for (const auto& [model, other] : models) {
        const auto mine = m->second.find(model);
        if (mine == m->second.end()) continue;
        const study::CompareRun& a = *mine->second;
        speed.push_back(other->iteration_time_s / a.iteration_time_s);
        const double cost_a = a.cost_paper.total();
        const double cost_o = other->cost_paper.total();
        if (cost_a > 0 && cost_o > 0) {
          per_dollar.push_back((other->iteration_time_s * cost_o) / (a.iteration_time_s * cost_a));
          cheaper.push_back(cost_o / cost_a);
        }
      }
      if (speed.empty()) continue;
      std::string line = fmt::format("  vs {}: speed {} (mean {})", printable(fabric),
                                     span_text(speed), ratio(mean(speed)));
      if (!per_dollar.empty()) {
        line += fmt::format(", perf/$ {}, network cost {} of mfabric's", span_text(per_dollar),
                            ratio(mean(cheaper)));
      }
      parts.push_back(line);
    }
    if (parts.empty()) continue;
    headline += fmt::format("\nmfabric at {} ({} model{}; ratios > 1x favour mfabric):\n",
                            link_text(link), m->second.size(), m->second.size() == 1 ? "" : "s");
    for (const std::string& p : parts)
      headline += p + "\n";
  }
  for (const study::CompareRun& run : r.runs) {
    if (!run.error.empty()) {
      // Names and messages hold user text (file names, --fabrics specs): printable() keeps
      // control characters off the terminal.
      headline +=
          fmt::format("\nfailed: {} {} {}: {}", printable(run.model), link_text(run.link_gbps),
                      printable(run.fabric), printable(run.error));
    }
  }
  if (!headline.empty() && headline.back() != '\n') headline += "\n";
  if (r.assumptions == study::Assumptions::Paper) headline += paper_checks_text(paper_checks(r));
  return out + headline;
}

void check_compare_outputs(const std::string& dir) {
  check_output_set(dir, std::vector<std::string>(std::begin(kCompareOutputFiles),
                                                 std::end(kCompareOutputFiles)));
  require_gnuplot(kCompareOutputFiles[2]);
}

void write_compare_outputs(const study::CompareResult& r, const std::string& dir) {
  const std::string html = compare_html(r);
  write_output_set(
      dir, {
               {kCompareOutputFiles[0],
                [&](std::ostream& out) { out << json_text(compare_json(r, false)) << "\n"; }},
               {kCompareOutputFiles[1], [&](std::ostream& out) { write_compare_csv(r, out); }},
               {kCompareOutputFiles[2], [&](std::ostream& out) { out << html; }},
               {kCompareOutputFiles[3], [&](std::ostream& out) { out << r.journal_records; }},
           });
}

}  // namespace mfabric::report
