// Tensor-parallel communication of the training job: the all-reduce of the hidden states in
// every TP group of a stage, after attention and after the FFN or the combine (docs/workload.md).
// Internal to the builder (training.cpp).
#pragma once

#include <vector>

#include "workload/training.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {

// TP all-reduce in every TP group of `stage` after the tasks `cur` (per local GPU), which then
// continue from it; a no-op for TP = 1. With overlap.tp_comm, an all-reduce whose members'
// inputs are all compute tasks is pipelined with them instead (TrainingTasks::pipeline_with)
// and `cur` is left as it is.
void tp_all_reduce(TrainingTasks& tasks, const TrainingSpec& spec, int stage,
                   std::vector<TaskId>& cur, Phase phase, int layer, int mb);

}  // namespace mfabric::workload::training
