// What an htsim connection matrix costs grows with the file: a barrier's dependencies are its
// firing flows plus its waiting flows (one barrier task between them), not their product; and a
// matrix estimated above the memory limit is refused, with the estimate, before its graph is
// built (issue 24: a 1.6 MB barrier of 20,000 flows waiting on 20,000 exhausted 4 GB).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "workload/connection_matrix.h"

namespace mfabric::workload {
namespace {

// `fired` flows fire barrier 1, `waiting` flows start when it fires; 64 nodes.
std::string barrier_matrix(int fired, int waiting) {
  std::string text = "Nodes 64\nTriggers 1\n";
  int id = 1;
  for (int i = 0; i < fired; ++i, ++id) {
    text += std::to_string(i % 64) + "->" + std::to_string((i + 1) % 64) + " id " +
            std::to_string(id) + " start 0 size 1000 send_done_trigger 1\n";
  }
  for (int i = 0; i < waiting; ++i, ++id) {
    text += std::to_string((i + 3) % 64) + "->" + std::to_string((i + 5) % 64) + " id " +
            std::to_string(id) + " trigger 1 size 1000\n";
  }
  return text + "trigger id 1 barrier " + std::to_string(fired) + "\n";
}

TEST(ConnectionMatrixSize, ABarrierCostsItsFlowsNotTheirProduct) {
  constexpr int kFired = 20'000;
  constexpr int kWaiting = 20'000;
  const ConnectionMatrix cm = parse_connection_matrix(barrier_matrix(kFired, kWaiting), "t.cm");
  ASSERT_EQ(cm.flows.size(), static_cast<std::size_t>(kFired + kWaiting));
  ASSERT_EQ(cm.triggers.size(), 1u);
  EXPECT_TRUE(cm.triggers[0].is_task());
  EXPECT_EQ(cm.dependencies, kFired + kWaiting);  // not kFired x kWaiting
  EXPECT_EQ(cm.tasks, kFired + kWaiting + 1);
  // Every waiting flow still waits for all the firing ones (one shared list).
  EXPECT_EQ(cm.waits_for(kFired).size(), static_cast<std::size_t>(kFired));
  EXPECT_EQ(cm.waits_for(kFired).data(), cm.waits_for(kFired + kWaiting - 1).data());
  EXPECT_TRUE(cm.waits_for(0).empty());

  const TaskGraph g = connection_matrix_graph(cm, "t.cm");
  ASSERT_EQ(g.size(), static_cast<std::size_t>(kFired + kWaiting + 1));
  std::size_t dependencies = 0;
  for (TaskId t = 0; t < static_cast<TaskId>(g.size()); ++t)
    dependencies += g.deps(t).size();
  EXPECT_EQ(dependencies, static_cast<std::size_t>(kFired + kWaiting));
  // The firing flows first (ready at 0, file order), then the barrier after all of them, then
  // the waiting flows after the barrier alone.
  const TaskId barrier = kFired;
  const Task& b = g.task(barrier);
  EXPECT_EQ(b.kind, TaskKind::Collective);
  EXPECT_EQ(b.collective, CollectiveKind::Barrier);
  EXPECT_EQ(b.traffic, Traffic::None);
  EXPECT_EQ(b.bytes(), Bytes(0));
  EXPECT_EQ(g.group(b.group()), std::vector<std::int32_t>{3});  // the first waiting flow's source
  EXPECT_EQ(g.source_id(barrier), -1);
  EXPECT_EQ(g.deps(barrier).size(), static_cast<std::size_t>(kFired));
  for (TaskId t = 0; t < barrier; ++t) {
    EXPECT_TRUE(g.deps(t).empty());
    EXPECT_EQ(g.source_id(t), t + 1);
  }
  for (TaskId t = barrier + 1; t < static_cast<TaskId>(g.size()); ++t) {
    ASSERT_EQ(g.deps(t).size(), 1u);
    EXPECT_EQ(g.deps(t)[0], barrier);
    EXPECT_EQ(g.task(t).kind, TaskKind::P2P);
    EXPECT_EQ(g.source_id(t), t);  // flow ids kFired + 1, ... after the barrier's task
  }
}

// One firing or one waiting flow: the dependencies are direct (a task would save nothing), so
// such matrices keep the graphs they had.
TEST(ConnectionMatrixSize, ABarrierWithOneSideOfOneFlowHasNoTask) {
  for (const auto& [fired, waiting] : {std::pair{1, 5}, std::pair{5, 1}, std::pair{3, 0}}) {
    const ConnectionMatrix cm = parse_connection_matrix(barrier_matrix(fired, waiting), "t.cm");
    EXPECT_FALSE(cm.triggers[0].is_task());
    EXPECT_EQ(cm.dependencies, fired * waiting);
    const TaskGraph g = connection_matrix_graph(cm, "t.cm");
    EXPECT_EQ(g.size(), static_cast<std::size_t>(fired + waiting));
    for (TaskId t = 0; t < static_cast<TaskId>(g.size()); ++t)
      EXPECT_EQ(g.task(t).kind, TaskKind::P2P);
  }
}

// Two barriers: each barrier's task comes just before the flows it releases, which keep the
// file's order among themselves.
TEST(ConnectionMatrixSize, TriggerTasksComeJustBeforeTheFlowsTheyRelease) {
  const ConnectionMatrix cm = parse_connection_matrix(
      "Nodes 4\n"
      "0->1 id 1 start 0 size 10 send_done_trigger 7 send_done_trigger 8\n"
      "1->2 id 2 start 0 size 10 send_done_trigger 7\n"
      "2->3 id 3 start 0 size 10 send_done_trigger 8\n"
      "3->0 id 4 trigger 8 size 10\n"
      "0->2 id 5 trigger 7 size 10\n"
      "1->3 id 6 trigger 8 size 10\n"
      "2->0 id 7 trigger 7 size 10\n"
      "trigger id 7 barrier 2\n"
      "trigger id 8 barrier 2\n",
      "t.cm");
  EXPECT_EQ(cm.dependencies, 8);
  const TaskGraph g = connection_matrix_graph(cm, "t.cm");
  ASSERT_EQ(g.size(), 9u);
  // Flows 1, 2, 3 are ready at 0. Barrier 7 completes with flow 2: its task, then flows 5 and 7;
  // barrier 8 completes with flow 3: its task, then flows 4 and 6 (the flows in the order they
  // had before barriers were tasks).
  const std::vector<std::int64_t> ids{1, 2, 3, -1, 5, 7, -1, 4, 6};
  for (TaskId t = 0; t < 9; ++t)
    EXPECT_EQ(g.source_id(t), ids[static_cast<std::size_t>(t)]) << t;
  const auto deps = [&](TaskId t) {
    return std::vector<TaskId>(g.deps(t).begin(), g.deps(t).end());
  };
  EXPECT_EQ(deps(3), (std::vector<TaskId>{0, 1}));
  EXPECT_EQ(deps(6), (std::vector<TaskId>{0, 2}));
  EXPECT_EQ(deps(4), std::vector<TaskId>{3});
  EXPECT_EQ(deps(5), std::vector<TaskId>{3});
  EXPECT_EQ(deps(7), std::vector<TaskId>{6});
  EXPECT_EQ(deps(8), std::vector<TaskId>{6});
}

TEST(ConnectionMatrixSize, AMatrixAboveTheMemoryLimitIsRefusedWithItsEstimate) {
  // The header's count alone: 10 million flows at about 800 bytes each (8 GB), against 1 GiB.
  try {
    parse_connection_matrix("Nodes 4\nConnections 10000000\n0->1 id 1 start 0 size 5\n", "t.cm",
                            Bytes(std::int64_t{1} << 30));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "t.cm");
    EXPECT_EQ(e.field(), "Connections");
    EXPECT_NE(e.message().find("10000000 flows need an estimated 8GB of memory"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("more than the limit of 1GiB"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("simulation.max_memory"), std::string::npos) << e.what();
  }
  // Without a header: reading stops at the flow that passes the limit.
  const std::string text = barrier_matrix(2000, 2000);
  const std::int64_t limit = 1'000'000;
  try {
    parse_connection_matrix(text, "t.cm", Bytes(limit));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "t.cm");
    EXPECT_EQ(e.field().rfind("line ", 0), 0u) << e.what();
    EXPECT_NE(e.message().find("the matrix needs more memory than the limit of"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("an estimated"), std::string::npos) << e.what();
  }
  // The same matrix under a limit that holds it.
  const ConnectionMatrix cm = parse_connection_matrix(
      text, "t.cm",
      Bytes(estimate_connection_matrix_memory(4000, 4000, static_cast<std::int64_t>(text.size()))));
  EXPECT_EQ(cm.flows.size(), 4000u);
}

}  // namespace
}  // namespace mfabric::workload
