// htsim connection matrices: parsing, triggers as dependencies, start times, and one clear line
// for every form mfabric cannot express.
#include "workload/connection_matrix.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace mfabric::workload {
namespace {

ConnectionMatrix parse(const std::string& text) {
  return parse_connection_matrix(text, "t.cm");
}

std::vector<TaskId> deps_of(const TaskGraph& g, TaskId id) {
  const auto d = g.deps(id);
  return {d.begin(), d.end()};
}

// The example of docs/formats.md: flow 2 starts when flow 1 is done.
TEST(ConnectionMatrix, TheDocumentedExample) {
  const ConnectionMatrix cm = parse(
      "Nodes 16\n"
      "Connections 2\n"
      "2->11 id 1 start 0 size 2000000 send_done_trigger 1\n"
      "2->4 id 2 trigger 1 size 2000000\n"
      "trigger id 1 oneshot\n");
  EXPECT_EQ(cm.nodes, 16);
  ASSERT_EQ(cm.flows.size(), 2u);
  EXPECT_EQ(cm.flows[0].src, 2);
  EXPECT_EQ(cm.flows[0].dst, 11);
  EXPECT_EQ(cm.flows[0].start, Time::zero());
  EXPECT_EQ(cm.flows[1].start, Time::max());
  const auto waits = cm.waits_for(1);
  EXPECT_EQ(std::vector<std::size_t>(waits.begin(), waits.end()), std::vector<std::size_t>{0});

  const TaskGraph g = connection_matrix_graph(cm, "t.cm");
  EXPECT_EQ(g.gpus(), 16);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.task(0).kind, TaskKind::P2P);
  EXPECT_EQ(g.task(0).gpu(), 2);
  EXPECT_EQ(g.task(0).peer(), 11);
  EXPECT_EQ(g.task(0).bytes(), Bytes(2'000'000));
  EXPECT_EQ(g.task(0).traffic, Traffic::Other);
  EXPECT_EQ(g.task(1).peer(), 4);
  EXPECT_EQ(deps_of(g, 1), std::vector<TaskId>{0});
  EXPECT_FALSE(g.has_start_times());  // start 0 is no constraint
}

TEST(ConnectionMatrix, StartTimesAreMicroseconds) {
  const ConnectionMatrix cm = parse(
      "Nodes 2\n"
      "0->1 id 7 start 2.5 size 100\n"
      "1->0 id 8 start 40 size 100\n");
  EXPECT_EQ(cm.flows[0].start, Time::picoseconds(2'500'000));
  const TaskGraph g = connection_matrix_graph(cm, "t.cm");
  EXPECT_EQ(g.not_before(0), Time::picoseconds(2'500'000));
  EXPECT_EQ(g.not_before(1), Time::picoseconds(40'000'000));
}

// A barrier of 3 waits for all three flows that fire it; a flow may wait for flows written
// after it (the graph is ordered so that dependencies come first).
TEST(ConnectionMatrix, BarriersAndForwardReferences) {
  const ConnectionMatrix cm = parse(
      "Nodes 4\n"
      "Triggers 2\n"
      "3->0 id 10 trigger 5 size 64\n"
      "0->1 id 1 start 0 size 64 send_done_trigger 5\n"
      "1->2 id 2 start 0 size 64 recv_done_trigger 5\n"
      "2->3 id 3 trigger 6 size 64 send_done_trigger 5\n"
      "0->2 id 4 start 0 size 64 send_done_trigger 6\n"
      "trigger id 5 barrier 3\n"
      "trigger id 6 oneshot\n");
  const TaskGraph g = connection_matrix_graph(cm, "t.cm");
  ASSERT_EQ(g.size(), 5u);
  // Ready first, in file order: ids 1, 2, 4; then 3 (after 4); then 10 (after 1, 2, 3).
  EXPECT_EQ(g.task(0).gpu(), 0);
  EXPECT_EQ(g.task(1).gpu(), 1);
  EXPECT_EQ(g.task(2).peer(), 2);  // id 4: 0->2
  EXPECT_EQ(deps_of(g, 3), std::vector<TaskId>{2});
  EXPECT_EQ(g.task(4).gpu(), 3);  // id 10: 3->0
  EXPECT_EQ(deps_of(g, 4), (std::vector<TaskId>{0, 1, 3}));
  // Each task keeps its flow's id, for outputs joined with htsim's.
  const std::vector<std::int64_t> ids{1, 2, 4, 3, 10};
  for (TaskId t = 0; t < 5; ++t)
    EXPECT_EQ(g.source_id(t), ids[static_cast<std::size_t>(t)]) << t;
}

