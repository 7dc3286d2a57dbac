// The engine's per-task record and the release of dependencies: when each task started and
// ended, how many dependencies it still waits for and which one it waited for last, and its
// successors. The task graph stores predecessors; the engine walks successors as tasks finish,
// so they are inverted once, here, into compressed rows. One record per task holds what the run
// reads and writes together (one cache line serves several tasks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

// 20 bytes (a hundred million of them at 131,072 GPUs): a task's dependency count is needed
// only until it starts, so it shares the start's field, and the record is packed to 4 bytes
// (x86 reads the unaligned times at no cost unless one crosses a cache line).
#pragma pack(push, 4)
class TaskState {
 public:
  // Time::max() until the task starts.
  Time start() const { return started() ? Time::picoseconds(start_or_waiting_) : Time::max(); }
  // Time::max() until the task ends.
  Time end() const { return Time::picoseconds(end_); }
  bool started() const { return start_or_waiting_ >= 0; }
  // Dependencies not finished yet (0 once the task started).
  std::int32_t waiting() const {
    return started() ? 0 : static_cast<std::int32_t>(-start_or_waiting_ - 1);
  }
  // The dependency that finished last (what a ready task waited for); -1 for none.
  workload::TaskId last_dep() const { return last_dep_; }

  void set_waiting(std::int32_t n) { start_or_waiting_ = -std::int64_t{n} - 1; }
  // One dependency fewer; true when it waits for none.
  bool release_one() { return ++start_or_waiting_ == -1; }
  void set_start(Time t) { start_or_waiting_ = t.ps(); }
  void set_end(Time t) { end_ = t.ps(); }
  void set_last_dep(workload::TaskId d) { last_dep_ = d; }

 private:
  // >= 0: the start in picoseconds; otherwise -(dependencies not finished) - 1.
  std::int64_t start_or_waiting_ = -1;
  std::int64_t end_ = Time::max().ps();
  workload::TaskId last_dep_ = -1;
};
#pragma pack(pop)
static_assert(sizeof(TaskState) == 20);

class TaskStates {
 public:
  // Every task waiting for all its dependencies, none started.
  explicit TaskStates(const workload::TaskGraph& graph);

  std::size_t size() const { return states_.size(); }
  std::size_t finished() const { return finished_; }
  TaskState& operator[](workload::TaskId id) { return states_[static_cast<std::size_t>(id)]; }
  const TaskState& operator[](workload::TaskId id) const {
    return states_[static_cast<std::size_t>(id)];
  }

  // Task `id` ended at `at`.
  void finish(workload::TaskId id, Time at) {
    (*this)[id].set_end(at);
    ++finished_;
  }

  // One dependency fewer for each successor of `id`, in the graph's order; `ready(s, id)` for
  // each successor s that waits for nothing more.
  template <class Ready>
  void release_successors(workload::TaskId id, Ready&& ready) {
    const auto i = static_cast<std::size_t>(id);
    for (std::uint32_t k = succ_begin_[i]; k < succ_begin_[i + 1]; ++k) {
      const workload::TaskId s = succ_[k];
      if ((*this)[s].release_one()) ready(s, id);
    }
  }

 private:
  std::vector<TaskState> states_;
  // Successors of task t: succ_[succ_begin_[t], succ_begin_[t + 1]).
  std::vector<std::uint32_t> succ_begin_;
  std::vector<workload::TaskId> succ_;
  std::size_t finished_ = 0;
};

}  // namespace mfabric::sim::engine
