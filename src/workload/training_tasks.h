// The training job's task graph while it is built (training.cpp), and what every part of the
// builder adds its tasks through: a task stamped with its place in the iteration, its
// dependencies sorted and without repeats, each GPU's compute stream in schedule order, the
// dependencies the stream's next compute waits for besides, and under overlap the tasks that
// stand for each other (a compute task and the TP all-reduce pipelined with it). Also the
// geometry of a pipeline stage's GPUs. Internal to the builder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workload/parallelism.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::workload::training {

class TrainingTasks {
 public:
  TrainingTasks(const ParallelismSpec& p, const RankLayout& layout);

  TaskGraph& graph() { return graph_; }
  TaskGraph take_graph() { return std::move(graph_); }
  // The iteration the tasks added from now on belong to.
  void set_iteration(int it) { iteration_ = it; }
  int iteration() const { return iteration_; }

  const RankLayout& layout() const { return layout_; }

  // --- a stage's GPUs, indexed locally (parallelism.h: tp + TP * (cp + CP * dp), which is
  // etp + ETP * (ep + EP * edp) in the experts' view) ---
  int stage_gpus() const { return layout_.stage_gpus(); }
  int gpu(int stage, int local) const { return layout_.gpu(stage, local); }
  // The EP rank of a local GPU.
  int ep_of(int local) const { return local / p_.expert_tp() % p_.ep; }
  // Runs `fn(g, local_index, ep)` over the stage's GPUs in local order.
  template <class F>
  void each_gpu(int stage, F&& fn) const {
    for (int l = 0; l < stage_gpus(); ++l)
      fn(gpu(stage, l), static_cast<std::size_t>(l), ep_of(l));
  }

  // --- adding tasks ---
  // Compute on `g` after its data dependency `after` (-1: none), the GPU's previous compute task
  // (the compute stream runs tasks in schedule order) and the stream's pending dependencies.
  TaskId compute(int g, TaskId after, Op op, Phase phase, int layer, int mb, Time d);
  TaskId collective(CollectiveKind kind, Op op, Traffic traffic, Phase phase, int layer, int mb,
                    std::vector<std::int32_t> members, Bytes bytes, std::int32_t matrix,
                    std::vector<TaskId> deps);
  // A pipeline-parallel transfer of `bytes` from GPU src to dst after task `after`.
  TaskId p2p(int src, int dst, Op op, Phase phase, int mb, Bytes bytes, TaskId after);

  // --- overlap ---
  // With overlap.tp_comm, compute task `x` and TP all-reduce `all_reduce` run pipelined: x stands
  // for both, and whatever depends on x depends on the all-reduce too (also_overlapped).
  void pipeline_with(TaskId x, TaskId all_reduce);
  // Adds to `deps` the all-reduce pipelined with task x, if there is one.
  void also_overlapped(TaskId x, std::vector<TaskId>& deps) const {
    if (x < 0 || static_cast<std::size_t>(x) >= overlapped_tp_.size()) return;
    const TaskId ar = overlapped_tp_[static_cast<std::size_t>(x)];
    if (ar >= 0) deps.push_back(ar);
  }

  // --- a GPU's compute stream ---
  TaskId last_compute(int g) const { return last_compute_[static_cast<std::size_t>(g)]; }
  // What GPU g's next compute task waits for besides its data and its stream (handed over once).
  std::vector<TaskId>& pending(int g) { return pending_[static_cast<std::size_t>(g)]; }

 private:
  // A task of `kind` doing `op`, stamped with where it belongs in the iteration.
  Task stamped(TaskKind kind, Op op, Phase phase, int layer, int mb) const;
  TaskId add(const Task& t, std::vector<TaskId>& deps);

  ParallelismSpec p_;
  const RankLayout& layout_;
  TaskGraph graph_;
  int iteration_ = 0;
  std::vector<TaskId> last_compute_;
  // With overlap.tp_comm: per task id, the TP all-reduce pipelined with that compute task (-1:
  // none).
  std::vector<TaskId> overlapped_tp_;
  std::vector<std::vector<TaskId>> pending_;
};

}  // namespace mfabric::workload::training
