#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "core/error.h"
#include "net/backend_stats.h"
#include "net/circuits.h"
#include "net/link_timeline.h"
#include "net/packet_report.h"
#include "net/router.h"

namespace mfabric::sim {

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

constexpr const char* kPastTimeRange =
    "past the largest time mfabric represents (2^63 ps, about 106 days of simulated time)";

int traffic_index(workload::Traffic t) {
  for (std::size_t i = 0; i < kTrafficClasses.size(); ++i) {
    if (kTrafficClasses[i] == t) return static_cast<int>(i);
  }
  return -1;
}

// The backend's circuits as the lowerings see them (collective/circuit_view.h).
class BackendCircuits final : public collective::CircuitView {
 public:
  // A backend's capabilities are fixed over its life: its circuits are looked up once.
  BackendCircuits(const net::Backend& backend, const std::vector<std::uint8_t>* failed)
      : circuits_(backend.circuits()), failed_(failed) {}
  fabric::NodeId circuit_peer(fabric::NodeId nic) const override {
    return circuits_ == nullptr ? fabric::kNoNode : circuits_->circuit_peer(nic);
  }
  bool usable(fabric::NodeId node) const override {
    return failed_ == nullptr || (*failed_)[static_cast<std::size_t>(node)] == 0;
  }

 private:
  const net::Circuits* circuits_;
  const std::vector<std::uint8_t>* failed_;
};

class Executor final : public EngineContext {
 public:
  Executor(const TaskGraph& graph, const fabric::Topology& topology, net::Backend& backend,
           const EngineOptions& options)
      : graph_(graph),
        topology_(topology),
        backend_(backend),
        options_(options),
        lowerer_(options.algorithms),
        circuits_(backend, options.failed_nodes),
        n_(graph.size()),
        state_(n_),
        gpus_(static_cast<std::size_t>(graph.gpus())) {
    const int available = topology.count(fabric::NodeKind::Gpu);
    if (graph.gpus() > available) {
      throw Error(fmt::format("the workload needs {} GPUs but fabric {} has {} ({} servers x {})",
                              graph.gpus(), topology.spec(), available, topology.cluster().servers,
                              topology.cluster().gpus_per_server));
    }
    for (int g = 0; g < graph.gpus(); ++g) {
      gpus_[static_cast<std::size_t>(g)].node = gpu_node(topology, g);
    }
    // Successors in compressed rows (the graph stores predecessors).
    std::vector<std::uint32_t> count(n_ + 1, 0);
    for (TaskId t = 0; t < static_cast<TaskId>(n_); ++t) {
      const auto deps = graph.deps(t);
      state(t).waiting = static_cast<std::int32_t>(deps.size());
      for (TaskId d : deps)
        ++count[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t i = 1; i <= n_; ++i)
      count[i] += count[i - 1];
    succ_begin_ = count;
    succ_.resize(count[n_]);
    for (TaskId t = 0; t < static_cast<TaskId>(n_); ++t) {
      for (TaskId d : graph.deps(t))
        succ_[count[static_cast<std::size_t>(d)]++] = t;
    }
  }

  RunResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    if (options_.timeline) net::require_timeline(backend_).record_timeline(*options_.timeline);
    if (options_.controller != nullptr) options_.controller->attach(*this);
    for (TaskId t = 0; t < static_cast<TaskId>(n_); ++t) {
      if (state(t).waiting == 0) make_ready(t, -1);
    }
    // Three event sources; at equal times the network goes first, then compute, then the
    // controller's timed events.
    while (true) {
      const std::optional<Time> net = backend_.next_event_time();
      const std::optional<Time> compute =
          compute_done_.empty() ? std::nullopt : std::optional<Time>(compute_done_.top().time);
      const std::optional<Time> timer =
          timers_.empty() ? std::nullopt : std::optional<Time>(timers_.front().time);
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
        const ComputeDone done = compute_done_.top();
        compute_done_.pop();
        backend_.advance(done.time);
        ++events_;
        finish_compute(done.task, done.time);
        continue;
      }
      std::pop_heap(timers_.begin(), timers_.end(), std::greater<>{});
      TimedEvent event = std::move(timers_.back());
      timers_.pop_back();
      backend_.advance(event.time);
      ++events_;
      event.fn();
    }
    if (finished_ != n_) throw unfinished_error();
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
    timers_.push_back(TimedEvent{t, seq_++, std::move(fn)});
    std::push_heap(timers_.begin(), timers_.end(), std::greater<>{});
  }
  void release(TaskId id) override {
    const auto it = held_.find(id);
    if (it == held_.end()) {
      throw std::logic_error(fmt::format("engine: task {} released but not held", id));
    }
    const collective::CollectiveRequest request = std::move(it->second);
    held_.erase(it);
    held_for_.emplace(id, now() - state(id).start);
    lower_and_start(id, request);
  }
  net::Backend& backend() override { return backend_; }

