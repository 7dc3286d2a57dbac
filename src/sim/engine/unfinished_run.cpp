#include "sim/engine/unfinished_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "net/backend_stats.h"

namespace mfabric::sim::engine {
namespace {

using workload::TaskId;

// Why the stalled transfer `st` cannot finish.
std::string stall_reason(const fabric::Topology& topology, const net::StalledTransfer& st) {
  if (st.why == net::StalledTransfer::Why::Paused) {
    return "its circuit was torn down and it was never resumed on a new route";
  }
  if (st.why == net::StalledTransfer::Why::LinkDown) {
    const bool circuit = static_cast<std::size_t>(st.down_link) >= topology.links().size();
    return st.down_link >= 0 && circuit
               ? fmt::format("circuit link {} is down and no other route is up", st.down_link)
           : st.down_link >= 0
               ? fmt::format("link {} ({} - {}) is down and no other route is up", st.down_link,
                             topology.name(topology.link(st.down_link).a),
                             topology.name(topology.link(st.down_link).b))
               : std::string("its route is down");
  }
  return fmt::format("at {} it would end {}", to_string(st.rate), kPastTimeRange);
}

}  // namespace

Error unfinished_error(const workload::TaskGraph& graph, const fabric::Topology& topology,
                       const net::Backend& backend, const TaskStates& tasks,
                       const std::unordered_map<TaskId, collective::CollectiveRequest>& held) {
  const std::size_t n = tasks.size();
  const std::size_t left = n - tasks.finished();
  const std::string head =
      fmt::format("the run cannot finish: {} of {} tasks never completed", left, n);
  if (!held.empty()) {
    const TaskId id = std::min_element(held.begin(), held.end(), [](const auto& a, const auto& b) {
                        return a.first < b.first;
                      })->first;
    return Error("", "",
                 fmt::format("{}; task {} ({}) was held by the fabric controller and never "
                             "released ({} held in all)",
                             head, id, graph.label(id), held.size()));
  }
  const net::BackendStats* stats = backend.stats();
  const std::vector<net::StalledTransfer> stalled =
      stats == nullptr ? std::vector<net::StalledTransfer>{} : stats->stalled_transfers(1);
  if (!stalled.empty()) {
    const net::StalledTransfer& st = stalled.front();
    std::string task;
    for (TaskId id = 0; id < static_cast<TaskId>(n); ++id) {
      if (tasks[id].start() != Time::max() && tasks[id].end() == Time::max() &&
          graph.task(id).kind != workload::TaskKind::Compute) {
        task = fmt::format("task {} ({}) is waiting for a transfer that cannot finish: ", id,
                           graph.label(id));
        break;
      }
    }
    return Error(
        "", "",
        fmt::format("{}; {}{} -> {} with {} left: {}", head, task, topology.name(st.src),
                    topology.name(st.dst), to_string(st.remaining), stall_reason(topology, st)));
  }
  // No transfer is stuck: what is left waits for dependencies that never finish.
  for (TaskId id = 0; id < static_cast<TaskId>(n); ++id) {
    if (tasks[id].end() != Time::max()) continue;
    return Error("", "",
                 fmt::format("{}; the first, task {} ({}), waits for {} dependencies that never "
                             "finish (a dependency cycle)",
                             head, id, graph.label(id), tasks[id].waiting()));
  }
  return Error("", "", head);
}

}  // namespace mfabric::sim::engine
