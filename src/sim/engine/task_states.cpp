#include "sim/engine/task_states.h"

namespace mfabric::sim::engine {

using workload::TaskId;

TaskStates::TaskStates(const workload::TaskGraph& graph) : states_(graph.size()) {
  const std::size_t n = graph.size();
  // Successors in compressed rows: count each task's, then place them.
  std::vector<std::uint32_t> count(n + 1, 0);
  for (TaskId t = 0; t < static_cast<TaskId>(n); ++t) {
    const auto deps = graph.deps(t);
    (*this)[t].waiting = static_cast<std::int32_t>(deps.size());
    for (TaskId d : deps)
      ++count[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t i = 1; i <= n; ++i)
    count[i] += count[i - 1];
  succ_begin_ = count;
  succ_.resize(count[n]);
  for (TaskId t = 0; t < static_cast<TaskId>(n); ++t) {
    for (TaskId d : graph.deps(t))
      succ_[count[static_cast<std::size_t>(d)]++] = t;
  }
}

}  // namespace mfabric::sim::engine
