#include "sim/engine/run_metrics.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

namespace mfabric::sim::engine {
namespace {

using workload::Task;
using workload::TaskGraph;
using workload::TaskId;
using workload::TaskKind;

int traffic_index(workload::Traffic t) {
  for (std::size_t i = 0; i < kTrafficClasses.size(); ++i) {
    if (kTrafficClasses[i] == t) return static_cast<int>(i);
  }
  return -1;
}

// Communication after a GPU's last compute task (or, on a GPU that never computes, all of it):
// no later compute waits for it, yet the run is not over until it ends, so it is exposed too.
// Summed over GPUs: the length of the union of the intervals of the communication tasks each GPU
// is a member of, from its last compute end on.
Time tail_exposed(const TaskGraph& graph, const TaskStates& tasks, const ComputeStreams& streams) {
  std::vector<std::vector<std::pair<Time, Time>>> intervals(streams.gpus());
  const auto add = [&](int g, Time s, Time e) {
    const Time from = std::max(s, streams.free_since(g));
    if (e > from) intervals[static_cast<std::size_t>(g)].emplace_back(from, e);
  };
  for (TaskId id = 0; id < static_cast<TaskId>(tasks.size()); ++id) {
    const Task& t = graph.task(id);
    const Time s = tasks[id].start();
    const Time e = tasks[id].end();
    if (t.kind == TaskKind::P2P) {
      add(t.gpu(), s, e);
      add(t.peer(), s, e);
    } else if (t.kind == TaskKind::Collective) {
      for (std::int32_t g : graph.group(t.group()))
        add(g, s, e);
    }
  }
  Time total;
  for (auto& list : intervals) {
    std::sort(list.begin(), list.end());
    Time covered_to = Time::zero();
    for (const auto& [from, to] : list) {
      const Time begin = std::max(from, covered_to);
      if (to > begin) total += to - begin;
      covered_to = std::max(covered_to, to);
    }
  }
  return total;
}

// Member-seconds a profiler on each GPU would count for communication task `id`: from the GPU's
// own input being ready (the end of its dependency) to the task's end, so that waiting for the
// slowest member is included. The graphs give a collective one dependency per member (or per
// group of members sharing it), so each dependency stands for members / deps GPUs.
double profiled_member_seconds(const TaskGraph& graph, const TaskStates& tasks, TaskId id,
                               double members) {
  const Time end = tasks[id].end();
  const auto deps = graph.deps(id);
  if (deps.empty()) return (end - tasks[id].start()).seconds() * members;
  double sum = 0;
  for (TaskId d : deps)
    sum += (end - std::min(tasks[d].end(), tasks[id].start())).seconds();
  return sum * members / static_cast<double>(deps.size());
}

// The critical path, walked back from the task that ended last through the dependency each task
// waited for last (TaskState::last_dep): the held collectives on it and their waits.
void critical_path_holds(const TaskStates& tasks, const std::unordered_map<TaskId, Time>& held_for,
                         RunResult& r) {
  if (held_for.empty() || tasks.size() == 0) return;
  TaskId at = 0;
  for (TaskId id = 1; id < static_cast<TaskId>(tasks.size()); ++id) {
    if (tasks[id].end() > tasks[at].end()) at = id;
  }
  for (; at >= 0; at = tasks[at].last_dep()) {
    const auto it = held_for.find(at);
    // A hold released at once (the oracle's) cost nothing.
    if (it == held_for.end() || it->second == Time::zero()) continue;
    ++r.critical_holds;
    r.critical_held_time += it->second;
  }
}

}  // namespace

void summarize_tasks(const TaskGraph& graph, const TaskStates& tasks, const ComputeStreams& streams,
                     const std::unordered_map<TaskId, Time>& held_for, bool record_spans,
                     bool micro_batch_figures, RunResult& r) {
  int iterations = 0;
  for (const Task& t : graph.tasks())
    iterations = std::max(iterations, t.iteration + 1);
  std::vector<Time> first(static_cast<std::size_t>(iterations), Time::max());
  std::vector<Time> last(static_cast<std::size_t>(iterations), Time::zero());
  std::array<double, kTrafficClasses.size()> comm{};
  std::array<double, kTrafficClasses.size()> profiled{};
  const double gpus = std::max(1, graph.job_gpus());
  // Of comm and profiled, the part that tasks of a micro-batch make (micro_batch_figures).
  std::array<double, kTrafficClasses.size()> comm_mb{};
  std::array<double, kTrafficClasses.size()> profiled_mb{};
  // The first stage's GPUs (they run layer 0's backward): their slot in backward_ends, per
  // iteration (-1: not on the first stage).
  std::vector<MicroBatchFigures::BackwardEnds> backward_ends;
  std::vector<int> first_stage_slot;
  if (micro_batch_figures) {
    int micro_batches = 0;
    first_stage_slot.assign(static_cast<std::size_t>(std::max(0, graph.gpus())), -1);
    std::vector<int> first_stage;
    for (const Task& t : graph.tasks()) {
      micro_batches = std::max(micro_batches, t.micro_batch + 1);
      if (t.kind == TaskKind::Compute && t.phase == workload::Phase::Backward && t.layer == 0 &&
          first_stage_slot[static_cast<std::size_t>(t.gpu())] < 0) {
        first_stage_slot[static_cast<std::size_t>(t.gpu())] = static_cast<int>(first_stage.size());
        first_stage.push_back(t.gpu());
      }
    }
    for (int it = 0; it < iterations; ++it) {
      for (int g : first_stage) {
        backward_ends.push_back(
            {it, g, std::vector<Time>(static_cast<std::size_t>(micro_batches), Time::max())});
      }
    }
  }
  const std::size_t first_stage_gpus =
      micro_batch_figures && iterations > 0 ? backward_ends.size() / iterations : 0;
  for (TaskId id = 0; id < static_cast<TaskId>(tasks.size()); ++id) {
    const Task& t = graph.task(id);
    const auto i = static_cast<std::size_t>(t.iteration);
    const Time s = tasks[id].start();
    const Time e = tasks[id].end();
    first[i] = std::min(first[i], s);
    last[i] = std::max(last[i], e);
    r.makespan = std::max(r.makespan, e);
    const int k = traffic_index(t.traffic);
    if (k >= 0) {
      const double members =
          t.kind == TaskKind::P2P ? 2.0 : static_cast<double>(graph.group(t.group()).size());
      const double seconds = (e - s).seconds() * members / gpus;
      const double profiled_seconds = profiled_member_seconds(graph, tasks, id, members) / gpus;
      comm[static_cast<std::size_t>(k)] += seconds;
      profiled[static_cast<std::size_t>(k)] += profiled_seconds;
      if (micro_batch_figures && t.micro_batch >= 0) {
        comm_mb[static_cast<std::size_t>(k)] += seconds;
        profiled_mb[static_cast<std::size_t>(k)] += profiled_seconds;
      }
    }
    if (micro_batch_figures && t.kind == TaskKind::Compute &&
        t.phase == workload::Phase::Backward && t.micro_batch >= 0 &&
        first_stage_slot[static_cast<std::size_t>(t.gpu())] >= 0) {
      Time& end = backward_ends[i * first_stage_gpus +
                                static_cast<std::size_t>(
                                    first_stage_slot[static_cast<std::size_t>(t.gpu())])]
                      .ends[static_cast<std::size_t>(t.micro_batch)];
      end = end == Time::max() ? e : std::max(end, e);
    }
    if (record_spans) r.spans.push_back(TaskSpan{id, s, e});
  }
  for (int i = 0; i < iterations; ++i) {
    r.iteration_times.push_back(last[static_cast<std::size_t>(i)] -
                                first[static_cast<std::size_t>(i)]);
  }
  const double its = std::max(1, iterations);
  for (std::size_t k = 0; k < comm.size(); ++k) {
    r.comm_time[k] = Time::from_seconds(comm[k] / its);
    r.comm_time_profiled[k] = Time::from_seconds(profiled[k] / its);
  }
  if (micro_batch_figures) {
    MicroBatchFigures f;
    f.first_stage_backward_ends = std::move(backward_ends);
    for (std::size_t k = 0; k < comm.size(); ++k) {
      f.comm_time[k] = Time::from_seconds(comm_mb[k] / its);
      f.comm_time_profiled[k] = Time::from_seconds(profiled_mb[k] / its);
    }
    r.micro_batch_figures = std::move(f);
  }
  double exposed = 0;
  for (std::size_t g = 0; g < streams.gpus(); ++g)
    exposed += streams.exposed(static_cast<int>(g)).seconds();
  exposed += tail_exposed(graph, tasks, streams).seconds();
  r.exposed_comm = Time::from_seconds(exposed / gpus / its);
  if (r.micro_batch_figures) {
    double of_micro_batches = 0;
    for (std::size_t g = 0; g < streams.gpus(); ++g)
      of_micro_batches += streams.exposed_of_micro_batches(static_cast<int>(g)).seconds();
    r.micro_batch_figures->exposed_comm = Time::from_seconds(of_micro_batches / gpus / its);
  }
  critical_path_holds(tasks, held_for, r);
}

}  // namespace mfabric::sim::engine
