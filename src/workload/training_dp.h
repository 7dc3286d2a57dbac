// Data-parallel communication of the training job: the all-reduces of a stage's gradients, the
// dense parameters' over the EP x DP ranks and the experts' over the DP ranks holding the same
// experts (their TP share), after the stage's last backward or, with overlap.grad_reduce, layer
// by layer during it; the next iteration's first compute (or the optimizer step) waits for them.
// Also the parameter counts they and the optimizer step read. Under DualPipe a stage holds its own
// layers and its mirror's (VirtualPipeline::mirror), and the two stages' GPUs of a DP group reduce
// the gradients of both copies together: one group of twice the members, done with the lower stage
// of the pair. Internal to the builder.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/training.h"
#include "workload/training_schedule.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {

class GradientReduction {
 public:
  GradientReduction(const TrainingSpec& spec, const RankLayout& layout);

  // With overlap.grad_reduce, after the stage's last backward has finished `layer`: that layer's
  // gradients are reduced now, under the backward of the layers below.
  void reduce_layer(TrainingTasks& tasks, int stage, int layer);
  // After the stage's last backward: every parameter of the stage, or with overlap.grad_reduce
  // (its layers reduced during the backward) the embeddings only; the stage's GPUs' next compute
  // then waits for all of the iteration's reductions (TrainingTasks::pending).
  void reduce_stage(TrainingTasks& tasks, int stage);

  // With the distributed optimizer, after the stage's optimizer step (each member's last compute):
  // the all-gather of the updated parameters over every group the stage's gradients were
  // reduce-scattered in; the stage's GPUs' next compute waits for them.
  void gather_parameters(TrainingTasks& tasks, int stage);
  // Parameters of the stage's dense part (its layers' and embeddings') and of its local experts
  // (under DualPipe its mirror's too).
  std::int64_t stage_dense_params(int stage) const;
  std::int64_t stage_expert_params(int stage) const;
  // GPUs a DP group's gradients are reduced over, per GPU of it: 2 under DualPipe (both copies).
  int copies() const { return virtual_.dual() ? 2 : 1; }

 private:
  // All-reduces of `dense` and `expert` parameters' gradients (their TP share) over the DP groups
  // of every GPU of the stage, after each member's latest compute (both running steps' with
  // overlap.ep_comm).
  void reduce_gradients(TrainingTasks& tasks, int stage, std::int64_t dense_params,
                        std::int64_t expert_params);

  // The DP group of `gpu` (dense or expert), with the same group of the mirror stage under
  // DualPipe.
  std::vector<int> group(int stage, int local, bool dense, const TrainingTasks& tasks) const;

  const TrainingSpec& spec_;
  const RankLayout& layout_;
  VirtualPipeline virtual_;
  // Gradient all-reduces of the iteration being built, per GPU, handed to its pending
  // dependencies when the stage's reductions are complete.
  std::vector<std::vector<TaskId>> grad_pending_;
  // With the distributed optimizer: per stage, each reduce-scatter's members, bytes and task, for
  // the all-gather after the step.
  struct Reduced {
    std::vector<std::int32_t> members;
    Bytes bytes;
    TaskId reduce_scatter = -1;
  };
  std::vector<std::vector<Reduced>> reduced_;
};

}  // namespace mfabric::workload::training
