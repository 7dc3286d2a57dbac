// Engine semantics with an idealised backend (every transfer at a fixed rate, no contention), so
// that the expected times are simple sums. The flow backend has its own analytic tests.
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <queue>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"

namespace mfabric::sim {
namespace {

using workload::CollectiveKind;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

// Each transfer takes size / rate + 1us, independently of the others. Only the core of a
// backend: no statistics, circuits or timelines (the engine runs without them).
class IdealBackend final : public net::Backend {
 public:
  explicit IdealBackend(Rate rate) : rate_(rate) {}

  net::TransferId start(const net::Transfer& t, DoneCallback on_done) override {
    const net::TransferId id = next_id_++;
    const Time done = now_ + transmission_time(t.size, rate_) + Time::microseconds(1);
    pending_.push({done, id});
    callbacks_[id] = std::move(on_done);
    ++started_;
    return id;
  }
  void set_link_rate(fabric::LinkId, Rate) override {}
  Time now() const override { return now_; }
  std::optional<Time> next_event_time() const override {
    if (pending_.empty()) return std::nullopt;
    return pending_.top().first;
  }
  void advance(Time t) override {
    while (!pending_.empty() && pending_.top().first <= t) {
      const auto [at, id] = pending_.top();
      pending_.pop();
      now_ = at;
      auto cb = std::move(callbacks_[id]);
      callbacks_.erase(id);
      cb(id, at);
    }
    now_ = t;
  }

  int started_ = 0;

 private:
  using Event = std::pair<Time, net::TransferId>;
  Rate rate_;
  Time now_;
  net::TransferId next_id_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> pending_;
  std::map<net::TransferId, DoneCallback> callbacks_;
};

fabric::Topology topology(int servers, int gpus) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = gpus;
  c.numa_nodes = std::min(2, gpus);
  return fabric::build_fabric("fat-tree", c);
}

Task compute(int gpu, Time d, int iteration = 0) {
  Task t;
  t.kind = TaskKind::Compute;
  t.set_gpu(gpu);
  t.set_duration(d);
  t.iteration = static_cast<std::int16_t>(iteration);
  return t;
}

Task p2p(int src, int dst, Bytes b) {
  Task t;
  t.kind = TaskKind::P2P;
  t.traffic = workload::Traffic::PP;
  t.set_gpu(src);
  t.set_peer(dst);
  t.set_bytes(b);
  return t;
}

const Time ms = Time::milliseconds(1);
const Time us = Time::microseconds(1);

TEST(Engine, ComputeOnOneGpuSerialises) {
  TaskGraph g(2);
  g.add(compute(0, ms * 3));
  g.add(compute(0, ms * 2));
  g.add(compute(1, ms * 4));
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 2);
  const RunResult r = run(g, topo, net);
  ASSERT_EQ(r.iteration_times.size(), 1u);
  EXPECT_EQ(r.iteration_times[0], ms * 5);
  EXPECT_EQ(r.spans[1].start, ms * 3);
  EXPECT_EQ(r.exposed_comm, Time::zero());
}

// A backend with only the core (IdealBackend) runs a job: what it does not count is left out of
// the result, and a timeline it cannot count is refused.
TEST(Engine, ABackendWithOnlyTheCoreRuns) {
  TaskGraph g(2);
  g.add(p2p(0, 1, Bytes(1'000'000)));
  IdealBackend net(Rate::gbps(8));
  EXPECT_EQ(net.stats(), nullptr);
  EXPECT_EQ(net.circuits(), nullptr);
  EXPECT_EQ(net.timeline(), nullptr);
  EXPECT_EQ(net.packet_reporting(), nullptr);
  const auto topo = topology(2, 1);
  const RunResult r = run(g, topo, net);
  EXPECT_EQ(r.iteration_times[0], ms + us);
  EXPECT_TRUE(r.channels.empty());
  EXPECT_EQ(r.transfers.started, 0);
  EXPECT_FALSE(r.packets.has_value());
  EngineOptions timeline;
  timeline.timeline = net::TimelineOptions{};
  IdealBackend again(Rate::gbps(8));
  try {
    run(g, topo, again, timeline);
    FAIL() << "a timeline was counted by a backend that cannot";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.backend");
    EXPECT_NE(e.message().find("does not count link utilisation over time"), std::string::npos);
  }
}

