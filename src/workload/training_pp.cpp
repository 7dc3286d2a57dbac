#include "workload/training_pp.h"

namespace mfabric::workload::training {

void PipelineTransfers::new_iteration() {
  pp_in_.clear();
  pp_grad_in_.clear();
  bwd_in_.clear();
}

Bytes PipelineTransfers::activation_bytes() const {
  return Bytes(spec_.tokens_per_micro_batch() * spec_.model.hidden * spec_.model.dtype_bytes /
               (static_cast<std::int64_t>(spec_.parallelism.tp) * spec_.parallelism.cp));
}

std::vector<TaskId> PipelineTransfers::forward_input(const TrainingTasks& tasks, int v,
                                                     int mb) const {
  if (virtual_.first(v)) {
    return std::vector<TaskId>(static_cast<std::size_t>(tasks.stage_gpus()), -1);
  }
  return pp_in_.at({v, mb});
}

std::vector<TaskId> PipelineTransfers::send(TrainingTasks& tasks, int stage, int to, Op op,
                                            Phase phase, int mb,
                                            const std::vector<TaskId>& cur) const {
  std::vector<TaskId> sent(cur.size());
  // To the GPU of the same place in the other stage.
  tasks.each_gpu(stage, [&](int g, std::size_t i, int) {
    sent[i] =
        tasks.p2p(g, tasks.gpu(to, static_cast<int>(i)), op, phase, mb, activation_bytes(), cur[i]);
  });
  return sent;
}

void PipelineTransfers::end_forward(TrainingTasks& tasks, int v, int mb,
                                    const std::vector<TaskId>& cur) {
  if (virtual_.last(v)) {
    bwd_in_[{v, mb}] = cur;
    return;
  }
  pp_in_[{v + 1, mb}] = send(tasks, virtual_.stage_of(v), virtual_.stage_of(v + 1),
                             Op::PpActivation, Phase::Forward, mb, cur);
}

const std::vector<TaskId>& PipelineTransfers::backward_input(int v, int mb) const {
  return virtual_.last(v) ? bwd_in_.at({v, mb}) : pp_grad_in_.at({v, mb});
}

void PipelineTransfers::end_backward(TrainingTasks& tasks, int v, int mb,
                                     const std::vector<TaskId>& cur) {
  if (virtual_.first(v)) return;
  pp_grad_in_[{v - 1, mb}] = send(tasks, virtual_.stage_of(v), virtual_.stage_of(v - 1),
                                  Op::PpGradient, Phase::Backward, mb, cur);
}

}  // namespace mfabric::workload::training
