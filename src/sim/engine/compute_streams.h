// The GPUs' compute streams: each GPU runs its compute tasks one at a time, in the order they
// become ready (the task graph already orders them by schedule), and counts the time it sat idle
// waiting for communication (RunResult::exposed_comm). The ends of the running tasks are the
// engine's compute events, earliest first and, at one time, in the order the tasks started.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "core/units.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

class ComputeStreams {
 public:
  // A running task's end: a compute event.
  struct End {
    Time time;
    std::uint64_t seq;
    workload::TaskId task;
    bool operator>(const End& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  explicit ComputeStreams(std::size_t gpus) : gpus_(gpus) {}

  std::size_t gpus() const { return gpus_.size(); }

  // Queues ready task `id` on GPU g; true when the GPU is idle, so that it should start one.
  bool queue(int g, workload::TaskId id) {
    Stream& s = stream(g);
    s.ready.push_back(id);
    return !s.busy;
  }
  // Takes the next task queued on GPU g off its queue; -1 when none is queued.
  workload::TaskId take_next(int g) {
    Stream& s = stream(g);
    if (s.ready.empty()) return -1;
    const workload::TaskId id = s.ready.front();
    s.ready.pop_front();
    return id;
  }
  // GPU g, about to start a task at `t` that waited last for a communication task lasting
  // `comm`: its idle time before `t` is exposed communication, but only as long as that
  // communication took (waiting for a pipeline neighbour's compute, a bubble, before the
  // transfer could even start is not communication). `of_micro_batch`: the task belongs to a
  // micro-batch (the wait is also counted in exposed_of_micro_batches).
  void expose_wait(int g, Time t, Time comm, bool of_micro_batch = false) {
    Stream& s = stream(g);
    if (t <= s.free_since) return;
    const Time wait = std::min(t - s.free_since, comm);
    s.exposed += wait;
    if (of_micro_batch) s.exposed_of_micro_batches += wait;
  }
  // GPU g runs a task from now on (set before anything else can queue on it).
  void set_busy(int g) { stream(g).busy = true; }
  bool busy(int g) const { return gpus_[static_cast<std::size_t>(g)].busy; }
  // The task that GPU g runs ends at `end`.
  void schedule_end(workload::TaskId id, Time end) { ends_.push(End{end, seq_++, id}); }
  // GPU g's task ended at `at`: it is idle from then on.
  void ended(int g, Time at) {
    Stream& s = stream(g);
    s.busy = false;
    s.free_since = at;
  }

  // The earliest end of a running task, if any.
  std::optional<Time> next_end() const {
    return ends_.empty() ? std::nullopt : std::optional<Time>(ends_.top().time);
  }
  End pop_end() {
    const End e = ends_.top();
    ends_.pop();
    return e;
  }

  // When GPU g last became idle (its last compute's end), and its exposed communication.
  Time free_since(int g) const { return gpus_[static_cast<std::size_t>(g)].free_since; }
  Time exposed(int g) const { return gpus_[static_cast<std::size_t>(g)].exposed; }
  // Of exposed(g), the waits of tasks of a micro-batch.
  Time exposed_of_micro_batches(int g) const {
    return gpus_[static_cast<std::size_t>(g)].exposed_of_micro_batches;
  }

 private:
  struct Stream {
    std::deque<workload::TaskId> ready;
    bool busy = false;
    Time free_since;
    Time exposed;
    Time exposed_of_micro_batches;
  };
  Stream& stream(int g) { return gpus_[static_cast<std::size_t>(g)]; }

  std::vector<Stream> gpus_;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  std::uint64_t seq_ = 0;
};

}  // namespace mfabric::sim::engine
