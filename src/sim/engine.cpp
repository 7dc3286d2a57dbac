#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/error.h"
#include "net/backend_stats.h"
#include "net/link_timeline.h"
#include "net/packet_report.h"
#include "net/router.h"
#include "sim/engine/collective_steps.h"
#include "sim/engine/compute_streams.h"
#include "sim/engine/run_metrics.h"
#include "sim/engine/task_states.h"
#include "sim/engine/timed_events.h"
#include "sim/engine/transfers.h"
#include "sim/engine/unfinished_run.h"

namespace mfabric::sim {

using engine::ComputeStreams;
using engine::kPastTimeRange;
using engine::on_wire;
using engine::summarize_tasks;
using engine::task_flow_hash;
using engine::TimedEvents;
using engine::unfinished_error;
using workload::Task;
using workload::TaskGraph;
using workload::TaskId;
using workload::TaskKind;

Time RunResult::mean_iteration_time() const {
  if (iteration_times.empty()) return Time::zero();
  std::int64_t sum = 0;
  for (Time t : iteration_times)
    sum += t.ps();
  return Time::picoseconds(sum / static_cast<std::int64_t>(iteration_times.size()));
}

std::uint64_t flow_salt_of_seed(std::uint64_t seed) {
  return net::mix_hash(seed) ^ net::mix_hash(1);
}

fabric::NodeId gpu_node(const fabric::Topology& topology, int g) {
  const int per_server = topology.cluster().gpus_per_server;
  return topology.gpu(g / per_server, g % per_server);
}

namespace {

// The engine's event loop and the hub of its parts (engine/): per-GPU compute streams
// (ComputeStreams), collectives lowered and stepped through (CollectiveSteps), transfers on the
// network (TaskTransfers), dependencies released as tasks finish (TaskStates), a controller's
// timed events (TimedEvents); the figures are read at the end (summarize_tasks).
class Executor final : public EngineContext {
 public:
  Executor(const TaskGraph& graph, const fabric::Topology& topology, net::Backend& backend,
           const EngineOptions& options)
      : graph_(graph),
        topology_(topology),
        backend_(backend),
        options_(options),
        tasks_(graph),
        streams_(static_cast<std::size_t>(graph.gpus())),
        collectives_(options.algorithms, backend, options.failed_nodes),
        transfers_(backend, options.record_flows, options.micro_batch_figures ? &graph : nullptr),
        gpu_nodes_(static_cast<std::size_t>(graph.gpus())) {
    const int available = topology.count(fabric::NodeKind::Gpu);
    if (graph.gpus() > available) {
      throw Error(fmt::format("the workload needs {} GPUs but fabric {} has {} ({} servers x {})",
                              graph.gpus(), topology.spec(), available, topology.cluster().servers,
                              topology.cluster().gpus_per_server));
    }
    for (int g = 0; g < graph.gpus(); ++g) {
      gpu_nodes_[static_cast<std::size_t>(g)] = gpu_node(topology, g);
    }
  }

  RunResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    if (options_.timeline) net::require_timeline(backend_).record_timeline(*options_.timeline);
    if (options_.controller != nullptr) options_.controller->attach(*this);
    for (TaskId t = 0; t < static_cast<TaskId>(tasks_.size()); ++t) {
      if (tasks_[t].waiting() == 0) make_ready(t, -1);
    }
    // Three event sources; at equal times the network goes first, then compute, then the
    // controller's timed events.
    while (true) {
      const std::optional<Time> net = backend_.next_event_time();
      const std::optional<Time> compute = streams_.next_end();
      const std::optional<Time> timer = timers_.next_time();
      if (!net && !compute && !timer) break;
      const auto not_after = [](const std::optional<Time>& a, const std::optional<Time>& b) {
        return a && (!b || *a <= *b);
      };
      if (not_after(net, compute) && not_after(net, timer)) {
        backend_.advance(*net);
        drain_network_completions();
        continue;
      }
      if (not_after(compute, timer)) {
        const ComputeStreams::End done = streams_.pop_end();
        backend_.advance(done.time);
        ++events_;
        finish_compute(done.task, done.time);
        continue;
      }
      TimedEvents::Event event = timers_.pop();
      backend_.advance(event.time);
      ++events_;
      event.fn();
    }
    if (tasks_.finished() != tasks_.size()) {
      throw unfinished_error(graph_, topology_, backend_, tasks_, collectives_.held());
    }
    RunResult r = summarize();
    r.wall_time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return r;
  }

