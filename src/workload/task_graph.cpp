#include "workload/task_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace mfabric::workload {

const char* to_string(TaskKind k) {
  switch (k) {
    case TaskKind::Compute:
      return "compute";
    case TaskKind::Collective:
      return "collective";
    case TaskKind::P2P:
      return "p2p";
  }
  return "?";
}

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce:
      return "all-reduce";
    case CollectiveKind::AllGather:
      return "all-gather";
    case CollectiveKind::ReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::AllToAll:
      return "all-to-all";
    case CollectiveKind::Broadcast:
      return "broadcast";
    case CollectiveKind::Barrier:
      return "barrier";
  }
  return "?";
}

const char* to_string(Traffic t) {
  switch (t) {
    case Traffic::None:
      return "none";
    case Traffic::TP:
      return "tp";
    case Traffic::EP:
      return "ep";
    case Traffic::DP:
      return "dp";
    case Traffic::PP:
      return "pp";
    case Traffic::Other:
      return "other";
    case Traffic::CP:
      return "cp";
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward:
      return "fwd";
    case Phase::Backward:
      return "bwd";
    case Phase::Update:
      return "update";
    case Phase::Other:
      return "other";
  }
  return "?";
}

const char* to_string(Op o) {
  switch (o) {
    case Op::Attention:
      return "attention";
    case Op::Router:
      return "router";
    case Op::Experts:
      return "experts";
    case Op::SharedExperts:
      return "shared-experts";
    case Op::DenseFfn:
      return "dense-ffn";
    case Op::LmHead:
      return "lm-head";
    case Op::TpAllReduce:
      return "tp-all-reduce";
    case Op::Dispatch:
      return "dispatch";
    case Op::Combine:
      return "combine";
    case Op::PpActivation:
      return "pp-activation";
    case Op::PpGradient:
      return "pp-gradient";
    case Op::DenseGradAllReduce:
      return "dense-grad-all-reduce";
    case Op::ExpertGradAllReduce:
      return "expert-grad-all-reduce";
    case Op::Optimizer:
      return "optimizer";
    case Op::Generic:
      return "generic";
    case Op::Permute:
      return "permute";
    case Op::ParamAllGather:
      return "param-all-gather";
    case Op::CpKeyValues:
      return "cp-key-values";
    case Op::CpKeyValueGrads:
      return "cp-key-value-grads";
  }
  return "?";
}

std::int64_t ByteMatrix::off_diagonal_sum() const {
  std::int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      sum += i == j ? 0 : at(i, j);
  }
  return sum;
}

ByteMatrix ByteMatrix::transposed() const {
  ByteMatrix t(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      t.at(j, i) = at(i, j);
  }
  return t;
}

namespace {

void check_kind(bool ok, const char* field, TaskKind kind) {
  if (!ok) {
    throw std::logic_error(
        fmt::format("Task::set_{}: a {} task has no {}", field, to_string(kind), field));
  }
}

}  // namespace

void Task::set_gpu(std::int32_t g) {
  check_kind(kind != TaskKind::Collective, "gpu", kind);
  gpu_or_group = g;
}
void Task::set_peer(std::int32_t g) {
  check_kind(kind == TaskKind::P2P, "peer", kind);
  peer_or_matrix = g;
}
void Task::set_group(std::int32_t g) {
  check_kind(kind == TaskKind::Collective, "group", kind);
  gpu_or_group = g;
}
void Task::set_matrix(std::int32_t m) {
  check_kind(kind == TaskKind::Collective, "matrix", kind);
  peer_or_matrix = m;
}
void Task::set_duration(Time d) {
  check_kind(kind == TaskKind::Compute, "duration", kind);
  amount = d.ps();
}
void Task::set_bytes(Bytes b) {
  check_kind(kind != TaskKind::Compute, "bytes", kind);
  amount = b.count();
}

TaskId TaskGraph::add(const Task& task, std::span<const TaskId> deps) {
  const auto id = static_cast<TaskId>(tasks_.size());
  for (TaskId d : deps) {
    if (d < 0 || d >= id) {
      throw std::logic_error(
          fmt::format("TaskGraph::add: dependency {} of task {} does not exist", d, id));
    }
  }
  tasks_.push_back(task);
  dep_ids_.insert(dep_ids_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(dep_ids_.size()));
  return id;
}

void TaskGraph::set_not_before(TaskId id, Time t) {
  if (id < 0 || static_cast<std::size_t>(id) >= tasks_.size()) {
    throw std::logic_error(fmt::format("TaskGraph::set_not_before: task {} does not exist", id));
  }
  if (task(id).kind == TaskKind::Compute || t < Time::zero()) {
    throw std::logic_error(
        fmt::format("TaskGraph::set_not_before: task {} is compute or the time {} is negative", id,
                    to_string(t)));
  }
  const auto i = static_cast<std::size_t>(id);
  if (not_before_.size() <= i) not_before_.resize(i + 1, Time::zero());
  not_before_[i] = t;
}

