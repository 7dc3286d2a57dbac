// Running a sweep's points (docs/sweep.md): each point one sim::simulate call on a thread, its
// figures kept as a SweepRun. A SweepRun converts to JSON and back exactly (numbers round-trip),
// which the resume journal and the MPI ranks use, so that a point read back from either gives
// the same results.json as one run in the process.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "study/compare.h"
#include "study/parallel.h"
#include "study/sweep.h"

namespace mfabric::study {

// A bound on a record's timeline, so that a corrupt journal cannot ask for unbounded memory
// (a run's region-0 timeline is thousands of spans).
inline constexpr std::size_t kMaxTimelineSpans = 10'000'000;

struct SweepRun {
  std::size_t index = 0;    // the point
  std::string fingerprint;  // point_fingerprint() of the point it ran
  // model (empty for workloads without one), link_gbps, fabric (the fabric's kind),
  // fabric_spec, gpus, iteration time, tokens/s, costs, reconfiguration, wall time, error.
  CompareRun figures;
  // The region-0 timeline of a comparison's timeline run (CompareResult::timeline), so that a
  // resumed comparison draws the same figure; empty otherwise (every sweep point).
  std::vector<TimelineSpan> timeline;
};

// {"index", "fingerprint", "fields": {path: value}, "model", "link_gbps", "fabric",
//  "fabric_spec", "all_to_all" (the algorithm its all-to-alls ran), "gpus", "iteration_time_s",
//  "tokens_per_s", "tokens_per_s_per_musd", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"
//  (points with a model), "cost_usd": {"built", "paper"}, "cost_built_usd_by_component": {...},
//  "cost_paper_usd_by_component": {...}, "reconfiguration": {...} (mFabric), "error" (a point
//  that failed), "wall_time_s" (with timing)}. tokens_per_s_per_musd is tokens/s per million
// dollars of paper-convention network cost (null without cost or tokens).
nlohmann::json sweep_run_json(const SweepSpec& spec, const SweepRun& run, bool timing = true);
// The same record with the run's fields given (a comparison's: model, link, fabric), which is
// what a comparison's journal holds. Beside the members above: "iterations", "compute_s",
// "exposed_communication_s"; the reconfiguration carries critical_holds, critical_held_s,
// holds, all_to_alls and regions; a timeline run its "timeline": [[start_s, end_s,
// reconfiguration], ...].
nlohmann::json run_record_json(const std::vector<FieldValue>& fields, const SweepRun& run,
                               bool timing = true);
// The inverse of sweep_run_json, read strictly: every member known, of its type and in its
// range (whole numbers as JSON integers; times in seconds 0 or 1 ps to Time::max(); the other
// figures 0 or 1e-30 to 1e30; the fingerprint 16 hex digits). Otherwise mfabric::Error(source,
// "WHERE: member", expectation), e.g. "points.jsonl: line 3: gpus: expected a whole number...".
SweepRun sweep_run_from_json(const nlohmann::json& j, const std::string& source,
                             const std::string& where);

// Runs point k: its figures, or its error (an input error of the point, or an internal one),
// and its wall time. Never throws for a point that fails.
SweepRun run_point(const SweepSpec& spec, std::size_t k);

// Runs `indices` on `jobs` threads (0: one per core; capped as study/parallel.h says), the
// costliest first by `costs` (one per index, estimated_cost), and returns them in the order of
// `indices`. on_done is called for each finished point, one call at a time. `parallel`, when
// given, receives the threads used.
std::vector<SweepRun> run_points(const SweepSpec& spec, const std::vector<std::size_t>& indices,
                                 const std::vector<double>& costs, int jobs,
                                 const std::function<void(const SweepRun&)>& on_done = {},
                                 ParallelRun* parallel = nullptr);

}  // namespace mfabric::study