  // --- EngineContext, for the controller ---
  Time now() const override { return backend_.now(); }
  void at(Time t, std::function<void()> fn) override {
    if (t < now()) {
      throw std::logic_error(fmt::format("engine: event scheduled at {} before now ({})",
                                         to_string(t), to_string(now())));
    }
    timers_.push(t, std::move(fn));
  }
  void release(TaskId id) override {
    const collective::CollectiveRequest request = collectives_.release(id);
    collectives_.held_for(id, now() - tasks_[id].start());
    lower_and_start(id, request);
  }
  net::Backend& backend() override { return backend_; }

 private:
  std::uint64_t flow_hash(TaskId id) const {
    const std::vector<FlowHashShift>& shifts = options_.flow_hash_shifts;
    std::int64_t hashed = id;
    if (!shifts.empty()) {
      const auto after =
          std::upper_bound(shifts.begin(), shifts.end(), id,
                           [](TaskId i, const FlowHashShift& s) { return i < s.from; });
      if (after != shifts.begin()) hashed += std::prev(after)->by;
    }
    return task_flow_hash(hashed, options_.flow_salt);
  }

  void make_ready(TaskId id, TaskId last_dep) {
    const Task& t = graph_.task(id);
    tasks_[id].set_last_dep(last_dep);
    if (t.kind == TaskKind::Compute) {
      if (streams_.queue(t.gpu(), id)) start_next_compute(t.gpu());
      return;
    }
    // Traffic with start times (connection matrices) waits for its time.
    if (graph_.has_start_times()) {
      const Time not_before = graph_.not_before(id);
      if (not_before > now()) {
        at(not_before, [this, id] { start_communication(id); });
        return;
      }
    }
    start_communication(id);
  }

  void start_communication(TaskId id) {
    const Task& t = graph_.task(id);
    switch (t.kind) {
      case TaskKind::Compute:  // make_ready() queues compute on its GPU
        break;
      case TaskKind::Collective:
        start_collective(id);
        break;
      case TaskKind::P2P: {
        tasks_[id].set_start(now());
        net::Transfer tr;
        tr.src = gpu_nodes_[static_cast<std::size_t>(t.gpu())];
        tr.dst = gpu_nodes_[static_cast<std::size_t>(t.peer())];
        tr.size = t.bytes();
        tr.flow_hash = flow_hash(id);
        ++events_;
        const workload::CollectiveCost& cost = options_.collective_costs.p2p;
        if (cost.overhead > Time::zero()) {
          at(now() + cost.overhead,
             [this, id, tr, &cost] { transfers_.start(id, on_wire(tr, cost)); });
        } else {
          transfers_.start(id, on_wire(tr, cost));
        }
        break;
      }
    }
  }

  void start_next_compute(int g) {
    const TaskId id = streams_.take_next(g);
    if (id < 0) return;
    const Time t = now();
    // Idle time before this task is exposed communication when what it waited for last was a
    // communication task (ComputeStreams::expose_wait).
    const TaskId dep = tasks_[id].last_dep();
    if (dep >= 0 && graph_.task(dep).kind != TaskKind::Compute) {
      streams_.expose_wait(g, t, tasks_[dep].end() - tasks_[dep].start(),
                           graph_.task(id).micro_batch >= 0);
    }
    streams_.set_busy(g);
    tasks_[id].set_start(t);
    if (options_.controller != nullptr) options_.controller->compute_started(id);
    const Time duration = graph_.task(id).duration();
    if (duration < Time::zero() || duration > Time::max() - t) {
      throw Error("", "",
                  fmt::format("task {} ({}) lasts {} from {}: {}", id, graph_.label(id),
                              to_string(duration), to_string(t),
                              duration < Time::zero() ? "a negative duration" : kPastTimeRange));
    }
    streams_.schedule_end(id, t + duration);
  }

  void finish_compute(TaskId id, Time at) {
    const int g = graph_.task(id).gpu();
    streams_.ended(g, at);
    finish(id, at);
    if (!streams_.busy(g)) start_next_compute(g);
  }

