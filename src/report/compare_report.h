// The outputs of `mfabric compare` (docs/cli.md, "mfabric compare"): a text table with the
// headline ratios, results.json, results.csv and report.html (compare_html.h).
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

#include "study/compare.h"

namespace mfabric::report {

inline constexpr const char* kCompareSchema = "mfabric.compare/1";

// {"schema_version": "mfabric.compare/1", "seed", "backend", "completion_batching",
//  "runs": [{"model", "link_gbps", "fabric",
//  "fabric_spec", "gpus", "iteration_time_s", "relative_iteration_time", "tokens_per_s",
//  "cost_usd": {"built", "paper"}, "cost_paper_usd_by_component": {"nics", "transceivers",
//  "switch_ports", "ocs_ports", "patch_panel_ports", "fibres"}, "perf_per_dollar_vs_fat_tree",
//  "reconfiguration": {...} (mFabric), "error" (a failed run), "wall_time_s" (with timing)}],
//  "timeline": {"run", "spans": [{"start_s", "end_s", "kind"}]}}. Relative figures are null
//  without a fat-tree run to relate to. Without `timing`, wall times are left out, so that the
//  same comparison gives a byte-identical file.
nlohmann::json compare_json(const study::CompareResult& r, bool timing = true);
// One row per run: model,link_gbps,fabric,gpus,iteration_time_s,relative_iteration_time,
// tokens_per_s,cost_built_usd,cost_paper_usd,perf_per_dollar_vs_fat_tree,reconfigurations,
// reconfiguration_held_s,error (RFC 4180).
void write_compare_csv(const study::CompareResult& r, std::ostream& out);
// The table, then the headline ratios per link speed (mFabric against each other fabric).
std::string compare_text(const study::CompareResult& r);

// The files of `compare --out DIR`, written as a set (core/output_files.h); report.html is
// compare_html.h's page.
// points.jsonl is the comparison's journal (study/sweep_journal.h): appended to as the runs
// finish, and written whole with the others.
inline constexpr const char* kCompareOutputFiles[] = {"results.json", "results.csv", "report.html",
                                                      "points.jsonl"};
// Before the runs: mfabric::Error when DIR cannot take the set (check_output_set) or gnuplot,
// which draws report.html's plots, is not installed.
void check_compare_outputs(const std::string& dir);
// The page is made first: when it cannot be (gnuplot missing or failing), nothing is written.
void write_compare_outputs(const study::CompareResult& r, const std::string& dir);

}  // namespace mfabric::report
