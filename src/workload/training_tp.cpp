#include "workload/training_tp.h"

#include <cstdint>
#include <utility>

namespace mfabric::workload::training {

void tp_all_reduce(TrainingTasks& tasks, const TrainingSpec& spec, int stage,
                   std::vector<TaskId>& cur, Phase phase, int layer, int mb) {
  const ParallelismSpec& p = spec.parallelism;
  if (p.tp == 1) return;
  const Bytes bytes(spec.tokens_per_micro_batch() / p.cp * spec.model.hidden *
                    spec.model.dtype_bytes);
  const TaskGraph& graph = tasks.graph();
  // TP groups are blocks of TP consecutive local GPUs.
  for (int base = 0; base < tasks.stage_gpus(); base += p.tp) {
    // With overlap.tp_comm and a compute task X producing the hidden states on every member,
    // the all-reduce is pipelined with X (Megatron's --tp-comm-overlap splits the GEMM and its
    // collective into chunks): it starts when X can start, and what follows waits for both, so
    // the pair takes max(X, all-reduce) instead of their sum.
    bool pipelined = spec.overlap.tp_comm;
    for (int tp = 0; tp < p.tp && pipelined; ++tp) {
      const TaskId x = cur[static_cast<std::size_t>(base + tp)];
      // A GEMM, that is: the permutation's scatter back is not one, and is not chunked.
      pipelined =
          x >= 0 && graph.task(x).kind == TaskKind::Compute && graph.task(x).op != Op::Permute;
    }
    std::vector<std::int32_t> members;
    std::vector<TaskId> deps;
    for (int tp = 0; tp < p.tp; ++tp) {
      members.push_back(tasks.gpu(stage, base + tp));
      const TaskId x = cur[static_cast<std::size_t>(base + tp)];
      if (pipelined) {
        for (TaskId d : graph.deps(x))
          deps.push_back(d);
      } else {
        deps.push_back(x);
        tasks.also_overlapped(x, deps);
      }
    }
    const TaskId id =
        tasks.collective(CollectiveKind::AllReduce, Op::TpAllReduce, Traffic::TP, phase, layer, mb,
                         std::move(members), bytes, -1, std::move(deps));
    for (int tp = 0; tp < p.tp; ++tp) {
      const auto i = static_cast<std::size_t>(base + tp);
      if (pipelined) {
        tasks.pipeline_with(cur[i], id);
      } else {
        cur[i] = id;
      }
    }
  }
}

}  // namespace mfabric::workload::training
