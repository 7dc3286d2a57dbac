// The engine's parts (sim/engine/) on their own: dependency release, compute streams, timed
// events, collective steps and what a transfer becomes on the wire. The engine as a whole is
// tested in engine_test.cpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "sim/engine/collective_steps.h"
#include "sim/engine/compute_streams.h"
#include "sim/engine/task_states.h"
#include "sim/engine/timed_events.h"
#include "sim/engine/transfers.h"

namespace mfabric::sim::engine {
namespace {

using workload::CollectiveKind;
using workload::Task;
using workload::TaskGraph;
using workload::TaskId;
using workload::TaskKind;

Time us(std::int64_t n) {
  return Time::microseconds(n);
}

Task compute_on(int gpu) {
  Task t;
  t.kind = TaskKind::Compute;
  t.set_gpu(gpu);
  return t;
}

TEST(TaskStates, CountsDependenciesAndReleasesSuccessorsInGraphOrder) {
  TaskGraph g(1);
  const TaskId a = g.add(compute_on(0));
  const TaskId b = g.add(compute_on(0));
  const TaskId c = g.add(compute_on(0), {a, b});
  const TaskId d = g.add(compute_on(0), {a});
  TaskStates tasks(g);
  EXPECT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[a].waiting(), 0);
  EXPECT_EQ(tasks[c].waiting(), 2);
  EXPECT_EQ(tasks[d].waiting(), 1);
  EXPECT_EQ(tasks[c].start(), Time::max());

  std::vector<std::pair<TaskId, TaskId>> ready;
  const auto record = [&](TaskId s, TaskId dep) { ready.emplace_back(s, dep); };
  tasks.finish(a, us(3));
  tasks.release_successors(a, record);
  EXPECT_EQ(tasks[a].end(), us(3));
  EXPECT_EQ(tasks.finished(), 1u);
  // c still waits for b; d is ready, released by a.
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], std::make_pair(d, a));
  EXPECT_EQ(tasks[c].waiting(), 1);
  tasks.finish(b, us(5));
  tasks.release_successors(b, record);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[1], std::make_pair(c, b));
  EXPECT_EQ(tasks.finished(), 2u);
}

TEST(ComputeStreams, RunsEachGpusTasksInReadyOrder) {
  ComputeStreams streams(2);
  EXPECT_TRUE(streams.queue(0, 7));  // idle: start one
  EXPECT_TRUE(streams.queue(0, 3));  // still idle until set_busy
  EXPECT_EQ(streams.take_next(0), 7);
  streams.set_busy(0);
  EXPECT_TRUE(streams.busy(0));
  EXPECT_FALSE(streams.queue(0, 9));  // busy: it waits its turn
  EXPECT_EQ(streams.take_next(0), 3);
  EXPECT_EQ(streams.take_next(0), 9);
  EXPECT_EQ(streams.take_next(0), -1);
  EXPECT_EQ(streams.take_next(1), -1);
  streams.ended(0, us(4));
  EXPECT_FALSE(streams.busy(0));
  EXPECT_EQ(streams.free_since(0), us(4));
}

TEST(ComputeStreams, ExposesIdleTimeUpToTheCommunicationsLength) {
  ComputeStreams streams(1);
  streams.ended(0, us(10));
  // Idle 10us, the communication took 4us: a 6us bubble before it is not communication.
  streams.expose_wait(0, us(20), us(4));
  EXPECT_EQ(streams.exposed(0), us(4));
  // Idle 2us after a 4us communication: all of it is.
  streams.expose_wait(0, us(12), us(4));
  EXPECT_EQ(streams.exposed(0), us(6));
  // Not idle at all.
  streams.expose_wait(0, us(10), us(4));
  streams.expose_wait(0, us(5), us(4));
  EXPECT_EQ(streams.exposed(0), us(6));
}

TEST(ComputeStreams, EndsComeEarliestFirstThenInStartOrder) {
  ComputeStreams streams(3);
  EXPECT_FALSE(streams.next_end());
  streams.schedule_end(1, us(5));
  streams.schedule_end(2, us(3));
  streams.schedule_end(3, us(5));
  streams.schedule_end(4, us(3));
  ASSERT_TRUE(streams.next_end());
  EXPECT_EQ(*streams.next_end(), us(3));
  std::vector<TaskId> order;
  while (streams.next_end())
    order.push_back(streams.pop_end().task);
  EXPECT_EQ(order, (std::vector<TaskId>{2, 4, 1, 3}));
}

TEST(TimedEvents, RunEarliestFirstThenInScheduleOrder) {
  TimedEvents events;
  EXPECT_FALSE(events.next_time());
  std::string ran;
  events.push(us(2), [&] { ran += "a"; });
  events.push(us(1), [&] { ran += "b"; });
  events.push(us(2), [&] { ran += "c"; });
  events.push(us(1), [&] { ran += "d"; });
  EXPECT_EQ(*events.next_time(), us(1));
  while (events.next_time()) {
    TimedEvents::Event e = events.pop();
    e.fn();
  }
  EXPECT_EQ(ran, "bdac");
}

TEST(Transfers, OnTheWireAtTheLibrarysEfficiency) {
  net::Transfer tr;
  tr.size = Bytes(1001);
  workload::CollectiveCost cost;
  EXPECT_EQ(on_wire(tr, cost).size, Bytes(1001));
  cost.efficiency = 0.5;
  EXPECT_EQ(on_wire(tr, cost).size, Bytes(2002));
  cost.efficiency = 0.3;  // 3336.67 bytes at line rate, rounded up
  EXPECT_EQ(on_wire(tr, cost).size, Bytes(3337));
}

