// The outputs of `mfabric compare` (docs/cli.md, "mfabric compare"): a text table with the
// headline ratios, results.json, results.csv and report.html (compare_html.h).
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "study/compare.h"

namespace mfabric::report {

inline constexpr const char* kCompareSchema = "mfabric.compare/1";

// {"schema_version": "mfabric.compare/1", "seed", "calibration", "assumptions",
//  "cost_convention" ("built" or "paper": the cost that perf/$ counts), "paper_checks",
//  "backend", "completion_batching", "runs": [{"model", "link_gbps", "fabric", "fabric_spec",
//  "gpus", "iterations", "iteration_time_s", "relative_iteration_time", "compute_s",
//  "exposed_communication_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu",
//  "mfu" (study::CompareRun), "cost_usd": {"built", "paper"},
//  "cost_paper_usd_by_component" and "cost_built_usd_by_component": {"nics", "transceivers",
//  "switch_ports", "ocs_ports", "patch_panel_ports", "fibres"}, "perf_per_dollar_vs_fat_tree",
//  "reconfiguration": {..., "holds", "all_to_alls", "regions", "critical_holds",
//  "critical_held_s"} (mFabric), "shortcuts" (study::shortcuts_json; only a run that took or
//  was refused one), "framework_warnings" (only a job with settings Megatron-Core would refuse:
//  workload::megatron_refusals), "error" (a failed run), "wall_time_s" (with timing)}],
//  "timeline": {"run", "spans": [{"start_s", "end_s", "kind"}]}}. Relative figures are null
//  without a fat-tree run to relate to. Without `timing`, wall times are left out, so that the
//  same comparison gives a byte-identical file.
nlohmann::json compare_json(const study::CompareResult& r, bool timing = true);
// One row per run: model,link_gbps,fabric,gpus,iteration_time_s,relative_iteration_time,
// tokens_per_s,tokens_per_s_per_gpu,model_tflops_per_gpu,mfu,cost_built_usd,cost_paper_usd,
// perf_per_dollar_vs_fat_tree,cost_convention,compute_s,exposed_communication_s,reconfigurations,
// reconfiguration_held_s,held_all_to_alls,critical_held_s,error (RFC 4180).
void write_compare_csv(const study::CompareResult& r, std::ostream& out);
// The set line, the table, the headline sentences, the ratios per link speed (mFabric against
// each other fabric), where mFabric's time goes, and the failed runs.
std::string compare_text(const study::CompareResult& r);

// What the comparison is, in one line: its runs (and how many failed), models, link speeds and
// fabrics, seed, calibration, assumptions, backend and cost convention. Plain text holding user
// names as they are: escape it for where it goes (printable, html_text).
std::string compare_set_text(const study::CompareResult& r);

// The verdict, a sentence per model, link speed and mFabric run (every mFabric variant gets its
// own, named by its label when there are several): its speed, network cost and perf/$ against
// the fat-tree run of the same model and link (named with its all-to-all, baseline_text), with both
// runs' iteration times and costs (in the comparison's cost convention, named). Without a fat-tree
// to compare with, the sentence gives mFabric's own figures and says why; without any mFabric run,
// one sentence says so; a last sentence names the failed runs. Plain text, as compare_set_text.
std::vector<std::string> compare_headline(const study::CompareResult& r);

// Where one mFabric run's time goes, in sentences: per iteration and GPU its compute, its wait
// for communication and the rest (pipeline bubbles); its reconfigurations; the all-to-alls held
// for circuits, whose summed wait is over all-to-alls that wait side by side in the regions (not
// iteration time), and the holds on the critical path, which are. Empty for a run without a
// reconfiguration summary or finite figures. Plain text, as compare_set_text.
std::vector<std::string> time_breakdown_text(const study::CompareRun& run);

// What a verdict's range is over: "3 seeds and the routing skew band", "3 seeds", "the routing
// skew band" (one seed).
std::string spread_text(const study::CompareResult& r);
// How the verdict names a baseline run: "the fat-tree with the hierarchical all-to-all, the
// fastest there of direct, pxn and hierarchical", or "the fat-tree" for a run that does not name
// its all-to-all (a journal of an earlier version).
std::string baseline_text(const study::CompareRun& baseline);
// The run's speed against the fat-tree of its model and link: the fat-tree's iteration time over
// its own (above 1: faster), the way every ratio of speed reads; none without one.
std::optional<double> speed_vs_fat_tree(const study::CompareRun& run);
// The table's all-to-all cell: the algorithm, marked "*" when it was the fastest of several
// tried (the strongest baseline); "-" when unknown.
std::string all_to_all_cell(const study::CompareRun& run);

// A faster link that made a run slower (same model and fabric; the "explain surprises"):
// the two links, by how much (a fraction), and the causes its figures show, each a phrase
// ("more reconfigurations (1,693 vs 1,650)", "another all-to-all (direct vs hierarchical)").
struct Surprise {
  std::string model;
  std::string fabric;
  double link_gbps = 0;       // the faster link
  double than_link_gbps = 0;  // the next slower link, whose run was faster
  double slower_by = 0;       // iteration time / the slower link's - 1
  std::vector<std::string> causes;
};
// What run `a` shows of why it is slower than `b`, each a phrase: more reconfigurations, more
// holds for circuits on the critical path, another plan, another all-to-all, more time waiting
// for communication; empty when none of these differs that way.
std::vector<std::string> slowdown_causes(const study::CompareRun& a, const study::CompareRun& b);
// Below this, a difference is not a surprise (a fraction of the iteration).
inline constexpr double kSurpriseThreshold = 0.001;
// Every run slower than the run of its model and fabric at the next slower link speed, by more
// than kSurpriseThreshold, in model, fabric and link order.
std::vector<Surprise> surprises(const study::CompareResult& r);
// "mfabric on mixtral-8x22b: at 400G the iteration is 2.1% slower than at 200G, though the links
// are faster; what the runs show: ...". Plain text, as compare_set_text.
std::string surprise_text(const Surprise& x);

// Seconds for a sentence: "15.32 s", "0.0123 s".
std::string seconds_text(double s);

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
