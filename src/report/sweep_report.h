// The outputs of `mfabric sweep` (docs/sweep.md): a text table, results.json, results.csv,
// report.html (the swept field on the x axis) and points.jsonl (the resume journal, complete).
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>

#include "report/gnuplot.h"
#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::report {

inline constexpr const char* kSweepSchema = "mfabric.sweep/1";

// {"schema_version": "mfabric.sweep/1", "name", "description", "x", "fields": [...],
//  "points": [study::sweep_run_json, ...]}. Without `timing` wall times are left out, so that
// the same sweep gives a byte-identical file however it was run (threads, MPI ranks, resumed).
nlohmann::json sweep_json(const study::SweepSpec& spec, const study::SweepResult& r,
                          bool timing = true);
// One row per point: index, one column per field, model, link_gbps, fabric, gpus,
// iteration_time_s, tokens_per_s, tokens_per_s_per_musd, tokens_per_s_per_gpu,
// model_tflops_per_gpu, mfu (empty for a point without a model), cost_built_usd, cost_paper_usd,
// reconfigurations, error (RFC 4180).
void write_sweep_csv(const study::SweepSpec& spec, const study::SweepResult& r, std::ostream& out);
std::string sweep_text(const study::SweepSpec& spec, const study::SweepResult& r);

// The x axis of the report: the x field's values as numbers when every one reads as a plain
// number, a time (in seconds), a rate (in Gbit/s) or a size (in bytes); else the values are
// categories, placed 0, 1, ... in the order of first appearance. A point that does not set the
// x field (a reference run, such as the fat-tree of a delay sweep) has no place on it: NaN.
struct SweepAxis {
  std::string unit;            // "s", "Gbit/s", "B", "" (plain numbers) or "category"
  std::vector<double> values;  // per point
  std::vector<std::string> categories;
  bool logarithmic = false;  // numbers over more than a decade, all positive
  // At the points' values (at most a dozen of them, spread over the axis), written in the
  // field's unit: "1us", "25ms", "400G", "2MiB"; for categories, each at its place.
  std::vector<GnuplotTic> tics;
};
SweepAxis sweep_axis(const study::SweepSpec& spec);

// Values read as numbers, for an axis: every one a plain number, else every one a time (in
// seconds), else every one a rate (in Gbit/s), else every one a size (in bytes), with that unit
// ("", "s", "Gbit/s", "B"); nullopt when none holds for all of them (they are categories) or
// there are none.
struct AxisNumbers {
  std::vector<double> values;
  std::string unit;
};
std::optional<AxisNumbers> axis_numbers(const std::vector<std::string>& values);

// report.html: iteration time, tokens/s and tokens/s per million dollars of network against
// the x field, one line per combination of the other fields; then the table. mfabric::Error
// (field "report.html") when gnuplot is missing or fails.
std::string sweep_html(const study::SweepSpec& spec, const study::SweepResult& r);

inline constexpr const char* kSweepOutputFiles[] = {"results.json", "results.csv", "report.html",
                                                    "points.jsonl"};
// Before the run: mfabric::Error when DIR cannot take the set (core/output_files.h,
// check_output_set) or, with `report`, when gnuplot is not installed. Nothing is created: the
// journal creates DIR when the first point finishes.
void check_sweep_outputs(const std::string& dir, bool report = true);
// The set, written at once (core/output_files.h); the page is made first. points.jsonl is
// rewritten with one record per point, the failed ones included: the journal the results
// derive from.
void write_sweep_outputs(const study::SweepSpec& spec, const study::SweepResult& r,
                         const std::string& dir);

}  // namespace mfabric::report