TEST(ConnectionMatrix, CommentsBlankLinesAndPriority) {
  const ConnectionMatrix cm = parse(
      "# a comment\n\nNodes 2\r\n"
      "  0->1 id 1 start 0 size 5 priority 3\n");
  ASSERT_EQ(cm.flows.size(), 1u);
  EXPECT_EQ(cm.flows[0].size, Bytes(5));
}

void expect_error(const std::string& text, const std::string& field, const std::string& part) {
  try {
    connection_matrix_graph(parse(text), "t.cm");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "t.cm");
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(ConnectionMatrix, WhatCannotBeExpressedIsOneLine) {
  const std::string nodes = "Nodes 4\n";
  expect_error("", "Nodes", "expected a 'Nodes COUNT' line");
  expect_error("0->1 id 1 start 0 size 5\n", "line 1", "before the 'Nodes COUNT' line");
  expect_error(nodes + "0->4 id 1 start 0 size 5\n", "line 2", "the destination node must be");
  expect_error(nodes + "0->1 id 1 start 0 size -5\n", "line 2", "size (bytes) must be");
  expect_error(nodes + "0->1 id 1 start -1 size 5\n", "line 2", "start must be a time");
  expect_error(nodes + "0->1 id 1 size 5\n", "line 2", "needs 'start MICROSECONDS' or");
  expect_error(nodes + "0->1 id 1 start 0 size 5 trigger 1\ntrigger id 1 oneshot\n", "line 2",
               "not both");
  expect_error(nodes + "0->1 id 1 start 0\n", "line 2", "needs 'size BYTES'");
  expect_error(nodes + "0->1 start 0 size 5\n", "line 2", "needs 'id N'");
  expect_error(nodes + "0->1 id 1 start 0 size 5 colour red\n", "line 2",
               "unknown flow attribute 'colour'");
  expect_error(nodes + "0->1 id 1 start 0 size 5\n0->2 id 1 start 0 size 5\n", "line 3",
               "flow id 1 is used twice");
  expect_error(nodes + "Connections 3\n0->1 id 1 start 0 size 5\n", "Connections",
               "says 3 flows but the file has 1");
  expect_error(nodes + "Triggers 1\n0->1 id 1 start 0 size 5\n", "Triggers",
               "says 1 triggers but the file declares 0");
  expect_error(nodes + "0->1 id 1 start 0 size 5 send_done_trigger 9\n", "line 2",
               "trigger 9 is not declared");
  expect_error(nodes + "0->1 id 1 trigger 2 size 5\ntrigger id 2 oneshot\n", "line 3",
               "trigger 2 is never fired");
  expect_error(nodes +
                   "0->1 id 1 start 0 size 5 send_done_trigger 2\n"
                   "0->2 id 2 start 0 size 5 send_done_trigger 2\n"
                   "0->3 id 3 trigger 2 size 5\ntrigger id 2 oneshot\n",
               "line 5", "oneshot trigger 2 is fired by 2 flows");
  expect_error(nodes +
                   "0->1 id 1 start 0 size 5 send_done_trigger 2\n"
                   "0->3 id 3 trigger 2 size 5\ntrigger id 2 barrier 2\n",
               "line 4", "barrier trigger 2 waits for 2 flows but 1 flows fire it");
  expect_error(nodes + "trigger id 2 multishot\n", "line 2", "multishot triggers are not");
  expect_error(nodes + "trigger id 2 oneshot\ntrigger id 2 oneshot\n", "line 3",
               "trigger 2 is declared twice");
  expect_error(nodes + "Grp 0 1 2 3\n", "line 2", "Grp");
  expect_error(nodes + "0->0 id 1 start_bcast 0 size 5\n", "line 2", "start_bcast");
  expect_error(nodes + "Links 3\n", "line 2", "expected 'Nodes', 'Connections'");
  expect_error(nodes +
                   "0->1 id 1 trigger 1 size 5 send_done_trigger 2\n"
                   "1->2 id 2 trigger 2 size 5 send_done_trigger 1\n"
                   "trigger id 1 oneshot\ntrigger id 2 oneshot\n",
               "line 2", "flow id 1 waits on a cycle of triggers");
}

TEST(ConnectionMatrix, AnUnreadableFileNamesItsPath) {
  try {
    read_connection_matrix("/nonexistent/x.cm");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.cm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mfabric::workload