 private:
  struct TimedEvent {
    Time time;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const TimedEvent& o) const {
      return time != o.time ? time > o.time : seq > o.seq;
    }
  };

  struct Gpu {
    fabric::NodeId node = fabric::kNoNode;
    std::deque<TaskId> ready;
    bool busy = false;
    Time free_since;
    Time exposed;
  };

  struct ComputeDone {
    Time time;
    std::uint64_t seq;
    TaskId task;
    bool operator>(const ComputeDone& o) const {
      return time != o.time ? time > o.time : seq > o.seq;
    }
  };

  struct ActiveCollective {
    collective::Plan plan;
    std::size_t step = 0;
    std::size_t outstanding = 0;
  };

  // A task's flow hash: its id spread over 64 bits, salted by the seed (EngineOptions).
  std::uint64_t flow_hash(TaskId id) const {
    return (static_cast<std::uint64_t>(id) * 0x9e3779b97f4a7c15ULL) ^ options_.flow_salt;
  }

  void make_ready(TaskId id, TaskId last_dep) {
    const Task& t = graph_.task(id);
    state(id).last_dep = last_dep;
    if (t.kind == TaskKind::Compute) {
      Gpu& gpu = gpus_[static_cast<std::size_t>(t.gpu)];
      gpu.ready.push_back(id);
      if (!gpu.busy) start_next_compute(t.gpu);
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
        state(id).start = now();
        net::Transfer tr;
        tr.src = gpus_[static_cast<std::size_t>(t.gpu)].node;
        tr.dst = gpus_[static_cast<std::size_t>(t.peer)].node;
        tr.size = t.bytes;
        tr.flow_hash = flow_hash(id);
        ++events_;
        const workload::CollectiveCost& cost = options_.collective_costs.p2p;
        if (cost.overhead > Time::zero()) {
          at(now() + cost.overhead,
             [this, id, tr, &cost] { start_transfer(id, on_wire(tr, cost)); });
        } else {
          start_transfer(id, on_wire(tr, cost));
        }
        break;
      }
    }
  }

  void start_next_compute(int g) {
    Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    if (gpu.ready.empty()) return;
    const TaskId id = gpu.ready.front();
    gpu.ready.pop_front();
    const Time t = now();
    // Idle time before this task is exposed communication when what it waited for last was a
    // communication task, but only as long as that communication took: waiting for a pipeline
    // neighbour's compute (a bubble) before the transfer could even start is not communication.
    const TaskId dep = state(id).last_dep;
    if (t > gpu.free_since && dep >= 0 && graph_.task(dep).kind != TaskKind::Compute) {
      const Time comm = state(dep).end - state(dep).start;
      gpu.exposed += std::min(t - gpu.free_since, comm);
    }
    gpu.busy = true;
    state(id).start = t;
    if (options_.controller != nullptr) options_.controller->compute_started(id);
    const Time duration = graph_.task(id).duration;
    if (duration < Time::zero() || duration > Time::max() - t) {
      throw Error("", "",
                  fmt::format("task {} ({}) lasts {} from {}: {}", id, graph_.label(id),
                              to_string(duration), to_string(t),
                              duration < Time::zero() ? "a negative duration" : kPastTimeRange));
    }
    compute_done_.push(ComputeDone{t + duration, seq_++, id});
  }

  void finish_compute(TaskId id, Time at) {
    const int g = graph_.task(id).gpu;
    Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    gpu.busy = false;
    gpu.free_since = at;
    finish(id, at);
    if (!gpu.busy) start_next_compute(g);
  }

  void start_collective(TaskId id) {
    const Task& t = graph_.task(id);
    state(id).start = now();
    collective::CollectiveRequest req;
    req.kind = t.collective;
    for (std::int32_t g : graph_.group(t.group)) {
      req.members.push_back(gpus_[static_cast<std::size_t>(g)].node);
    }
    req.bytes = t.bytes;
    req.matrix = t.matrix >= 0 ? &graph_.matrix(t.matrix) : nullptr;
    req.flow_hash = flow_hash(id);
    req.circuits = &circuits_;
    if (options_.controller != nullptr && options_.controller->hold_collective(id, req)) {
      held_.emplace(id, std::move(req));
      return;
    }
    lower_and_start(id, req);
  }

  void lower_and_start(TaskId id, const collective::CollectiveRequest& req) {
    active_.insert_or_assign(id, ActiveCollective{lowerer_.lower(req, topology_), 0, 0});
    ++events_;
    start_step(id);
  }

  // Starts the next non-empty step of the collective, or finishes it.
  void start_step(TaskId id) {
    ActiveCollective& a = active_.at(id);
    while (a.step < a.plan.steps.size() && a.plan.steps[a.step].transfers.empty())
      ++a.step;
    if (a.step == a.plan.steps.size()) {
      active_.erase(id);
      finish(id, now());
      if (options_.controller != nullptr) options_.controller->collective_finished(id);
      return;
    }
    a.outstanding = a.plan.steps[a.step].transfers.size();
    const workload::CollectiveCost& cost = options_.collective_costs.of(graph_.task(id).collective);
    if (cost.overhead > Time::zero()) {
      at(now() + cost.overhead, [this, id, &cost] { launch_step(id, cost); });
    } else {
      launch_step(id, cost);
    }
  }

  void launch_step(TaskId id, const workload::CollectiveCost& cost) {
    const ActiveCollective& a = active_.at(id);
    for (const net::Transfer& tr : a.plan.steps[a.step].transfers)
      start_transfer(id, on_wire(tr, cost));
  }

  // The transfer as the collective library puts it on the wire: at a fraction of the line rate
  // the library reaches, its bytes take as long as size / efficiency bytes at line rate.
  static net::Transfer on_wire(net::Transfer tr, const workload::CollectiveCost& cost) {
    if (cost.efficiency == 1) return tr;
    const double wire = std::ceil(static_cast<double>(tr.size.count()) / cost.efficiency);
    // Efficiencies are at least kMinCollectiveEfficiency, so this stays far inside int64 for
    // every size the workloads make (workload::kMaxTransferBytes); the guard is for the
    // arithmetic.
    tr.size = Bytes(wire >= 9.0e18 ? std::numeric_limits<std::int64_t>::max()
                                   : static_cast<std::int64_t>(wire));
    return tr;
  }

  void start_transfer(TaskId id, const net::Transfer& tr) {
    if (!options_.record_flows) {
      backend_.start(tr, [this, id](net::TransferId, Time) { arrived_.push_back(id); });
      return;
    }
    const std::size_t record = flows_.size();
    flows_.push_back(FlowRecord{id, tr.src, tr.dst, tr.size, now(), Time::max()});
    backend_.start(tr, [this, id, record](net::TransferId, Time at) {
      flows_[record].end = at;
      arrived_.push_back(id);
    });
  }

  // Transfers that completed during backend_.advance(): handled afterwards, so that the backend
  // is never asked to start a transfer from inside its own event processing.
  void drain_network_completions() {
    for (std::size_t i = 0; i < arrived_.size(); ++i) {
      const TaskId id = arrived_[i];
      if (graph_.task(id).kind == TaskKind::P2P) {
        finish(id, now());
      } else {
        transfer_done(id);
      }
    }
    arrived_.clear();
  }

  void transfer_done(TaskId id) {
    ActiveCollective& a = active_.at(id);
    if (--a.outstanding > 0) return;
    ++a.step;
    start_step(id);
  }

  void finish(TaskId id, Time at) {
    state(id).end = at;
    ++finished_;
    if (options_.progress && (finished_ & 0xffff) == 0) options_.progress(finished_, n_);
    for (std::uint32_t i = succ_begin_[static_cast<std::size_t>(id)];
         i < succ_begin_[static_cast<std::size_t>(id) + 1]; ++i) {
      const TaskId s = succ_[i];
      if (--state(s).waiting == 0) make_ready(s, id);
    }
  }

  // Why tasks are left when no event remains, naming the first of them: a transfer that cannot
  // finish (a link down with no other route, or an end past the picosecond clock), or
  // dependencies that can never be met.
  Error unfinished_error() const {
    const std::size_t left = n_ - finished_;
    const std::string head =
        fmt::format("the run cannot finish: {} of {} tasks never completed", left, n_);
    if (!held_.empty()) {
      const TaskId id =
          std::min_element(held_.begin(), held_.end(), [](const auto& a, const auto& b) {
            return a.first < b.first;
          })->first;
      return Error("", "",
                   fmt::format("{}; task {} ({}) was held by the fabric controller and never "
                               "released ({} held in all)",
                               head, id, graph_.label(id), held_.size()));
    }
    const net::BackendStats* stats = backend_.stats();
    const std::vector<net::StalledTransfer> stalled =
        stats == nullptr ? std::vector<net::StalledTransfer>{} : stats->stalled_transfers(1);
    if (!stalled.empty()) {
      const net::StalledTransfer& st = stalled.front();
      std::string task;
      for (TaskId id = 0; id < static_cast<TaskId>(n_); ++id) {
        const auto i = static_cast<std::size_t>(id);
        if (state_[i].start != Time::max() && state_[i].end == Time::max() &&
            graph_.task(id).kind != TaskKind::Compute) {
          task = fmt::format("task {} ({}) is waiting for a transfer that cannot finish: ", id,
                             graph_.label(id));
          break;
        }
      }
      std::string why;
      if (st.why == net::StalledTransfer::Why::Paused) {
        why = "its circuit was torn down and it was never resumed on a new route";
      } else if (st.why == net::StalledTransfer::Why::LinkDown) {
        const bool circuit = static_cast<std::size_t>(st.down_link) >= topology_.links().size();
        why = st.down_link >= 0 && circuit
                  ? fmt::format("circuit link {} is down and no other route is up", st.down_link)
              : st.down_link >= 0
                  ? fmt::format("link {} ({} - {}) is down and no other route is up", st.down_link,
                                topology_.name(topology_.link(st.down_link).a),
                                topology_.name(topology_.link(st.down_link).b))
                  : std::string("its route is down");
      } else {
        why = fmt::format("at {} it would end {}", to_string(st.rate), kPastTimeRange);
      }
      return Error(
          "", "",
          fmt::format("{}; {}{} -> {} with {} left: {}", head, task, topology_.name(st.src),
                      topology_.name(st.dst), to_string(st.remaining), why));
    }
    // No transfer is stuck: what is left waits for dependencies that never finish.
    for (TaskId id = 0; id < static_cast<TaskId>(n_); ++id) {
      const auto i = static_cast<std::size_t>(id);
      if (state_[i].end != Time::max()) continue;
      return Error("", "",
                   fmt::format("{}; the first, task {} ({}), waits for {} dependencies that never "
                               "finish (a dependency cycle)",
                               head, id, graph_.label(id), state_[i].waiting));
    }
    return Error("", "", head);
  }

  // Communication after a GPU's last compute task (or, on a GPU that never computes, all of
  // it): no later compute waits for it, yet the run is not over until it ends, so it is exposed
  // too. Summed over GPUs: the length of the union of the intervals of the communication tasks
  // each GPU is a member of, from its last compute end on.
  Time tail_exposed() const {
    std::vector<std::vector<std::pair<Time, Time>>> intervals(gpus_.size());
    const auto add = [&](int g, Time s, Time e) {
      const Time from = std::max(s, gpus_[static_cast<std::size_t>(g)].free_since);
      if (e > from) intervals[static_cast<std::size_t>(g)].emplace_back(from, e);
    };
    for (TaskId id = 0; id < static_cast<TaskId>(n_); ++id) {
      const Task& t = graph_.task(id);
      const Time s = state(id).start;
      const Time e = state(id).end;
      if (t.kind == TaskKind::P2P) {
        add(t.gpu, s, e);
        add(t.peer, s, e);
      } else if (t.kind == TaskKind::Collective) {
        for (std::int32_t g : graph_.group(t.group))
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

  // Member-seconds a profiler on each GPU would count for communication task `id`: from the
  // GPU's own input being ready (the end of its dependency) to the task's end, so that waiting
  // for the slowest member is included. The graphs give a collective one dependency per member
  // (or per group of members sharing it), so each dependency stands for members / deps GPUs.
  double profiled_member_seconds(TaskId id, double members) const {
    const Time end = state(id).end;
    const auto deps = graph_.deps(id);
    if (deps.empty()) return (end - state(id).start).seconds() * members;
    double sum = 0;
    for (TaskId d : deps)
      sum += (end - std::min(state(d).end, state(id).start)).seconds();
    return sum * members / static_cast<double>(deps.size());
  }

  // The critical path, walked back from the task that ended last through the dependency each
  // task waited for last (TaskState::last_dep): the held collectives on it and their waits.
  void critical_path_holds(RunResult& r) const {
    if (held_for_.empty() || n_ == 0) return;
    TaskId at = 0;
    for (TaskId id = 1; id < static_cast<TaskId>(n_); ++id) {
      if (state(id).end > state(at).end) at = id;
    }
    for (; at >= 0; at = state(at).last_dep) {
      const auto it = held_for_.find(at);
      // A hold released at once (the oracle's) cost nothing.
      if (it == held_for_.end() || it->second == Time::zero()) continue;
      ++r.critical_holds;
      r.critical_held_time += it->second;
    }
  }

  RunResult summarize() const {
    RunResult r;
    int iterations = 0;
    for (const Task& t : graph_.tasks())
      iterations = std::max(iterations, t.iteration + 1);
    std::vector<Time> first(static_cast<std::size_t>(iterations), Time::max());
    std::vector<Time> last(static_cast<std::size_t>(iterations), Time::zero());
    std::array<double, kTrafficClasses.size()> comm{};
    std::array<double, kTrafficClasses.size()> profiled{};
    const double gpus = std::max(1, graph_.job_gpus());
    for (TaskId id = 0; id < static_cast<TaskId>(n_); ++id) {
      const Task& t = graph_.task(id);
      const auto i = static_cast<std::size_t>(t.iteration);
      const Time s = state(id).start;
      const Time e = state(id).end;
      first[i] = std::min(first[i], s);
      last[i] = std::max(last[i], e);
      r.makespan = std::max(r.makespan, e);
      const int k = traffic_index(t.traffic);
      if (k >= 0) {
        const double members =
            t.kind == TaskKind::P2P ? 2.0 : static_cast<double>(graph_.group(t.group).size());
        comm[static_cast<std::size_t>(k)] += (e - s).seconds() * members / gpus;
        profiled[static_cast<std::size_t>(k)] += profiled_member_seconds(id, members) / gpus;
      }
      if (options_.record_spans) r.spans.push_back(TaskSpan{id, s, e});
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
    double exposed = 0;
    for (const Gpu& g : gpus_)
      exposed += g.exposed.seconds();
    exposed += tail_exposed().seconds();
    r.exposed_comm = Time::from_seconds(exposed / gpus / its);
    critical_path_holds(r);
    // What the backend counts, where it does (both of mfabric's backends do).
    const net::BackendStats* stats = backend_.stats();
    if (stats != nullptr) r.channels = stats->channel_stats();
    if (options_.timeline) r.timeline = net::require_timeline(backend_).take_timeline();
    r.flows = std::move(flows_);
    if (stats != nullptr) r.transfers = stats->totals();
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
  collective::Lowerer lowerer_;
  BackendCircuits circuits_;
  std::size_t n_;
  // Per task, what the run reads and writes, together (one cache line for several tasks).
  struct TaskState {
    Time start = Time::max();
    Time end = Time::max();
    std::int32_t waiting = 0;  // dependencies not finished yet
    TaskId last_dep = -1;      // the dependency that finished last (what a ready task waited for)
  };
  std::vector<TaskState> state_;
  TaskState& state(TaskId id) { return state_[static_cast<std::size_t>(id)]; }
  const TaskState& state(TaskId id) const { return state_[static_cast<std::size_t>(id)]; }
  std::vector<std::uint32_t> succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<Gpu> gpus_;
  std::priority_queue<ComputeDone, std::vector<ComputeDone>, std::greater<>> compute_done_;
  std::unordered_map<TaskId, ActiveCollective> active_;
  // Collectives the controller holds, with their requests.
  std::unordered_map<TaskId, collective::CollectiveRequest> held_;
  // Collectives a controller held, and for how long (for the critical path's count).
  std::unordered_map<TaskId, Time> held_for_;
  // The controller's timed events, a min-heap on (time, seq).
  std::vector<TimedEvent> timers_;
  std::vector<TaskId> arrived_;
  std::vector<FlowRecord> flows_;  // with record_flows
  std::uint64_t seq_ = 0;
  std::size_t finished_ = 0;
  std::int64_t events_ = 0;
};

}  // namespace

RunResult run(const workload::TaskGraph& graph, const fabric::Topology& topology,
              net::Backend& backend, const EngineOptions& options) {
  return Executor(graph, topology, backend, options).run();
}

}  // namespace mfabric::sim
