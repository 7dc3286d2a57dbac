// Outputs of `mfabric simulate` (docs/cli.md): the summary (text and results.json), per-link
// and per-collective CSVs, link utilisation over time (CSVs and report.html), and on request a
// Chrome/Perfetto trace and per-flow times. The files of --out are written as one set
// (core/output_files.h): the directory holds the previous complete set or the new one.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>

#include "config/experiment.h"
#include "core/json_text.h"  // the JSON these functions return is printed with json_text()
#include "fabric/topology.h"
#include "report/trace_filter.h"
#include "sim/engine.h"
#include "sim/simulation.h"
#include "workload/task_graph.h"

namespace mfabric::report {

inline constexpr const char* kResultsSchema = "mfabric.simulate/1";

struct SimulationReport {
  const config::Experiment& experiment;
  const fabric::Topology& topology;
  const workload::TaskGraph& graph;
  const sim::RunResult& result;
  const sim::ControlStats* control = nullptr;           // fabrics that reconfigure
  const sim::TopoOptStats* topoopt = nullptr;           // TopoOpt's planned topology
  const std::vector<sim::SpareMove>* spares = nullptr;  // ranks moved to spares (failures)
  const config::RoutingSummary* routing = nullptr;      // a training job's expert routing
  std::vector<sim::Shortcut> shortcuts;                 // taken or refused (sim::shortcuts)
  const std::vector<std::string>* framework_refusals = nullptr;  // Megatron-Core's refusals
};

inline SimulationReport report_of(const sim::Simulation& s) {
  return {s.experiment,
          s.topology,
          s.graph,
          s.result,
          s.control ? &*s.control : nullptr,
          s.topoopt ? &*s.topoopt : nullptr,
          &s.spares,
          s.routing ? &*s.routing : nullptr,
          sim::shortcuts(s),
          &s.framework_refusals};
}

// {"schema", "experiment", "seed", "fabric", "gpus", "iterations", "iteration_time_s",
//  "iteration_times_s", "exposed_comm_s", "comm_time_s": {one key per traffic class of the
//  engine (sim::kTrafficClasses): "tp", "ep", "dp", "pp", ...}, "comm_time_profiled_s" (the
//  same keys, as a per-GPU profiler counts: RunResult::comm_time_profiled), "calibration" (its
//  name), "events", "transfers":
//  {"started", "delivered", "bytes_sent", "bytes_delivered", and for an extrapolated run
//  "job_bytes_sent", the whole job's}, and for fabrics that reconfigure
//  "reconfiguration": {"planner", "policy", "count", "unchanged", "switching", "kept",
//  "circuits_torn_down", "conflicts", "time_s", "held", "held_time_s", "critical_holds",
//  "critical_held_s", "circuit_bytes",
//  "eps_bytes", "predictions", "prediction_error"}, for TopoOpt "topology": {"kind", "degree",
//  "ring_degree", "links", "ring_links", "matching_links", "connectivity_links",
//  "leftover_links", "ring_groups", "rings", "matching_rounds", "connected", "unused_nics",
//  "circuit_bytes", and with `timing` "planning_wall_time_s"}, with failures "failures":
//  {"parts": [{"kind", "server", "index", "at_s" (null: start)}], "spares": [{"failure",
//  "from_gpu", "to_gpu"}], and on mFabric "failed_ports", "relays"},
//  "wall_time_s", "events_per_s", "tasks"}, "shortcuts" (only when one was taken or refused:
//  study::shortcuts_json; docs/shortcuts.md), "framework_warnings" (only when Megatron-Core
//  would refuse a setting of the job: one sentence each, workload::megatron_refusals); for a
//  training job (a model, not a micro-benchmark, trace or connection matrix) also "tokens_per_s",
//  "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu" (study/gpu_throughput.h) and "gpu_busy":
//  {"busy_fraction", "busiest_stage": {"stage", "busy_fraction"}, "least_busy_stage": {...},
//  "pipeline_stages", "micro_batches", "bubble_fraction", "comm_wait_fraction", "idle_comm_share",
//  "other_wait_fraction"}
//  (study/gpu_busy.h), and "expert_routing": {"source" ("synthetic" or "trace"), "trace" (its
//  path, for a trace), "balance" ("skewed" or "forced", synthetic), "busiest_over_mean":
//  {"mean", "min", "max"}} (config::RoutingSummary). Without `timing`, the two fields that measure
//  the run (wall_time_s,
// events_per_s) are left out, so that results.json is byte-identical for the same experiment
// and seed.
nlohmann::json results_json(const SimulationReport& r, bool timing = true);
std::string results_text(const SimulationReport& r);
// For a training job whose GPUs compute less than half of the iteration, why
// (study::idle_warning), for a warning on stderr; nullopt otherwise.
std::optional<std::string> idle_warning(const SimulationReport& r);
// The topology's network cost by the paper's formulas at its Table 4 prices; nullopt for a link
// speed the table has no price for.
std::optional<double> paper_network_cost(const fabric::Topology& topology);

// CSV files follow RFC 4180 (a field with a comma, quote or line break is quoted).
// One row per directed channel that carried bytes or belongs to a network cable:
// link,direction,from,to,kind,rate_gbps,bytes,busy_s,utilisation
void write_links_csv(const SimulationReport& r, std::ostream& out);
std::string links_csv(const SimulationReport& r);
// One row per collective and p2p task:
// task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,end_s,
// duration_s,source_id (the task's id in the file it came from, a connection matrix's flow id;
// empty otherwise)
void write_collectives_csv(const SimulationReport& r, std::ostream& out);
std::string collectives_csv(const SimulationReport& r);
// Chrome trace event format: {"displayTimeUnit": "ms", "traceEvents": [...]}, a process per GPU
// with a compute and a communication track, and for fabrics that reconfigure a process "OCS
// regions" with each region's reconfigurations on its own track; times in microseconds, rounded
// to the nanosecond. With a filter, only the GPUs it selects (report/trace_filter.h) and the
// OCS regions of their servers.
// Streamed event by event: a 1024-GPU trace is about 90 MB.
void write_trace_json(const SimulationReport& r, std::ostream& out, const TraceFilter& filter = {});
std::string trace_json(const SimulationReport& r, const TraceFilter& filter = {});

// Every file a simulate --out DIR may hold, in the order they are listed; which ones a run
// writes depends on its options (SimulationOutputs). The list is fixed: DIR may hold any of them
// from an earlier run, and they are replaced as one set.
inline constexpr const char* kSimulationOutputFiles[] = {
    "results.json", "links.csv",  "collectives.csv",       "utilisation.csv",
    "report.html",  "trace.json", "utilisation_links.csv", "flows.csv"};
// flows.csv: one row per network transfer the run recorded (SimulationOptions::record_flows,
// `simulate --flows`).
void write_flows_csv(const SimulationReport& r, std::ostream& out);

// What simulate --out writes besides results.json and links.csv. A file is written when it was
// asked for or, for those written by default, when it has rows: never a header alone unasked.
struct SimulationOutputs {
  bool trace = false;  // trace.json (--trace)
  TraceFilter trace_filter;
  bool flows = false;             // flows.csv (--flows; the run must have recorded them)
  bool link_utilisation = false;  // utilisation_links.csv (--links-over-time)
  bool report = true;             // report.html (needs gnuplot, and a run that counted a timeline)
};
// collectives.csv when the run had a collective or p2p task; utilisation.csv when the run
// counted a timeline (SimulationOptions::timeline); the rest as `outputs` asks.
// Written as one set in `dir` (write_output_set in core/output_files.h: the directory ends with
// the previous complete set or the new one, whatever happens). Returns the names written, in
// kSimulationOutputFiles order.
std::vector<std::string> write_simulation_outputs(const SimulationReport& r, const std::string& dir,
                                                  const SimulationOutputs& outputs = {});
// The checks write_simulation_outputs makes on `dir` (core/output_files.h), without writing:
// call it before the run so that a bad --out DIR fails at once.
void check_simulation_outputs(const std::string& dir);

}  // namespace mfabric::report