TEST(Transfers, FlowHashesAreSaltedPerTask) {
  EXPECT_NE(task_flow_hash(1, 0), task_flow_hash(2, 0));
  EXPECT_EQ(task_flow_hash(1, 0) ^ 0xabcdULL, task_flow_hash(1, 0xabcd));
  EXPECT_EQ(task_flow_hash(0, 0), 0u);
}

class CollectiveStepsTest : public ::testing::Test {
 protected:
  CollectiveStepsTest() : topology_(make_topology()), backend_(topology_) {
    for (int g = 0; g < 4; ++g)
      nodes_.push_back(topology_.gpu(g / 2, g % 2));
  }
  static fabric::Topology make_topology() {
    fabric::ClusterSpec c;
    c.servers = 2;
    c.gpus_per_server = 2;
    c.nics_per_server = 2;
    c.numa_nodes = 2;
    return fabric::build_fabric("fat-tree", c);
  }
  TaskId add_collective(CollectiveKind kind, Bytes bytes, std::int32_t matrix = -1) {
    Task t;
    t.kind = TaskKind::Collective;
    t.collective = kind;
    t.set_group(graph_.add_group({0, 1, 2, 3}));
    t.set_bytes(bytes);
    t.set_matrix(matrix);
    return graph_.add(t);
  }

  fabric::Topology topology_;
  net::FlowBackend backend_;
  std::vector<fabric::NodeId> nodes_;
  TaskGraph graph_{4};
};

TEST_F(CollectiveStepsTest, RequestNamesTheMembersNodesAndTheCircuits) {
  CollectiveSteps steps({}, backend_, nullptr);
  const TaskId id = add_collective(CollectiveKind::AllReduce, Bytes(4096));
  const collective::CollectiveRequest req = steps.request(graph_, id, nodes_, 42);
  EXPECT_EQ(req.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(req.members, nodes_);
  EXPECT_EQ(req.bytes, Bytes(4096));
  EXPECT_EQ(req.matrix, nullptr);
  EXPECT_EQ(req.flow_hash, 42u);
  ASSERT_NE(req.circuits, nullptr);
  EXPECT_EQ(req.circuits->circuit_peer(topology_.nic(0, 0)), fabric::kNoNode);  // no circuits
  EXPECT_TRUE(req.circuits->usable(nodes_[0]));
}

TEST_F(CollectiveStepsTest, StepsFollowEachOtherWhenAllTheirTransfersArrived) {
  CollectiveSteps steps({}, backend_, nullptr);
  const TaskId id = add_collective(CollectiveKind::AllReduce, Bytes(1 << 20));
  const collective::CollectiveRequest req = steps.request(graph_, id, nodes_, 0);
  // Hierarchical on 2 servers x 2 GPUs: reduce-scatter inside, ring across, all-gather inside.
  const collective::Plan plan = collective::Lowerer().lower(req, topology_);
  steps.lower(id, req, topology_);
  for (const collective::Step& step : plan.steps) {
    if (step.transfers.empty()) continue;
    ASSERT_TRUE(steps.next_step(id));
    ASSERT_EQ(steps.step_transfers(id).size(), step.transfers.size());
    for (std::size_t k = 1; k < step.transfers.size(); ++k)
      EXPECT_FALSE(steps.transfer_done(id));
    EXPECT_TRUE(steps.transfer_done(id));
  }
  EXPECT_FALSE(steps.next_step(id));
}

TEST_F(CollectiveStepsTest, ACollectiveWithoutTransfersEndsAtOnce) {
  CollectiveSteps steps({}, backend_, nullptr);
  // An all-to-all-v that moves nothing off the diagonal: the direct lowering's one step is empty.
  workload::ByteMatrix m(4);
  for (int i = 0; i < 4; ++i)
    m.at(i, i) = 100;
  const TaskId id = add_collective(CollectiveKind::AllToAll, Bytes(0), graph_.add_matrix(m));
  const collective::CollectiveRequest req = steps.request(graph_, id, nodes_, 0);
  steps.lower(id, req, topology_);
  EXPECT_FALSE(steps.next_step(id));
}

TEST_F(CollectiveStepsTest, HeldCollectivesAreReleasedOnceWithTheirRequest) {
  CollectiveSteps steps({}, backend_, nullptr);
  const TaskId id = add_collective(CollectiveKind::AllReduce, Bytes(4096));
  steps.hold(id, steps.request(graph_, id, nodes_, 7));
  EXPECT_EQ(steps.held().size(), 1u);
  const collective::CollectiveRequest req = steps.release(id);
  EXPECT_EQ(req.flow_hash, 7u);
  EXPECT_TRUE(steps.held().empty());
  EXPECT_THROW(steps.release(id), std::logic_error);
  steps.held_for(id, us(3));
  ASSERT_EQ(steps.held_for().count(id), 1u);
  EXPECT_EQ(steps.held_for().at(id), us(3));
}

TEST_F(CollectiveStepsTest, FailedNodesAreNotUsable) {
  std::vector<std::uint8_t> failed(static_cast<std::size_t>(topology_.nodes().size()), 0);
  failed[static_cast<std::size_t>(nodes_[1])] = 1;
  CollectiveSteps steps({}, backend_, &failed);
  const TaskId id = add_collective(CollectiveKind::AllReduce, Bytes(4096));
  const collective::CollectiveRequest req = steps.request(graph_, id, nodes_, 0);
  EXPECT_TRUE(req.circuits->usable(nodes_[0]));
  EXPECT_FALSE(req.circuits->usable(nodes_[1]));
}

}  // namespace
}  // namespace mfabric::sim::engine
