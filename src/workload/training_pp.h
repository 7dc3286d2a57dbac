// Pipeline-parallel communication of the training job: activations sent point-to-point to the
// next virtual stage after a forward, gradients to the previous one after a backward (where each
// virtual stage runs: VirtualPipeline, training_schedule.h), 1/TP of
// the tensor per TP rank (Megatron-LM's scatter/gather optimisation), and what each stage's forward
// and backward of a micro-batch continue from. Internal to the builder (training.cpp).
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "workload/training.h"
#include "workload/training_schedule.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {

class PipelineTransfers {
 public:
  explicit PipelineTransfers(const TrainingSpec& spec)
      : spec_(spec), virtual_(spec.schedule, spec.parallelism.pp, spec.parallelism.vp) {}

  // A new iteration: nothing has been sent yet.
  void new_iteration();

  // What the forward of micro-batch mb on virtual stage `v` continues from (per local GPU): the
  // activations the previous virtual stage sent, or nothing (-1) on the first.
  std::vector<TaskId> forward_input(const TrainingTasks& tasks, int v, int mb) const;
  // After the forward of micro-batch mb on virtual stage `v` (ending in the tasks `cur`): the
  // activations to the next virtual stage, or on the last `cur` kept for the backward (the loss).
  void end_forward(TrainingTasks& tasks, int v, int mb, const std::vector<TaskId>& cur);
  // What the backward of micro-batch mb on virtual stage `v` continues from: the last one's own
  // forward, the others' the gradient the next virtual stage sent.
  const std::vector<TaskId>& backward_input(int v, int mb) const;
  // After the backward of micro-batch mb on virtual stage `v`: the gradients to the previous one.
  void end_backward(TrainingTasks& tasks, int v, int mb, const std::vector<TaskId>& cur);

 private:
  // One micro-batch's hidden states, split over TP ranks.
  Bytes activation_bytes() const;
  // The transfers from every GPU of `stage` to its peer on stage `to` after `cur`.
  std::vector<TaskId> send(TrainingTasks& tasks, int stage, int to, Op op, Phase phase, int mb,
                           const std::vector<TaskId>& cur) const;

  const TrainingSpec& spec_;
  VirtualPipeline virtual_;
  // Per (virtual stage, micro-batch): the tasks each GPU of its stage continues from.
  std::map<std::pair<int, int>, std::vector<TaskId>> pp_in_, pp_grad_in_, bwd_in_;
};

}  // namespace mfabric::workload::training