TEST(Engine, DependencyThroughATransferAddsItsTimeAndCountsAsExposed) {
  // gpu0: 1ms compute -> 1MB to gpu1 (1ms at 8 Gbps + 1us) -> gpu1: 1ms compute.
  TaskGraph g(2);
  const auto a = g.add(compute(0, ms));
  const auto s = g.add(p2p(0, 1, Bytes(1'000'000)), {a});
  g.add(compute(1, ms), {s});
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(2, 1);
  const RunResult r = run(g, topo, net);
  EXPECT_EQ(r.iteration_times[0], ms * 3 + us);
  // gpu1 idled 2ms + 1us: 1ms for gpu0's compute (not communication), then 1ms + 1us for the
  // transfer: the latter is exposed. gpu0 sends after its last compute: the 1ms + 1us of the
  // send are exposed on its side too. Averaged over 2 GPUs: 1ms + 1us. (Seconds pass through a
  // double, hence the 1 ps tolerance.)
  EXPECT_NEAR(static_cast<double>(r.exposed_comm.ps()), static_cast<double>((ms + us).ps()), 1.0);
  // PP: one transfer of 1ms + 1us with 2 members, averaged over 2 GPUs.
  EXPECT_NEAR(static_cast<double>(r.comm_time[3].ps()), static_cast<double>((ms + us).ps()), 1.0);
}

TEST(Engine, CollectiveStepsRunInOrder) {
  // A hierarchical all-reduce over 2 servers x 2 GPUs has three steps; the ideal backend makes
  // each step one transfer time.
  TaskGraph g(4);
  Task t;
  t.kind = TaskKind::Collective;
  t.collective = CollectiveKind::AllReduce;
  t.traffic = workload::Traffic::DP;
  t.set_group(g.add_group({0, 1, 2, 3}));
  t.set_bytes(Bytes(4'000'000));
  g.add(t);
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(2, 2);
  EngineOptions options;
  options.algorithms.all_reduce = "hierarchical";
  const RunResult r = run(g, topo, net, options);
  // Step 1: reduce-scatter in each server, (g-1)/g x S = 2MB: 2ms. Step 2: ring of the 2MB shard
  // across 2 servers, 2(s-1)/s x 2MB = 2MB: 2ms. Step 3: all-gather 2MB: 2ms. Plus 1us each.
  EXPECT_EQ(r.iteration_times[0], ms * 6 + us * 3);
  EXPECT_GT(net.started_, 0);
}

TEST(Engine, IterationsAreMeasuredSeparately) {
  TaskGraph g(1);
  const auto a = g.add(compute(0, ms, 0));
  g.add(compute(0, ms * 2, 1), {a});
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 1);
  const RunResult r = run(g, topo, net);
  ASSERT_EQ(r.iteration_times.size(), 2u);
  EXPECT_EQ(r.iteration_times[0], ms);
  EXPECT_EQ(r.iteration_times[1], ms * 2);
  EXPECT_EQ(r.mean_iteration_time(), Time::picoseconds(ms.ps() * 3 / 2));
}

TEST(Engine, RejectsAGraphLargerThanTheFabric) {
  TaskGraph g(16);
  g.add(compute(15, ms));
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 8);
  EXPECT_THROW(run(g, topo, net), Error);
}

TEST(Engine, GpuNodesFollowTheServerLayout) {
  const auto topo = topology(2, 4);
  EXPECT_EQ(gpu_node(topo, 5), topo.gpu(1, 1));
  EXPECT_EQ(gpu_node(topo, 0), topo.gpu(0, 0));
}

