#include "workload/training_cp.h"

#include <cstdint>
#include <utility>

namespace mfabric::workload::training {

Bytes cp_key_value_bytes(const TrainingSpec& spec) {
  const AttentionSpec& a = spec.model.attention;
  const std::int64_t width = a.kind == "mla"
                                 ? static_cast<std::int64_t>(a.heads) *
                                       (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)
                                 : static_cast<std::int64_t>(a.kv_heads) * a.head_dim * 2;
  return Bytes(spec.tokens_per_micro_batch() * width / spec.parallelism.tp *
               spec.model.dtype_bytes);
}

void cp_exchange(TrainingTasks& tasks, const TrainingSpec& spec, int stage,
                 std::vector<TaskId>& cur, Op op, Phase phase, int layer, int mb) {
  const ParallelismSpec& p = spec.parallelism;
  if (p.cp == 1) return;
  const Bytes bytes = cp_key_value_bytes(spec);
  const CollectiveKind kind =
      op == Op::CpKeyValueGrads ? CollectiveKind::ReduceScatter : CollectiveKind::AllGather;
  // Local index tp + TP x (cp + CP x dp): a CP group is the TP-strided run of CP GPUs.
  for (int dp = 0; dp < p.stage_gpus() / (p.tp * p.cp); ++dp) {
    for (int t = 0; t < p.tp; ++t) {
      std::vector<std::int32_t> members;
      std::vector<TaskId> deps;
      for (int c = 0; c < p.cp; ++c) {
        const int local = t + p.tp * (c + p.cp * dp);
        members.push_back(tasks.gpu(stage, local));
        deps.push_back(cur[static_cast<std::size_t>(local)]);
        tasks.also_overlapped(deps.back(), deps);
      }
      const TaskId id = tasks.collective(kind, op, Traffic::CP, phase, layer, mb,
                                         std::move(members), bytes, -1, std::move(deps));
      for (int c = 0; c < p.cp; ++c)
        cur[static_cast<std::size_t>(t + p.tp * (c + p.cp * dp))] = id;
    }
  }
}

}  // namespace mfabric::workload::training
