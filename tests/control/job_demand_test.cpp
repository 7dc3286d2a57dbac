#include "control/job_demand.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "control/topoopt.h"
#include "core/error.h"
#include "workload/tiny_model.h"
#include "workload/training.h"

namespace mfabric::control {
namespace {

using workload::CollectiveKind;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

void add_collective(TaskGraph& graph, CollectiveKind kind, std::vector<std::int32_t> gpus,
                    std::int64_t bytes, std::int32_t matrix = -1) {
  Task t;
  t.kind = TaskKind::Collective;
  t.collective = kind;
  t.set_group(graph.add_group(std::move(gpus)));
  t.set_matrix(matrix);
  t.set_bytes(Bytes(bytes));
  graph.add(t);
}

void add_p2p(TaskGraph& graph, int from, int to, std::int64_t bytes) {
  Task t;
  t.kind = TaskKind::P2P;
  t.set_gpu(from);
  t.set_peer(to);
  t.set_bytes(Bytes(bytes));
  graph.add(t);
}

TEST(JobDemand, ServerCountRoundsUp) {
  EXPECT_EQ(job_demand(TaskGraph(9), 4).servers, 3);
  EXPECT_EQ(job_demand(TaskGraph(8), 4).servers, 2);
  EXPECT_EQ(job_demand(TaskGraph(0), 8).servers, 0);
}

TEST(JobDemand, AllReduceGroupsOnTheSameServersAreOneRing) {
  // 2 GPUs per server, servers 0..3. Two DP groups (local index 0 and 1) span the same servers.
  TaskGraph graph(8);
  add_collective(graph, CollectiveKind::AllReduce, {0, 2, 4, 6}, 100);
  add_collective(graph, CollectiveKind::AllReduce, {1, 3, 5, 7}, 50);
  add_collective(graph, CollectiveKind::AllReduce, {6, 4, 2, 0}, 10);  // same servers, reordered
  const JobDemand d = job_demand(graph, 2);
  ASSERT_EQ(d.rings.size(), 1u);
  EXPECT_EQ(d.rings[0].servers, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(d.rings[0].buffer_bytes.count(), 160);
  // 2 (m - 1) S with m = 4: 6 x 160.
  EXPECT_EQ(d.rings[0].network_bytes.count(), 960);
  EXPECT_EQ(d.rings[0].tasks, 3);
  EXPECT_EQ(d.ring_network_bytes().count(), 960);
  EXPECT_EQ(d.pairs.total().count(), 0);
}

TEST(JobDemand, ServerLocalCollectivesAreDropped) {
  TaskGraph graph(8);
  add_collective(graph, CollectiveKind::AllReduce, {0, 1}, 1000);  // TP inside server 0
  add_collective(graph, CollectiveKind::AllToAll, {2, 3}, 1000);   // inside server 1
  add_p2p(graph, 4, 5, 1000);                                      // inside server 2
  const JobDemand d = job_demand(graph, 2);
  EXPECT_TRUE(d.rings.empty());
  EXPECT_EQ(d.pairs.total().count(), 0);
}

TEST(JobDemand, ReduceScatterAllGatherAndBroadcastCountOnePass) {
  TaskGraph graph(6);
  add_collective(graph, CollectiveKind::ReduceScatter, {0, 2}, 40);  // servers 0, 1
  add_collective(graph, CollectiveKind::AllGather, {0, 2}, 10);
  add_collective(graph, CollectiveKind::Broadcast, {0, 2, 4}, 7);  // servers 0, 1, 2
  add_collective(graph, CollectiveKind::Barrier, {0, 2, 4}, 0);
  const JobDemand d = job_demand(graph, 2);
  ASSERT_EQ(d.rings.size(), 2u);
  EXPECT_EQ(d.rings[0].servers, (std::vector<int>{0, 1}));
  EXPECT_EQ(d.rings[0].buffer_bytes.count(), 50);
  EXPECT_EQ(d.rings[0].network_bytes.count(), 50);  // (2 - 1) x (40 + 10)
  EXPECT_EQ(d.rings[1].servers, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(d.rings[1].network_bytes.count(), 14);  // (3 - 1) x 7
  EXPECT_EQ(d.rings[1].tasks, 1);
}

TEST(JobDemand, UniformAllToAllCountsCrossServerMemberPairs) {
  // Members 0, 1 on server 0 and 2, 3 on server 1: 4 member pairs each way cross.
  TaskGraph graph(4);
  add_collective(graph, CollectiveKind::AllToAll, {0, 1, 2, 3}, 400);  // 100 per member pair
  add_collective(graph, CollectiveKind::AllToAll, {0, 1, 2, 3}, 401);  // ceil(401 / 4) = 101
  const JobDemand d = job_demand(graph, 2);
  EXPECT_TRUE(d.rings.empty());
  EXPECT_EQ(d.pairs.at(0, 1).count(), 2 * 4 * (100 + 101));
  EXPECT_EQ(d.pairs.at(1, 0).count(), d.pairs.at(0, 1).count());
}

TEST(JobDemand, UniformAllToAllWithUnevenMembersPerServer) {
  // 3 members on server 0 (GPUs 0-2), 1 on server 1 (GPU 4); n = 4, 10 bytes per member pair.
  TaskGraph graph(8);
  add_collective(graph, CollectiveKind::AllToAll, {0, 1, 2, 4}, 40);
  const JobDemand d = job_demand(graph, 4);
  EXPECT_EQ(d.pairs.at(0, 1).count(), 2 * 3 * 10);
}

TEST(JobDemand, AllToAllVMatrixSumsBothDirections) {
  TaskGraph graph(6);
  workload::ByteMatrix m(3);  // members: GPU 0 (server 0), GPU 2 (server 1), GPU 4 (server 2)
  m.at(0, 1) = 5;
  m.at(1, 0) = 7;
  m.at(0, 2) = 11;
  m.at(2, 1) = 13;
  m.at(1, 1) = 1000;  // to itself: never leaves the GPU
  add_collective(graph, CollectiveKind::AllToAll, {0, 2, 4}, 36, graph.add_matrix(m));
  const JobDemand d = job_demand(graph, 2);
  EXPECT_EQ(d.pairs.at(0, 1).count(), 12);
  EXPECT_EQ(d.pairs.at(0, 2).count(), 11);
  EXPECT_EQ(d.pairs.at(1, 2).count(), 13);
  EXPECT_EQ(d.pairs.total().count(), 36);
}

TEST(JobDemand, PointToPointAddsToThePair) {
  TaskGraph graph(6);
  add_p2p(graph, 0, 5, 70);  // server 0 -> 2
  add_p2p(graph, 2, 1, 30);  // server 1 -> 0
  add_p2p(graph, 3, 0, 5);   // server 1 -> 0
  const JobDemand d = job_demand(graph, 2);
  EXPECT_EQ(d.pairs.at(0, 2).count(), 70);
  EXPECT_EQ(d.pairs.at(0, 1).count(), 35);
  EXPECT_EQ(d.pairs.at(1, 2).count(), 0);
  EXPECT_EQ(d.pairs.partners(0), (std::vector<int>{1, 2}));
}

TEST(JobDemand, MixedJobSplitsRingsFromPairs) {
  // 4 servers of 2 GPUs: a DP all-reduce over all servers, an EP all-to-all on servers 0-1 and
  // a pipeline transfer 1 -> 2.
  TaskGraph graph(8);
  add_collective(graph, CollectiveKind::AllReduce, {0, 2, 4, 6}, 10);
  add_collective(graph, CollectiveKind::AllToAll, {0, 1, 2, 3}, 8);  // 2 per member pair
  add_p2p(graph, 3, 4, 100);
  const JobDemand d = job_demand(graph, 2);
  ASSERT_EQ(d.rings.size(), 1u);
  EXPECT_EQ(d.rings[0].network_bytes.count(), 60);
  EXPECT_EQ(d.pairs.at(0, 1).count(), 16);
  EXPECT_EQ(d.pairs.at(1, 2).count(), 100);
  EXPECT_EQ(d.pairs.total().count(), 116);
}

TEST(JobDemand, BadInputIsAnError) {
  TaskGraph graph(4);
  EXPECT_THROW(job_demand(graph, 0), Error);

  TaskGraph outside(4);
  add_p2p(outside, 0, 9, 10);
  EXPECT_THROW(job_demand(outside, 2), Error);

  TaskGraph negative(4);
  workload::ByteMatrix m(2);
  m.at(0, 1) = -1;
  add_collective(negative, CollectiveKind::AllToAll, {0, 2}, 0, negative.add_matrix(m));
  EXPECT_THROW(job_demand(negative, 2), Error);

  TaskGraph wrong_size(4);
  add_collective(wrong_size, CollectiveKind::AllToAll, {0, 2}, 0,
                 wrong_size.add_matrix(workload::ByteMatrix(3)));
  EXPECT_THROW(job_demand(wrong_size, 2), Error);

  TaskGraph negative_bytes(4);
  add_collective(negative_bytes, CollectiveKind::AllReduce, {0, 2}, -5);
  EXPECT_THROW(job_demand(negative_bytes, 2), Error);
}

// A whole training job: TP 2 x EP 2 x DP 2 x PP 2 on servers of 2 GPUs. Ranks are laid out TP
// innermost, then EP, DP, PP (docs/workload.md), so server = ep + 2 dp + 4 pp and TP never leaves
// a server.
TEST(JobDemand, TrainingJobSplitsByParallelism) {
  const workload::TrainingSpec spec =
      workload::testing::tiny_job(workload::paper_parallelism(2, 2, 2, 2), 2, 2, 16, 12);
  const TaskGraph graph =
      workload::build_training_graph(spec, workload::synthetic_trace_for(spec, {}, 7));
  const JobDemand d = job_demand(graph, 2);
  ASSERT_EQ(d.servers, 8);
  // Gradient all-reduces: non-expert parameters over EP x DP (servers 0-3 per stage), expert
  // parameters over DP (servers ep, ep + 2 per stage).
  std::vector<std::vector<int>> rings;
  for (const RingDemand& r : d.rings) {
    rings.push_back(r.servers);
    EXPECT_GT(r.network_bytes.count(), 0);
  }
  EXPECT_EQ(rings, (std::vector<std::vector<int>>{
                       {0, 1, 2, 3}, {0, 2}, {1, 3}, {4, 5, 6, 7}, {4, 6}, {5, 7}}));
  // Pairs: EP all-to-all between the two EP ranks (servers 2k, 2k + 1), pipeline transfers
  // between stages (s, s + 4). Nothing else.
  const std::set<std::pair<int, int>> expected{{0, 1}, {2, 3}, {4, 5}, {6, 7},
                                               {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      EXPECT_EQ(d.pairs.at(a, b).count() > 0, expected.count({a, b}) == 1) << a << "-" << b;
    }
  }
  const TopoOptTopology t = plan_topoopt(d, 8, 4);
  EXPECT_TRUE(t.connected);
  EXPECT_EQ(t.unused_nics, 0);
}

TEST(PairDemand, IsSymmetricAndChecksItsInput) {
  PairDemand p(3);
  p.add(2, 0, Bytes(5));
  p.add(0, 2, Bytes(1));
  EXPECT_EQ(p.at(0, 2).count(), 6);
  EXPECT_EQ(p.at(2, 0).count(), 6);
  EXPECT_EQ(p.at(1, 1).count(), 0);
  p.set(1, 2, Bytes(4));
  EXPECT_EQ(p.total().count(), 10);
  EXPECT_THROW(p.add(0, 1, Bytes(-1)), Error);
  EXPECT_THROW(p.set(0, 1, Bytes(-1)), Error);
  EXPECT_THROW(p.add(0, 0, Bytes(1)), Error);
  EXPECT_THROW(p.add(0, 3, Bytes(1)), Error);
  EXPECT_THROW(PairDemand(-1), Error);
  p.set(0, 1, Bytes(INT64_MAX));
  EXPECT_THROW(p.add(0, 1, Bytes(1)), Error);
}

}  // namespace
}  // namespace mfabric::control
