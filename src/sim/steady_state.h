// Steady-state extrapolation of the pipeline (docs/shortcuts.md). A 1F1B, interleaved or DualPipe
// iteration of m micro-batches is a warm-up, a steady phase that repeats with a period, and a
// cool-down; adding micro-batches adds steady repeats and nothing else. So a job of many
// micro-batches runs with fewer (m'), enough for the first stage to show `samples` steady repeats,
// and the iteration time is T(m') + (m - m') x the mean period. The period is measured where the
// first pipeline stage (GPU 0) ends each micro-batch's last backward: one repeat of the schedule
// is `unit` micro-batches (1 for 1F1B, `stages` for interleaved, 2 for DualPipe's two directions)
// and spans `lag` of the steady phase's backward ends (the same, but 1 for DualPipe, whose second
// direction does not end on the first stage).
//
// The estimator of the error: with n non-overlapping repeats of mean G and standard deviation s,
// the added time (m - m') G / unit is off by about (m - m') s / (unit sqrt(n)); twice that over
// the iteration time is the bound. A run whose bound is above kExtrapolationBound runs again with
// twice the repeats, and all its micro-batches once that would not simulate at most half of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "sim/engine.h"
#include "sim/mfabric_control.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::sim {

// The estimated relative error of the iteration time an extrapolation must hold.
inline constexpr double kExtrapolationBound = 0.01;
// Steady repeats the first try measures; each further try doubles them.
inline constexpr int kSteadySamples = 8;
// Tries before the run falls back to all its micro-batches.
inline constexpr int kExtrapolationTries = 3;

struct SteadyStatePlan {
  int micro_batches = 0;  // the job's, per pipeline and iteration
  int simulated = 0;      // the run's: micro_batches when the schedule leaves nothing to skip
  int unit = 1;           // micro-batches per steady repeat
  int lag = 1;            // steady backward ends per repeat
  // Per simulated micro-batch: its last backward on the first stage comes before that stage's
  // last forward (it ends inside the steady phase).
  std::vector<bool> steady;
  // Where the graph of `simulated` micro-batches starts to be built as the tail of the job's
  // full graph (their build orders' common tail; full_job_flow_hash_shifts): the first stage's
  // first step in it, of this micro-batch, its `cool_down_occurrence`-th (from 0) step of that
  // micro-batch on the stage. -1 when the common tail holds no step of the first stage.
  int cool_down_micro_batch = -1;
  int cool_down_occurrence = 0;
};

// The fewest micro-batches that `schedule` over `stages` stages (`chunks` model chunks each)
// allows and that show `samples` steady repeats on the first stage: interleaved runs a multiple of
// `stages`, DualPipe an even number of at least 2 x stages. `simulated` is `micro_batches` when
// no fewer would do (GPipe, whose backwards all follow its last forward, never has fewer).
// `ep_overlap`: the schedule's steps as overlap.ep_comm orders them (workload::training::
// stage_schedule).
SteadyStatePlan steady_state_plan(workload::PipelineSchedule schedule, int stages, int chunks,
                                  bool ep_overlap, int micro_batches, int samples);

// Whether a training experiment is extrapolated: `plan` when it is; otherwise `why_not` says why
// when the experiment asked for it (simulation.extrapolate: true), or is empty. Unset
// (simulation.extrapolate absent) extrapolates where the plan simulates at most half the
// micro-batches; true wherever it simulates fewer.
struct ExtrapolationChoice {
  std::optional<SteadyStatePlan> plan;
  std::string why_not;
};
ExtrapolationChoice choose_extrapolation(const config::Experiment& e,
                                         const workload::TrainingSpec& spec, int samples);

// The experiment with plan.simulated micro-batches per pipeline instead of its own (its global
// batch scaled down), each replica's micro-batches routed as the job's first ones are (the same
// synthetic matrices), so that the short run is the job's beginning.
config::Experiment with_micro_batches(const config::Experiment& e, const SteadyStatePlan& plan);

// The flow-hash ids (EngineOptions::flow_hash_shifts) that make a graph of plan.simulated
// micro-batches route as the job's full graph does where the two build the same tasks: from each
// iteration's cool-down on (GPU 0's first task of the first stage's second step after its last
// forward; then the other stages' last steps, the gradient reduction, the optimizer and the
// parameter gathering), the tasks come in the same order in both, moved by the skipped
// micro-batches' tasks (each micro-batch builds as many); before it, by the earlier iterations'
// skipped tasks. Without this the ECMP draws of the reduction after the last backward, one
// sample per run, differ between the short run and the full one (measured: 0.6% of a 256-GPU
// job's iteration). Empty when the iterations' micro-batch tasks are not a multiple of
// plan.simulated or GPU 0 shows no such step.
std::vector<FlowHashShift> full_job_flow_hash_shifts(const workload::TaskGraph& graph,
                                                     const SteadyStatePlan& plan);

// The steady period of a run of plan.simulated micro-batches (made with
// EngineOptions::micro_batch_figures): nullopt when it shows fewer than two steady repeats.
std::optional<Extrapolation> measure_steady_state(const RunResult& r, const SteadyStatePlan& plan);

// Makes r's figures the job's (RunResult::extrapolation says which): iteration times and makespan
// grow by the skipped micro-batches' periods; the micro-batches' share of each class's
// communication time and of the exposed communication (MicroBatchFigures) and of the bytes sent
// is multiplied by x.scale().
void extrapolate(RunResult& r, const Extrapolation& x);
// The control plane's figures as the job's: plans (one per all-to-all) multiplied by x.scale();
// reconfigurations and holds, and their times, grow by what the measured steady phase
// (x.steady_from to x.steady_to) had per second, for the time the skipped micro-batches add
// (circuits that stay up add none); r's holds on the critical path in proportion to the holds.
void extrapolate(ControlStats& c, RunResult& r, const Extrapolation& x);

// Compute time per GPU and iteration of a run's graph (workload::compute_time_per_gpu), the
// micro-batches' tasks multiplied by the extrapolation's scale when r was extrapolated.
std::vector<Time> compute_time_per_gpu(const workload::TaskGraph& graph, const RunResult& r);

// "simulated 20 of 120 micro-batches a pipeline, the rest extrapolated at 181.20 ms each (8
// steady repeats, spread 3.1%, estimated error 0.4%)".
std::string extrapolation_text(const Extrapolation& x);

}  // namespace mfabric::sim
