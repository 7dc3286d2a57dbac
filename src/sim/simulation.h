// One simulation run as a library call: experiment -> fabric -> task graph -> backend -> engine
// -> result. The CLI, the tests and `compare` (many runs at once, on threads) all go through
// simulate(); it keeps no state between calls, so concurrent calls are independent.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collective/lowering.h"
#include "config/experiment.h"
#include "config/workload_builder.h"
#include "fabric/topology.h"
#include "sim/engine.h"
#include "sim/mfabric_control.h"
#include "sim/spares.h"
#include "sim/topoopt_control.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

struct SimulationOptions {
  // Keep every task's start and end (collectives.csv, trace.json need them).
  bool record_spans = false;
  // Keep every network transfer's start and end (flows.csv).
  bool record_flows = false;
  // Count every link's bytes per time bin (utilisation.csv; net/link_timeline.h). With fixed
  // bins that would take more than their max_cells, the run throws net::TimelineTooFine.
  std::optional<net::TimelineOptions> timeline;
  // Called now and then with (tasks finished, tasks in total).
  std::function<void(std::size_t, std::size_t)> progress;
};

// Everything a run made, for reports.
struct Simulation {
  config::Experiment experiment;
  fabric::Topology topology;
  workload::TaskGraph graph;
  RunResult result;
  // What the control plane did, for fabrics that reconfigure (mfabric).
  std::optional<ControlStats> control;
  // The planned topology, for TopoOpt (planned once before training).
  std::optional<TopoOptStats> topoopt;
  // Failures: the ranks spares took (graph GPUs are where the job ran).
  std::vector<SpareMove> spares;
  // A training job's expert routing: where it came from and its skew.
  std::optional<config::RoutingSummary> routing;
  // Why the run simulated all its micro-batches though simulation.extrapolate asked otherwise, or
  // an extrapolation fell back to them (sim/steady_state.h); empty otherwise. When it was
  // extrapolated, result.extrapolation says so and `graph` holds the simulated micro-batches.
  std::string extrapolation_declined;
  // The flow backend ran the fast solver (config::Experiment::solver; docs/shortcuts.md).
  bool fast_solver = false;
  // Why the fast solver was asked for (or picked by "auto") and not used; empty otherwise.
  std::string fast_solver_declined;
  // Collective steps ran as coflows (simulation.solver: coflow; docs/shortcuts.md, "Coflows"),
  // or why they were asked for and not (empty: not asked for).
  bool coflows = false;
  std::string coflows_declined;
  // What Megatron-Core would refuse of a training job's settings (workload/megatron_checks.h):
  // the run models them as given, and its outputs warn.
  std::vector<std::string> framework_refusals;
};

// The bound of the iteration time's error the fast solver holds against the exact solver, from
// its measured errors (docs/shortcuts.md, "The fast solver": at most 0.35% over the paper's
// evaluation and the recipes' jobs, TopoOpt aside): each run that takes it records it.
inline constexpr double kFastSolverError = 0.005;
// The worst error measured on a fabric that forwards through hosts (TopoOpt, Mixtral 8x22B at
// 100G), where the fast solver is therefore not used.
inline constexpr double kFastSolverHostForwardingError = 0.0255;

// The bound of the iteration time's error of coflows against the exact solver, from their
// measured errors (docs/shortcuts.md, "Coflows": at most 1.37% over the paper's evaluation,
// TopoOpt aside, and 0.13% at 4,096 servers): each run that takes them records it.
inline constexpr double kCoflowError = 0.015;
// The worst error measured on a fabric that forwards through hosts (TopoOpt), where coflows are
// therefore not used.
inline constexpr double kCoflowHostForwardingError = 0.0158;

// A shortcut a run took or was refused (docs/shortcuts.md), for every output to name.
struct Shortcut {
  std::string name;  // "extrapolate"
  bool used = false;
  double bound = 0;    // when used: the estimated relative error of the iteration time
  std::string detail;  // what it did (used) or why not
};
// Whether a run takes the fast solver (config::Experiment::solver): asked for by name, on the
// flow backend (`auto` takes coflows instead: uses_coflows). A fabric that forwards through
// hosts still refuses it when the run builds it.
bool uses_fast_solver(const config::Experiment& e);
// Whether a run takes coflows (docs/shortcuts.md, "Coflows"): asked for (`coflow`), or `auto`
// on a training job of at least config::kCoflowsFromTasks estimated tasks; the flow backend's
// only. `spec`: the training job (training_spec), null for another workload, which `auto` leaves
// exact. A fabric that forwards through hosts still refuses them when the run builds it.
bool uses_coflows(const config::Experiment& e, const workload::TrainingSpec* spec);

// The shortcuts of a run, none when it took none and none was refused.
std::vector<Shortcut> shortcuts(const Simulation& s);

// Builds the experiment's fabric and workload, runs them on the backend `experiment.backend`
// names and returns all four. A training job of many micro-batches may run fewer and extrapolate
// the rest (simulation.extrapolate; sim/steady_state.h). Throws mfabric::Error naming the
// experiment file and field for bad input (a fabric that cannot be built, an unknown algorithm, a
// job too big).
Simulation simulate(config::Experiment experiment, const SimulationOptions& options = {});

// The collective algorithms a run uses: the experiment's `algorithms`, with a microbenchmark's
// own `algorithm` for its collective kind.
collective::AlgorithmChoice algorithms_of(const config::Experiment& e);

}  // namespace mfabric::sim
