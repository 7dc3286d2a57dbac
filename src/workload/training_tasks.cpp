#include "workload/training_tasks.h"

#include <algorithm>
#include <utility>

namespace mfabric::workload::training {

TrainingTasks::TrainingTasks(const ParallelismSpec& p, const RankLayout& layout)
    : p_(p),
      layout_(layout),
      graph_(p.gpus()),
      last_compute_(static_cast<std::size_t>(p.gpus()), -1),
      pending_(static_cast<std::size_t>(p.gpus())) {}

TaskId TrainingTasks::add(const Task& t, std::vector<TaskId>& deps) {
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  if (!deps.empty() && deps.front() < 0) deps.erase(deps.begin());
  return graph_.add(t, deps);
}

Task TrainingTasks::stamped(TaskKind kind, Op op, Phase phase, int layer, int mb) const {
  Task t;
  t.kind = kind;
  t.op = op;
  t.phase = phase;
  t.layer = static_cast<std::int16_t>(layer);
  t.micro_batch = static_cast<std::int16_t>(mb);
  t.iteration = static_cast<std::int16_t>(iteration_);
  return t;
}

TaskId TrainingTasks::compute(int g, TaskId after, Op op, Phase phase, int layer, int mb, Time d) {
  std::vector<TaskId> deps{after, last_compute_[static_cast<std::size_t>(g)]};
  also_overlapped(after, deps);
  auto& pend = pending_[static_cast<std::size_t>(g)];
  deps.insert(deps.end(), pend.begin(), pend.end());
  pend.clear();
  Task t = stamped(TaskKind::Compute, op, phase, layer, mb);
  t.set_gpu(g);
  t.set_duration(d);
  const TaskId id = add(t, deps);
  last_compute_[static_cast<std::size_t>(g)] = id;
  return id;
}

TaskId TrainingTasks::collective(CollectiveKind kind, Op op, Traffic traffic, Phase phase,
                                 int layer, int mb, std::vector<std::int32_t> members, Bytes bytes,
                                 std::int32_t matrix, std::vector<TaskId> deps) {
  Task t = stamped(TaskKind::Collective, op, phase, layer, mb);
  t.collective = kind;
  t.traffic = traffic;
  t.set_group(graph_.add_group(std::move(members)));
  t.set_matrix(matrix);
  t.set_bytes(bytes);
  return add(t, deps);
}

TaskId TrainingTasks::p2p(int src, int dst, Op op, Phase phase, int mb, Bytes bytes, TaskId after) {
  Task t = stamped(TaskKind::P2P, op, phase, /*layer=*/-1, mb);
  t.traffic = Traffic::PP;
  t.set_gpu(src);
  t.set_peer(dst);
  t.set_bytes(bytes);
  std::vector<TaskId> deps{after};
  also_overlapped(after, deps);
  return add(t, deps);
}

void TrainingTasks::pipeline_with(TaskId x, TaskId all_reduce) {
  const auto i = static_cast<std::size_t>(x);
  if (overlapped_tp_.size() <= i) overlapped_tp_.resize(i + 1, -1);
  overlapped_tp_[i] = all_reduce;
}

}  // namespace mfabric::workload::training