  void start_collective(TaskId id) {
    tasks_[id].set_start(now());
    collective::CollectiveRequest req = collectives_.request(graph_, id, gpu_nodes_, flow_hash(id));
    if (options_.controller != nullptr && options_.controller->hold_collective(id, req)) {
      collectives_.hold(id, std::move(req));
      return;
    }
    lower_and_start(id, req);
  }

  void lower_and_start(TaskId id, const collective::CollectiveRequest& req) {
    collectives_.lower(id, req, topology_);
    ++events_;
    start_step(id);
  }

  // Starts the next non-empty step of the collective, or finishes it.
  void start_step(TaskId id) {
    if (!collectives_.next_step(id)) {
      finish(id, now());
      if (options_.controller != nullptr) options_.controller->collective_finished(id);
      return;
    }
    const workload::CollectiveCost& cost = options_.collective_costs.of(graph_.task(id).collective);
    if (cost.overhead > Time::zero()) {
      at(now() + cost.overhead, [this, id, &cost] { launch_step(id, cost); });
    } else {
      launch_step(id, cost);
    }
  }

  void launch_step(TaskId id, const workload::CollectiveCost& cost) {
    const std::vector<net::Transfer>& step = collectives_.step_transfers(id);
    if (options_.coflows && step.size() > 1) {
      coflow_.clear();
      for (const net::Transfer& tr : step)
        coflow_.push_back(on_wire(tr, cost));
      transfers_.start_coflow(id, coflow_);
      return;
    }
    for (const net::Transfer& tr : step)
      transfers_.start(id, on_wire(tr, cost));
  }

  // Transfers that completed during backend_.advance(): handled afterwards (TaskTransfers).
  void drain_network_completions() {
    std::vector<TaskId>& arrived = transfers_.arrived();
    for (std::size_t i = 0; i < arrived.size(); ++i) {
      const TaskId id = arrived[i];
      if (graph_.task(id).kind == TaskKind::P2P) {
        finish(id, now());
      } else if (collectives_.transfer_done(id)) {
        start_step(id);
      }
    }
    arrived.clear();
  }

  void finish(TaskId id, Time at) {
    tasks_.finish(id, at);
    const std::size_t finished = tasks_.finished();
    if (options_.progress && (finished & 0xffff) == 0) options_.progress(finished, tasks_.size());
    tasks_.release_successors(id, [this](TaskId s, TaskId dep) { make_ready(s, dep); });
  }

  RunResult summarize() {
    RunResult r;
    summarize_tasks(graph_, tasks_, streams_, collectives_.held_for(), options_.record_spans,
                    options_.micro_batch_figures, r);
    // What the backend counts, where it does (both of mfabric's backends do).
    const net::BackendStats* stats = backend_.stats();
    if (stats != nullptr) r.channels = stats->channel_stats();
    if (options_.timeline) r.timeline = net::require_timeline(backend_).take_timeline();
    r.flows = transfers_.take_flows();
    if (stats != nullptr) r.transfers = stats->totals();
    if (r.micro_batch_figures) r.micro_batch_figures->bytes_sent = transfers_.micro_batch_bytes();
    if (const net::PacketReporting* packets = backend_.packet_reporting()) {
      net::PacketReport packet = packets->packet_report();
      r.ports = std::move(packet.ports);
      r.packets = packet.totals;
    }
    r.events = events_ + (stats != nullptr ? stats->events_processed() : 0);
    return r;
  }

  const TaskGraph& graph_;
  const fabric::Topology& topology_;
  net::Backend& backend_;
  const EngineOptions& options_;
  engine::TaskStates tasks_;
  engine::ComputeStreams streams_;
  engine::CollectiveSteps collectives_;
  engine::TaskTransfers transfers_;
  std::vector<net::Transfer> coflow_;  // launch_step()'s scratch
  engine::TimedEvents timers_;
  std::vector<fabric::NodeId> gpu_nodes_;  // topology node of each graph GPU
  std::int64_t events_ = 0;
};

}  // namespace

RunResult run(const workload::TaskGraph& graph, const fabric::Topology& topology,
              net::Backend& backend, const EngineOptions& options) {
  return Executor(graph, topology, backend, options).run();
}

}  // namespace mfabric::sim
