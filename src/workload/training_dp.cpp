#include "workload/training_dp.h"

#include <algorithm>
#include <utility>

#include "workload/stage_params.h"

namespace mfabric::workload::training {

GradientReduction::GradientReduction(const TrainingSpec& spec, const RankLayout& layout)
    : spec_(spec),
      layout_(layout),
      virtual_(spec.schedule, spec.parallelism.pp, spec.parallelism.vp),
      grad_pending_(static_cast<std::size_t>(spec.parallelism.gpus())),
      reduced_(static_cast<std::size_t>(spec.parallelism.pp)) {}

std::int64_t GradientReduction::stage_dense_params(int stage) const {
  return held_dense_params(spec_.model, layout_, stage, virtual_.mirror(stage));
}

std::int64_t GradientReduction::stage_expert_params(int stage) const {
  return held_expert_params(spec_.model, layout_, stage, virtual_.mirror(stage));
}

std::vector<int> GradientReduction::group(int stage, int local, bool dense,
                                          const TrainingTasks& tasks) const {
  const auto of = [&](int s) {
    const int g = tasks.gpu(s, local);
    return dense ? layout_.dense_dp_group(g) : layout_.expert_dp_group(g);
  };
  std::vector<int> members = of(stage);
  const int mirror = virtual_.mirror(stage);
  if (mirror != stage) {
    const std::vector<int> other = of(mirror);
    members.insert(members.end(), other.begin(), other.end());
  }
  return members;
}

void GradientReduction::reduce_gradients(TrainingTasks& tasks, int stage, std::int64_t dense_params,
                                         std::int64_t expert_params) {
  const ParallelismSpec& p = spec_.parallelism;
  const int dtype = spec_.model.dtype_bytes;
  const Bytes dense(dense_params * dtype / p.tp);
  const Bytes expert(expert_params * dtype / p.expert_tp());
  auto reduce = [&](const std::vector<int>& members, Op op, Bytes bytes) {
    if (members.size() < 2 || bytes.count() == 0) return;
    std::vector<TaskId> deps;
    for (int g : members) {
      deps.push_back(tasks.last_compute(g));
    }
    std::vector<std::int32_t> group(members.begin(), members.end());
    const TaskId id = tasks.collective(
        spec_.distributed_optimizer ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, op,
        Traffic::DP, Phase::Update, -1, -1, group, bytes, -1, std::move(deps));
    for (int g : members)
      grad_pending_[static_cast<std::size_t>(g)].push_back(id);
    if (spec_.distributed_optimizer) {
      reduced_[static_cast<std::size_t>(stage)].push_back({std::move(group), bytes, id});
    }
  };
  // Per TP rank its dense group, then the expert groups of the first EP group's GPUs (edp 0)
  // of that rank: one per (etp, ep); expert TP ranks beyond TP come after.
  const int etp = p.expert_tp();
  for (int t = 0; t < std::max(p.tp, etp); ++t) {
    if (t < p.tp) reduce(group(stage, t, true, tasks), Op::DenseGradAllReduce, dense);
    if (t >= etp) continue;
    for (int ep = 0; ep < p.ep; ++ep) {
      reduce(group(stage, t + etp * ep, false, tasks), Op::ExpertGradAllReduce, expert);
    }
  }
}

void GradientReduction::gather_parameters(TrainingTasks& tasks, int stage) {
  auto& reduced = reduced_[static_cast<std::size_t>(stage)];
  for (Reduced& r : reduced) {
    // After the reduce-scatter and each member's optimizer step (its last compute).
    std::vector<TaskId> deps{r.reduce_scatter};
    for (int g : r.members)
      deps.push_back(tasks.last_compute(g));
    const TaskId id =
        tasks.collective(CollectiveKind::AllGather, Op::ParamAllGather, Traffic::DP, Phase::Update,
                         -1, -1, r.members, r.bytes, -1, std::move(deps));
    for (int g : r.members)
      tasks.pending(g).push_back(id);
  }
  reduced.clear();
}

void GradientReduction::reduce_layer(TrainingTasks& tasks, int stage, int layer) {
  reduce_gradients(tasks, stage, layer_dense_params(spec_.model, layer),
                   layer_expert_params(spec_.model, spec_.parallelism.ep, layer));
}

void GradientReduction::reduce_stage(TrainingTasks& tasks, int stage) {
  if (virtual_.mirror(stage) < stage) {
    // DualPipe: the pair's gradients were reduced with the lower stage.
  } else if (spec_.overlap.grad_reduce) {
    reduce_gradients(tasks, stage, stage_embedding_params(spec_.model, spec_.parallelism.pp, stage),
                     0);
  } else {
    reduce_gradients(tasks, stage, stage_dense_params(stage), stage_expert_params(stage));
  }
  tasks.each_gpu(stage, [&](int g, std::size_t, int) {
    auto& from = grad_pending_[static_cast<std::size_t>(g)];
    auto& to = tasks.pending(g);
    to.insert(to.end(), from.begin(), from.end());
    from.clear();
  });
}

}  // namespace mfabric::workload::training
