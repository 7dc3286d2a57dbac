// Outputs of `mfabric simulate` (docs/cli.md): the summary (text and results.json), per-link
// and per-collective CSVs, and a Chrome/Perfetto trace. Files are written under a temporary name
// and renamed, so a failed run never leaves a half-written file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "fabric/topology.h"
#include "sim/engine.h"
#include "sim/experiment.h"
#include "workload/task_graph.h"

namespace mfabric::report {

inline constexpr const char* kResultsSchema = "mfabric.simulate/1";

struct SimulationReport {
  const sim::Experiment& experiment;
  const fabric::Topology& topology;
  const workload::TaskGraph& graph;
  const sim::RunResult& result;
};

// {"schema", "experiment", "seed", "fabric", "gpus", "iterations", "iteration_time_s",
//  "iteration_times_s", "exposed_comm_s", "comm_time_s": {"tp","ep","dp","pp"}, "events",
//  "wall_time_s", "events_per_s", "tasks"}. Without `timing`, the two fields that measure the
// run (wall_time_s, events_per_s) are left out, so that results.json is byte-identical for the
// same experiment and seed.
nlohmann::json results_json(const SimulationReport& r, bool timing = true);
std::string results_text(const SimulationReport& r);

// One row per directed channel that carried bytes or belongs to a network cable:
// link,direction,from,to,kind,rate_gbps,bytes,busy_s,utilisation
std::string links_csv(const SimulationReport& r);
// One row per collective and p2p task:
// task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,end_s,duration_s
std::string collectives_csv(const SimulationReport& r);
// Chrome trace event format: a process per GPU with a compute and a communication track.
std::string trace_json(const SimulationReport& r);

// Writes `content` to `path` atomically (temporary file in the same directory, then rename).
void write_file_atomically(const std::string& path, const std::string& content);
// results.json, links.csv, collectives.csv, trace.json under `dir` (created if needed).
void write_simulation_outputs(const SimulationReport& r, const std::string& dir);

}  // namespace mfabric::report
