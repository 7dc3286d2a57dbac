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

struct TaskState {
  Time start = Time::max();
  Time end = Time::max();
  std::int32_t waiting = 0;  // dependencies not finished yet
  workload::TaskId last_dep =
      -1;  // the dependency that finished last (what a ready task waited for)
};

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
    (*this)[id].end = at;
    ++finished_;
  }

  // One dependency fewer for each successor of `id`, in the graph's order; `ready(s, id)` for
  // each successor s that waits for nothing more.
  template <class Ready>
  void release_successors(workload::TaskId id, Ready&& ready) {
    const auto i = static_cast<std::size_t>(id);
    for (std::uint32_t k = succ_begin_[i]; k < succ_begin_[i + 1]; ++k) {
      const workload::TaskId s = succ_[k];
      if (--(*this)[s].waiting == 0) ready(s, id);
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