void TaskGraph::set_source_id(TaskId id, std::int64_t source_id) {
  if (id < 0 || static_cast<std::size_t>(id) >= tasks_.size() || source_id < 0) {
    throw std::logic_error(
        fmt::format("TaskGraph::set_source_id: task {} or id {} is invalid", id, source_id));
  }
  const auto i = static_cast<std::size_t>(id);
  if (source_id_.size() <= i) source_id_.resize(i + 1, -1);
  source_id_[i] = source_id;
}

std::int32_t TaskGraph::add_group(std::vector<std::int32_t> gpus) {
  auto it = group_index_.find(gpus);
  if (it != group_index_.end()) return it->second;
  const auto id = static_cast<std::int32_t>(groups_.size());
  group_index_.emplace(gpus, id);
  groups_.push_back(std::move(gpus));
  return id;
}

void TaskGraph::move_gpus(std::span<const std::int32_t> gpu_of, int gpus) {
  if (gpu_of.size() != static_cast<std::size_t>(gpus_)) {
    throw std::invalid_argument(
        fmt::format("move_gpus: {} entries for {} GPUs", gpu_of.size(), gpus_));
  }
  std::vector<bool> taken(static_cast<std::size_t>(std::max(gpus, 0)), false);
  for (const std::int32_t g : gpu_of) {
    if (g < 0 || g >= gpus || taken[static_cast<std::size_t>(g)]) {
      throw std::invalid_argument(
          fmt::format("move_gpus: GPU {} is outside 0..{} or taken twice", g, gpus - 1));
    }
    taken[static_cast<std::size_t>(g)] = true;
  }
  const auto moved = [&](std::int32_t g) {
    return g < 0 ? g : gpu_of[static_cast<std::size_t>(g)];
  };
  for (Task& t : tasks_) {
    if (t.kind != TaskKind::Collective) t.set_gpu(moved(t.gpu()));
    if (t.kind == TaskKind::P2P) t.set_peer(moved(t.peer()));
  }
  group_index_.clear();
  for (std::size_t k = 0; k < groups_.size(); ++k) {
    for (std::int32_t& g : groups_[k])
      g = moved(g);
    group_index_.emplace(groups_[k], static_cast<std::int32_t>(k));
  }
  job_gpus_ = job_gpus();
  gpus_ = gpus;
}

std::int32_t TaskGraph::add_matrix(ByteMatrix m) {
  matrices_.push_back(std::move(m));
  return static_cast<std::int32_t>(matrices_.size() - 1);
}

std::span<const TaskId> TaskGraph::deps(TaskId id) const {
  const auto i = static_cast<std::size_t>(id);
  return std::span<const TaskId>(dep_ids_.data() + dep_begin_[i],
                                 dep_begin_[i + 1] - dep_begin_[i]);
}

std::string TaskGraph::label(TaskId id) const {
  const Task& t = task(id);
  std::string where = fmt::format("it{}", t.iteration);
  if (t.layer >= 0) where += fmt::format(" L{}", t.layer);
  if (t.micro_batch >= 0) where += fmt::format(" mb{}", t.micro_batch);
  switch (t.kind) {
    case TaskKind::Compute:
      return fmt::format("{} {} {} (gpu {}, {})", where, to_string(t.phase), to_string(t.op),
                         t.gpu(), to_string(t.duration()));
    case TaskKind::Collective:
      return fmt::format("{} {} {} ({} {}, {} GPUs, {})", where, to_string(t.phase),
                         to_string(t.op), to_string(t.traffic), to_string(t.collective),
                         group(t.group()).size(), to_string(t.bytes()));
    case TaskKind::P2P:
      return fmt::format("{} {} {} ({} {} -> {}, {})", where, to_string(t.phase), to_string(t.op),
                         to_string(t.traffic), t.gpu(), t.peer(), to_string(t.bytes()));
  }
  return where;
}

std::vector<Time> compute_time_per_gpu(const TaskGraph& graph) {
  std::vector<Time> busy(static_cast<std::size_t>(std::max(0, graph.gpus())), Time::zero());
  for (const Task& t : graph.tasks()) {
    if (t.kind != TaskKind::Compute) continue;
    // Saturates: a graph that was never run may hold durations whose sum no Time holds (the
    // engine refuses to run it; a summary still reads it).
    Time& b = busy[static_cast<std::size_t>(t.gpu())];
    b = t.duration() > Time::max() - b ? Time::max() : b + t.duration();
  }
  return busy;
}

}  // namespace mfabric::workload
