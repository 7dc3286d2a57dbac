// Context-parallel communication of the training job: each GPU of a CP group holds 1/CP of a
// micro-batch's tokens, and its attention needs every token's keys and values. As Megatron-Core
// exchanges them (its ring of point-to-point sends, here one all-gather per layer, not overlapped
// with the attention core's steps as the ring is: an upper bound on what CP exposes): before a
// layer's attention, forward and backward, the keys and values are all-gathered over the CP
// group; after the attention's backward, their gradients are reduce-scattered back
// (docs/workload.md, "Context parallelism"). Internal to the builder (training.cpp).
#pragma once

#include <vector>

#include "workload/training.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {

// Bytes of one layer's keys and values over the whole micro-batch, a TP rank's share of the
// heads (MLA: its up-projected keys and values), in the model's dtype.
Bytes cp_key_value_bytes(const TrainingSpec& spec);

// The all-gather (op CpKeyValues) or reduce-scatter (CpKeyValueGrads) in every CP group of
// `stage` after the tasks `cur` (per local GPU), which then continue from it; a no-op for CP 1.
void cp_exchange(TrainingTasks& tasks, const TrainingSpec& spec, int stage,
                 std::vector<TaskId>& cur, Op op, Phase phase, int layer, int mb);

}  // namespace mfabric::workload::training