// The message of the mfabric::Error that running `g` throws, or a failure.
std::string run_error(const TaskGraph& g, const fabric::Topology& topo, net::Backend& net) {
  try {
    run(g, topo, net);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run finished";
  return "";
}

TEST(Engine, TransferOnADownLinkWithNoOtherRouteIsAnErrorNamingTaskAndLink) {
  TaskGraph g(2);
  const auto a = g.add(compute(0, ms));
  const auto s = g.add(p2p(0, 1, Bytes(1'000'000)), {a});
  g.add(compute(1, ms), {s});
  fabric::ClusterSpec c;
  c.servers = 2;
  c.gpus_per_server = 1;
  c.nics_per_server = 1;
  const auto topo = fabric::build_fabric("fat-tree:radix=4", c);
  net::FlowBackend net(topo);
  fabric::LinkId cable = -1;
  for (fabric::LinkId l : topo.links_of(topo.nic(1, 0))) {
    if (topo.link(l).kind == fabric::LinkKind::Cable) cable = l;
  }
  net.set_link_rate(cable, Rate::gbps(0));
  const std::string msg = run_error(g, topo, net);
  EXPECT_NE(msg.find("2 of 3 tasks never completed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task 1 ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("is down and no other route is up"), std::string::npos) << msg;
  EXPECT_NE(msg.find(topo.name(topo.nic(1, 0))), std::string::npos) << msg;
}

TEST(Engine, TransferPastTheClockIsAnErrorNotAHang) {
  TaskGraph g(2);
  g.add(p2p(0, 1, Bytes(2'000'000'000'000'000)));
  fabric::ClusterSpec c;
  c.servers = 2;
  c.gpus_per_server = 1;
  c.nics_per_server = 1;
  c.link = fabric::kMinLinkRate;
  const auto topo = fabric::build_fabric("fat-tree:radix=4", c);
  net::FlowBackend net(topo);
  const std::string msg = run_error(g, topo, net);
  EXPECT_NE(msg.find("past the largest time"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1Mbps"), std::string::npos) << msg;
}

TEST(Engine, ComputeEndingPastTheClockIsAnErrorNamingTheTask) {
  TaskGraph g(1);
  g.add(compute(0, Time::max() - Time::picoseconds(5)));
  g.add(compute(0, ms));
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 1);
  const std::string msg = run_error(g, topo, net);
  EXPECT_NE(msg.find("task 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("past the largest time"), std::string::npos) << msg;
}

}  // namespace
}  // namespace mfabric::sim

namespace mfabric::sim {
namespace {

// Holds every collective for `delay`, then releases it; records what it saw.
class DelayingController final : public FabricController {
 public:
  explicit DelayingController(Time delay) : delay_(delay) {}
  void attach(EngineContext& engine) override { engine_ = &engine; }
  bool hold_collective(workload::TaskId id, collective::CollectiveRequest& r) override {
    held.push_back(id);
    members.push_back(r.members.size());
    engine_->at(engine_->now() + delay_, [this, id] {
      released_at.push_back(engine_->now());
      engine_->release(id);
    });
    return true;
  }
  void compute_started(workload::TaskId id) override { computes.push_back(id); }
  void collective_finished(workload::TaskId id) override { finished.push_back(id); }

  std::vector<workload::TaskId> held, computes, finished;
  std::vector<std::size_t> members;
  std::vector<Time> released_at;

 private:
  Time delay_;
  EngineContext* engine_ = nullptr;
};

Task all_reduce(TaskGraph& g, std::vector<std::int32_t> gpus, Bytes b) {
  Task t;
  t.kind = TaskKind::Collective;
  t.collective = CollectiveKind::AllReduce;
  t.traffic = workload::Traffic::DP;
  t.set_group(g.add_group(std::move(gpus)));
  t.set_bytes(b);
  return t;
}

TEST(EngineController, AHeldCollectiveStartsWhenReleasedAndItsWaitIsCommunication) {
  // compute 1ms -> all-reduce over 2 GPUs (ring, one step: 2(n-1)/n x 2MB = 2MB at 8 Gbps =
  // 2ms + 1us) held for 5ms -> compute 1ms.
  TaskGraph g(2);
  const auto c0 = g.add(compute(0, ms));
  const auto ar = g.add(all_reduce(g, {0, 1}, Bytes(2'000'000)), {c0});
  g.add(compute(0, ms), {ar});
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 2);
  DelayingController controller(ms * 5);
  EngineOptions options;
  options.algorithms.all_reduce = "ring";
  options.controller = &controller;
  const RunResult r = run(g, topo, net, options);
  EXPECT_EQ(r.iteration_times[0], ms + ms * 5 + ms * 2 + us + ms);
  ASSERT_EQ(controller.held, std::vector<workload::TaskId>{ar});
  EXPECT_EQ(controller.members, std::vector<std::size_t>{2});
  EXPECT_EQ(controller.released_at, std::vector<Time>{ms * 6});
  EXPECT_EQ(controller.finished, std::vector<workload::TaskId>{ar});
  EXPECT_EQ(controller.computes.size(), 2u);
  // GPU 0 waits 5ms + 2ms + 1us for the collective, GPU 1 (no compute after) is exposed for the
  // whole collective too; the mean over 2 GPUs.
  EXPECT_EQ(r.exposed_comm, ms * 7 + us);
}

// Schedules events out of order and at equal times; records the order they ran in.
class TimerController final : public FabricController {
 public:
  void attach(EngineContext& engine) override {
    engine.at(ms * 3, [this, &engine] {
      order.push_back(3);
      engine.at(engine.now(), [this] { order.push_back(4); });  // same time: runs after
    });
    engine.at(ms, [this] { order.push_back(1); });
    engine.at(ms, [this] { order.push_back(2); });
  }
  std::vector<int> order;
};

TEST(EngineController, TimedEventsRunInTimeThenSchedulingOrder) {
  TaskGraph g(1);
  g.add(compute(0, ms * 2));
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 1);
  TimerController controller;
  EngineOptions options;
  options.controller = &controller;
  const RunResult r = run(g, topo, net, options);
  EXPECT_EQ(controller.order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(r.iteration_times[0], ms * 2);
}

class NeverReleases final : public FabricController {
 public:
  bool hold_collective(workload::TaskId, collective::CollectiveRequest&) override { return true; }
};

TEST(EngineController, ACollectiveNeverReleasedIsAnErrorNamingIt) {
  TaskGraph g(2);
  g.add(all_reduce(g, {0, 1}, Bytes(1000)));
  IdealBackend net(Rate::gbps(8));
  const auto topo = topology(1, 2);
  NeverReleases controller;
  EngineOptions options;
  options.controller = &controller;
  try {
    run(g, topo, net, options);
    FAIL() << "a run with a held collective finished";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("held by the fabric controller"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mfabric::sim
