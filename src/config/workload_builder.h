// The task graph an experiment's workload describes: a model's training (workload/training.h),
// a micro-benchmark collective, a Chakra trace or a connection matrix.
#pragma once

#include <optional>
#include <string>

#include "config/experiment.h"
#include "workload/routing.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::config {

// Where a training job's expert routing came from and how unevenly it loads the experts, for
// every output to say (a verdict that rests on a routing skew must name it).
struct RoutingSummary {
  std::string trace;  // a recorded trace's path; empty: the synthetic generator
  workload::RoutingBalance balance = workload::RoutingBalance::Skewed;  // the generator's
  workload::ExpertLoadSkew skew;
  // "synthetic, busiest expert 3.21x the mean (1.52-6.03)", "synthetic, forced balance, ...",
  // "trace FILE, ...".
  std::string text() const;
};

// A training experiment's job as the workload builds it (model, GPU, calibration, parallelism,
// batch and the job's settings), checked as build_workload checks it (the batch splits evenly, the
// job fits in GPU memory) but not yet against simulation.max_memory. Needs e.model.
workload::TrainingSpec training_spec(const Experiment& e);

// GPUs numbered as in the rank layout, GPU g on server g / gpus_per_server. For a training job,
// `routing` (when given) receives its routing's summary; other workloads leave it empty. `spans`:
// whether the run will keep every task's start and end, for the job-size check.
workload::TaskGraph build_workload(const Experiment& e,
                                   std::optional<RoutingSummary>* routing = nullptr,
                                   workload::TaskSpans spans = workload::TaskSpans::Recorded);

}  // namespace mfabric::config
