// The task graph an experiment's workload describes: a model's training (workload/training.h),
// a micro-benchmark collective, a Chakra trace or a connection matrix.
#pragma once

#include "config/experiment.h"
#include "workload/task_graph.h"

namespace mfabric::config {

// GPUs numbered as in the rank layout, GPU g on server g / gpus_per_server.
workload::TaskGraph build_workload(const Experiment& e);

}  // namespace mfabric::config
