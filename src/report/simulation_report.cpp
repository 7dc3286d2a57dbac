// The files of `mfabric simulate --out DIR` as one set (simulation_report.h): which ones a run
// writes, each produced while it is written. The summary's JSON and text, the CSVs and the trace
// are in simulation_json.cpp, simulation_text.cpp, simulation_csv.cpp and simulation_trace.cpp.
#include "report/simulation_report.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <vector>

#include "core/json_text.h"
#include "core/output_files.h"
#include "report/simulation_html.h"
#include "report/utilisation.h"

namespace mfabric::report {

using workload::TaskKind;

void check_simulation_outputs(const std::string& dir) {
  check_output_set(dir, std::vector<std::string>(std::begin(kSimulationOutputFiles),
                                                 std::end(kSimulationOutputFiles)));
}

std::vector<std::string> write_simulation_outputs(const SimulationReport& r, const std::string& dir,
                                                  const SimulationOutputs& outputs) {
  const bool has_collectives = std::any_of(
      r.result.spans.begin(), r.result.spans.end(),
      [&](const sim::TaskSpan& span) { return r.graph.task(span.task).kind != TaskKind::Compute; });
  std::optional<UtilisationSeries> series;
  if (r.result.timeline) series.emplace(r.topology, r.result);
  const bool utilisation = series && series->bins() > 0;
  // Each file is produced while it is written (the trace is streamed), the page before: an error
  // in any of them leaves `dir` as it was.
  const std::map<std::string, std::pair<bool, ContentWriter>> candidates = {
      {"results.json",
       {true, [&](std::ostream& out) { out << json_text(results_json(r, false)) << "\n"; }}},
      {"links.csv", {true, [&](std::ostream& out) { write_links_csv(r, out); }}},
      {"collectives.csv",
       {has_collectives, [&](std::ostream& out) { write_collectives_csv(r, out); }}},
      {"utilisation.csv",
       {utilisation, [&](std::ostream& out) { write_utilisation_csv(*series, out); }}},
      {"report.html", {utilisation && outputs.report, nullptr}},
      {"trace.json",
       {outputs.trace, [&](std::ostream& out) { write_trace_json(r, out, outputs.trace_filter); }}},
      {"utilisation_links.csv",
       {outputs.link_utilisation && r.result.timeline,
        [&](std::ostream& out) { write_link_utilisation_csv(r.topology, r.result, out); }}},
      {"flows.csv", {outputs.flows, [&](std::ostream& out) { write_flows_csv(r, out); }}},
  };
  std::vector<std::string> written;
  for (const char* name : kSimulationOutputFiles) {
    if (candidates.at(name).first) written.push_back(name);
  }
  std::string html;
  if (candidates.at("report.html").first) html = simulation_html(r, *series, written);
  std::vector<OutputFile> files;
  for (const std::string& name : written) {
    if (name == "report.html") {
      files.push_back({name, [&](std::ostream& out) { out << html; }});
    } else {
      files.push_back({name, candidates.at(name).second});
    }
  }
  write_output_set(dir, files,
                   std::vector<std::string>(std::begin(kSimulationOutputFiles),
                                            std::end(kSimulationOutputFiles)));
  return written;
}

}  // namespace mfabric::report
