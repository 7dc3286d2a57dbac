// The task record: each kind's fields read back as set, the fields a kind has not are empty
// (-1, zero) though they share storage with another kind's, setters refuse them, the bit-field
// enums hold every value, and moving GPUs touches GPUs only.
#include "workload/task_graph.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace mfabric::workload {
namespace {

Task compute_on(int gpu, Time d) {
  Task t;
  t.kind = TaskKind::Compute;
  t.set_gpu(gpu);
  t.set_duration(d);
  return t;
}

Task p2p(int from, int to, Bytes b) {
  Task t;
  t.kind = TaskKind::P2P;
  t.set_gpu(from);
  t.set_peer(to);
  t.set_bytes(b);
  return t;
}

Task collective(int group, int matrix, Bytes b) {
  Task t;
  t.kind = TaskKind::Collective;
  t.set_group(group);
  t.set_matrix(matrix);
  t.set_bytes(b);
  return t;
}

TEST(TaskRecord, EachKindReadsItsOwnFieldsAndEmptyOthers) {
  const Task c = compute_on(3, Time::milliseconds(5));
  EXPECT_EQ(c.gpu(), 3);
  EXPECT_EQ(c.duration(), Time::milliseconds(5));
  EXPECT_EQ(c.peer(), -1);
  EXPECT_EQ(c.group(), -1);
  EXPECT_EQ(c.matrix(), -1);
  EXPECT_EQ(c.bytes(), Bytes(0));

  const Task p = p2p(1, 2, Bytes(100));
  EXPECT_EQ(p.gpu(), 1);
  EXPECT_EQ(p.peer(), 2);
  EXPECT_EQ(p.bytes(), Bytes(100));
  EXPECT_EQ(p.duration(), Time::zero());
  EXPECT_EQ(p.group(), -1);
  EXPECT_EQ(p.matrix(), -1);

  const Task a = collective(4, 2, Bytes(64));
  EXPECT_EQ(a.group(), 4);
  EXPECT_EQ(a.matrix(), 2);
  EXPECT_EQ(a.bytes(), Bytes(64));
  EXPECT_EQ(a.gpu(), -1);
  EXPECT_EQ(a.peer(), -1);
  EXPECT_EQ(a.duration(), Time::zero());

  // The extremes fit: a duration of Time::max() and the largest transfer.
  EXPECT_EQ(compute_on(0, Time::max()).duration(), Time::max());
  EXPECT_EQ(p2p(0, 1, Bytes(kMaxTransferBytes)).bytes(), Bytes(kMaxTransferBytes));
}

TEST(TaskRecord, SettersRefuseAFieldTheKindHasNot) {
  Task c;  // compute
  EXPECT_THROW(c.set_peer(1), std::logic_error);
  EXPECT_THROW(c.set_group(1), std::logic_error);
  EXPECT_THROW(c.set_matrix(1), std::logic_error);
  EXPECT_THROW(c.set_bytes(Bytes(1)), std::logic_error);
  Task p;
  p.kind = TaskKind::P2P;
  EXPECT_THROW(p.set_duration(Time::zero()), std::logic_error);
  EXPECT_THROW(p.set_group(0), std::logic_error);
  EXPECT_THROW(p.set_matrix(0), std::logic_error);
  Task a;
  a.kind = TaskKind::Collective;
  EXPECT_THROW(a.set_gpu(0), std::logic_error);
  EXPECT_THROW(a.set_peer(0), std::logic_error);
  EXPECT_THROW(a.set_duration(Time::zero()), std::logic_error);
}

TEST(TaskRecord, TheBitFieldsHoldEveryEnumsLastValue) {
  Task t = collective(0, -1, Bytes(8));
  t.op = Op::CpKeyValueGrads;
  t.phase = Phase::Other;
  t.traffic = Traffic::CP;
  t.collective = CollectiveKind::Barrier;
  t.layer = 32767;
  t.micro_batch = 32767;
  t.iteration = 9999;
  TaskGraph g(2);
  g.add_group({0, 1});
  const Task& back = g.task(g.add(t));
  EXPECT_EQ(back.kind, TaskKind::Collective);
  EXPECT_EQ(back.op, Op::CpKeyValueGrads);
  EXPECT_EQ(back.phase, Phase::Other);
  EXPECT_EQ(back.traffic, Traffic::CP);
  EXPECT_EQ(back.collective, CollectiveKind::Barrier);
  EXPECT_EQ(back.layer, 32767);
  EXPECT_EQ(back.micro_batch, 32767);
  EXPECT_EQ(back.iteration, 9999);
  EXPECT_EQ(back.bytes(), Bytes(8));
  EXPECT_EQ(g.task(g.add(p2p(0, 1, Bytes(1)))).kind, TaskKind::P2P);
}

// GPU 0 <-> 1 swapped: the compute task's GPU and the P2P's ends move, the collective's group
// index and matrix stay (its members move in the group), and no field of another kind changes.
TEST(TaskRecord, MovingGpusTouchesGpusOnly) {
  TaskGraph g(2);
  const std::int32_t group = g.add_group({0, 1});
  const TaskId c = g.add(compute_on(0, Time::microseconds(7)));
  const TaskId p = g.add(p2p(0, 1, Bytes(5)), {c});
  const TaskId a = g.add(collective(group, -1, Bytes(9)), {p});
  const std::vector<std::int32_t> swap{1, 0};
  g.move_gpus(swap, 2);
  EXPECT_EQ(g.task(c).gpu(), 1);
  EXPECT_EQ(g.task(c).duration(), Time::microseconds(7));
  EXPECT_EQ(g.task(p).gpu(), 1);
  EXPECT_EQ(g.task(p).peer(), 0);
  EXPECT_EQ(g.task(p).bytes(), Bytes(5));
  EXPECT_EQ(g.task(a).group(), group);
  EXPECT_EQ(g.task(a).matrix(), -1);
  EXPECT_EQ(g.group(group), (std::vector<std::int32_t>{1, 0}));
}

}  // namespace
}  // namespace mfabric::workload
