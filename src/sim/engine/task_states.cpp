#include "sim/engine/task_states.h"

namespace mfabric::sim::engine {

using workload::TaskId;

TaskStates::TaskStates(const workload::TaskGraph& graph) : states_(graph.size()) {
  const std::size_t n = graph.size();
  // Successors in compressed rows, built in succ_begin_ itself (no second array of n: at a
  // hundred million tasks each is 400 MB of peak memory): count each task's successors, sum the
  // counts into each row's end, then place each successor at its row's end, moving the end
  // back, which leaves it at the row's beginning.
  succ_begin_.assign(n + 1, 0);
  for (TaskId t = 0; t < static_cast<TaskId>(n); ++t) {
    const auto deps = graph.deps(t);
    (*this)[t].set_waiting(static_cast<std::int32_t>(deps.size()));
    for (TaskId d : deps)
      ++succ_begin_[static_cast<std::size_t>(d)];
  }
  for (std::size_t i = 1; i < n; ++i)
    succ_begin_[i] += succ_begin_[i - 1];
  if (n > 0) succ_begin_[n] = succ_begin_[n - 1];
  succ_.resize(succ_begin_[n]);
  // From the last task back, so that each row keeps the graph's order.
  for (TaskId t = static_cast<TaskId>(n) - 1; t >= 0; --t) {
    for (TaskId d : graph.deps(t))
      succ_[--succ_begin_[static_cast<std::size_t>(d)]] = t;
  }
}

}  // namespace mfabric::sim::engine
