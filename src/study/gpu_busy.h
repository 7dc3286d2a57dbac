// How busy a training run keeps its GPUs (docs/cli.md, "mfabric simulate"): the share of the
// iteration each GPU's compute stream runs, per stage, and why it idles the rest: the pipeline's
// bubbles and the waits for communication.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "sim/engine.h"
#include "sim/spares.h"
#include "workload/task_graph.h"

namespace mfabric::study {

struct StageBusy {
  int stage = 0;
  double busy_fraction = 0;  // mean over the stage's GPUs
};

struct GpuBusy {
  // Compute time / iteration time, a mean over the job's GPUs (each GPU's compute summed over
  // the iterations over the iterations' summed time).
  double busy_fraction = 0;
  StageBusy busiest;
  StageBusy least_busy;
  int stages = 1;         // pipeline stages (PP)
  int micro_batches = 1;  // per pipeline and iteration
  // The schedule's bubble (workload::bubble_fraction): the share of the iteration a stage
  // waits for the pipeline to fill and drain, were every step equally long and free.
  double bubble_fraction = 0;
  // The time a GPU's compute stream waits for communication (sim::RunResult::exposed_comm, a
  // mean over GPUs), as a share of the iteration and of its idle time (1 - busy_fraction; 0
  // when it never idles).
  double comm_wait_fraction = 0;
  double idle_comm_share = 0;
  // The rest of the iteration, 1 - busy - bubble - communication (at least 0): waiting for other
  // GPUs beyond the schedule's bubble (the busiest expert GPU of an all-to-all, a slower stage),
  // within the bubble estimate's error.
  double other_wait_fraction = 0;
};

// GPUs that compute less than this share of the iteration are mostly idle: simulate warns.
inline constexpr double kBusyWarningBelow = 0.5;

// The run's figures; nullopt for a workload without a model (micro-benchmark, Chakra trace,
// connection matrix) or a run without time. `spares` are the ranks the run moved to spare GPUs
// (sim::Simulation::spares): the rank layout places a GPU in its stage by its rank.
std::optional<GpuBusy> gpu_busy(const config::Experiment& e, const workload::TaskGraph& graph,
                                const sim::RunResult& result,
                                const std::vector<sim::SpareMove>& spares);

// Why the GPUs idle, for a warning: "GPUs compute 14% of the iteration: pipeline bubbles (8
// micro-batches for 16 stages: 65% of the iteration), waiting for communication (15%) and for
// other GPUs (6%)", each reason once it is 1% or more; nullopt when they compute
// kBusyWarningBelow of the iteration or more.
std::optional<std::string> idle_warning(const GpuBusy& busy);

}  // namespace mfabric::study
