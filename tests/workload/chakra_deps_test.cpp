// Chakra reader, dependencies: the control-dependency policies (strict, relaxed, ignore) on
// dangling and cyclic control dependencies, and data cycles, which are errors under every
// policy (docs/chakra.md, "Dependencies").
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workload/chakra_test_util.h"

namespace mfabric::workload {
namespace {

using namespace chakra_testing;

ChakraOptions with(ControlDeps policy) {
  ChakraOptions o;
  o.control_deps = policy;
  return o;
}

// Task of each node of a one-rank trace whose compute nodes have distinct durations (in us):
// duration -> task.
std::map<std::int64_t, TaskId> by_duration(const TaskGraph& g) {
  std::map<std::int64_t, TaskId> out;
  for (TaskId t = 0; t < static_cast<TaskId>(g.size()); ++t)
    out[g.task(t).duration().ps() / 1'000'000] = t;
  return out;
}

TEST(ChakraDeps, PolicyNames) {
  EXPECT_EQ(parse_control_deps("strict"), ControlDeps::Strict);
  EXPECT_EQ(parse_control_deps("relaxed"), ControlDeps::Relaxed);
  EXPECT_EQ(parse_control_deps("ignore"), ControlDeps::Ignore);
  EXPECT_STREQ(to_string(ControlDeps::Relaxed), "relaxed");
  EXPECT_THROW(parse_control_deps("lenient"), Error);
  EXPECT_EQ(ChakraOptions{}.control_deps, ControlDeps::Relaxed);  // the documented default
}

// Node 2's control dependency names node 99, which the file does not have.
void write_dangling(const std::string& prefix) {
  write_rank(prefix, 0, {comp(1, 1), comp_ctrl(2, 2, {99, 1}), comp(3, 3, {2})});
}

TEST(ChakraDeps, DanglingControlDependencyIsAnErrorWhenStrict) {
  TempDir dir;
  write_dangling(dir.prefix());
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node 2 (n2)", "control dependency on node 99", "not in this file", "relaxed"},
               with(ControlDeps::Strict));
}

TEST(ChakraDeps, DanglingControlDependencyIsDroppedAndCountedWhenRelaxed) {
  TempDir dir;
  write_dangling(dir.prefix());
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), with(ControlDeps::Relaxed), &s);
  EXPECT_EQ(s.dangling_control_deps, 1);
  EXPECT_EQ(s.cyclic_control_deps, 0);
  EXPECT_EQ(s.ignored_control_deps, 0);
  ASSERT_EQ(g.size(), 3u);
  const auto task = by_duration(g);
  // The control dependency on node 1, which exists, is kept.
  EXPECT_EQ(deps_of(g, task.at(2)), (std::vector<TaskId>{task.at(1)}));
  EXPECT_EQ(deps_of(g, task.at(3)), (std::vector<TaskId>{task.at(2)}));
}

TEST(ChakraDeps, IgnoreDropsEveryControlDependency) {
  TempDir dir;
  write_dangling(dir.prefix());
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), with(ControlDeps::Ignore), &s);
  EXPECT_EQ(s.ignored_control_deps, 2);
  EXPECT_EQ(s.dangling_control_deps, 0);
  const auto task = by_duration(g);
  EXPECT_TRUE(deps_of(g, task.at(2)).empty());
  EXPECT_EQ(deps_of(g, task.at(3)), (std::vector<TaskId>{task.at(2)}));  // data kept
}

// Data: 1 -> 2 -> 3 (a chain). Control: node 1 after node 3 (closes the cycle 1 -> 2 -> 3 -> 1)
// and node 4 after node 3 (no cycle). This is the shape of PyTorch-collected traces, whose
// control dependencies follow the host call stack while the data dependencies form a DAG.
void write_control_cycle(const std::string& prefix) {
  pb::Node first = comp_ctrl(1, 1, {3});
  write_rank(prefix, 0, {first, comp(2, 2, {1}), comp(3, 3, {2}), comp_ctrl(4, 4, {3})});
}

TEST(ChakraDeps, ControlCycleIsAnErrorWhenStrict) {
  TempDir dir;
  write_control_cycle(dir.prefix());
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"dependency cycle", "node 1 -> node 2 -> node 3 -> node 1", "control"},
               with(ControlDeps::Strict));
}

TEST(ChakraDeps, ControlEdgeClosingACycleIsDroppedWhenRelaxed) {
  TempDir dir;
  write_control_cycle(dir.prefix());
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), with(ControlDeps::Relaxed), &s);
  EXPECT_EQ(s.cyclic_control_deps, 1);
  EXPECT_EQ(s.dangling_control_deps, 0);
  const auto task = by_duration(g);
  EXPECT_TRUE(deps_of(g, task.at(1)).empty());
  EXPECT_EQ(deps_of(g, task.at(2)), (std::vector<TaskId>{task.at(1)}));
  EXPECT_EQ(deps_of(g, task.at(3)), (std::vector<TaskId>{task.at(2)}));
  EXPECT_EQ(deps_of(g, task.at(4)), (std::vector<TaskId>{task.at(3)}));  // kept: no cycle
}

TEST(ChakraDeps, ControlCycleIgnored) {
  TempDir dir;
  write_control_cycle(dir.prefix());
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), with(ControlDeps::Ignore), &s);
  EXPECT_EQ(s.ignored_control_deps, 2);
  EXPECT_TRUE(deps_of(g, by_duration(g).at(4)).empty());
}

TEST(ChakraDeps, EachControlCycleLosesOneEdge) {
  // Two separate two-node control cycles and a control self-dependency: three edges dropped,
  // the other two control edges kept.
  TempDir dir;
  write_rank(dir.prefix(), 0,
             {comp_ctrl(10, 10, {11}), comp_ctrl(11, 11, {10}), comp_ctrl(20, 20, {21}),
              comp_ctrl(21, 21, {20}), comp_ctrl(30, 30, {30})});
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.cyclic_control_deps, 3);
  const auto task = by_duration(g);
  // Smallest id first: node 10 starts, so its edge from 11 is the one dropped.
  EXPECT_TRUE(deps_of(g, task.at(10)).empty());
  EXPECT_EQ(deps_of(g, task.at(11)), (std::vector<TaskId>{task.at(10)}));
  EXPECT_EQ(deps_of(g, task.at(21)), (std::vector<TaskId>{task.at(20)}));
  EXPECT_TRUE(deps_of(g, task.at(30)).empty());
}

TEST(ChakraDeps, ControlEdgesOutsideACycleAreKept) {
  // 1 and 2 form a control cycle; 3 waits (control) for 2 and 4 for 3. Only one edge of the
  // cycle goes; the edges into the cycle's successors stay.
  TempDir dir;
  write_rank(
      dir.prefix(), 0,
      {comp_ctrl(1, 1, {2}), comp_ctrl(2, 2, {1}), comp_ctrl(3, 3, {2}), comp_ctrl(4, 4, {3})});
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.cyclic_control_deps, 1);
  const auto task = by_duration(g);
  EXPECT_EQ(deps_of(g, task.at(3)), (std::vector<TaskId>{task.at(2)}));
  EXPECT_EQ(deps_of(g, task.at(4)), (std::vector<TaskId>{task.at(3)}));
}

TEST(ChakraDeps, ADependencyThatIsBothDataAndControlIsData) {
  TempDir dir;
  pb::Node both = comp(2, 2, {1});
  both.add_ctrl_deps(1);
  write_rank(dir.prefix(), 0, {comp(1, 1), both});
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), with(ControlDeps::Ignore), &s);
  EXPECT_EQ(s.ignored_control_deps, 0);
  const auto task = by_duration(g);
  EXPECT_EQ(deps_of(g, task.at(2)), (std::vector<TaskId>{task.at(1)}));
}

TEST(ChakraDeps, DataCycleIsAnErrorUnderEveryPolicy) {
  for (ControlDeps policy : {ControlDeps::Strict, ControlDeps::Relaxed, ControlDeps::Ignore}) {
    TempDir dir;
    write_rank(dir.prefix(), 0, {comp(1, 1), comp(2, 1, {1, 4}), comp(3, 1, {2}), comp(4, 1, {3})});
    expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
                 {"data dependency cycle", "node 2 -> node 3 -> node 4 -> node 2"}, with(policy));
  }
}

TEST(ChakraDeps, DataSelfDependencyIsACycle) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1), comp(2, 1, {2})});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node 2 (n2)", "data dependency cycle", "node 2 -> node 2"});
}

TEST(ChakraDeps, MissingDataDependencyIsAnErrorUnderEveryPolicy) {
  for (ControlDeps policy : {ControlDeps::Strict, ControlDeps::Relaxed, ControlDeps::Ignore}) {
    TempDir dir;
    write_rank(dir.prefix(), 0, {comp(1, 1), comp(2, 1, {99})});
    expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node 2 (n2)", "node 99"},
                 with(policy));
  }
}

TEST(ChakraDeps, ManyInterleavedCyclesStayDeterministicAndAcyclic) {
  // A data chain of 300 nodes with a control edge from every node to the one 7 before it
  // (closing a cycle each time, as 7 before it reaches it by data) and to the one 5 after it
  // (a forward edge, no cycle). Relaxed reading must keep every data edge and every forward
  // control edge and drop exactly the backward ones.
  TempDir dir;
  const int n = 300;
  std::vector<pb::Node> nodes;
  for (int i = 1; i <= n; ++i) {
    pb::Node node = i == 1 ? comp(1, 1)
                           : comp(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i),
                                  {static_cast<std::uint64_t>(i - 1)});
    node.set_duration_micros(static_cast<std::uint64_t>(i));
    if (i + 7 <= n) node.add_ctrl_deps(static_cast<std::uint64_t>(i + 7));  // backward
    if (i - 5 >= 1) node.add_ctrl_deps(static_cast<std::uint64_t>(i - 5));  // forward
    nodes.push_back(node);
  }
  write_rank(dir.prefix(), 0, nodes);
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.cyclic_control_deps, n - 7);
  const auto task = by_duration(g);
  for (int i = 2; i <= n; ++i) {
    std::vector<TaskId> expected{task.at(i - 1)};
    if (i - 5 >= 1) expected.push_back(task.at(i - 5));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(deps_of(g, task.at(i)), expected) << "node " << i;
  }
}

}  // namespace
}  // namespace mfabric::workload
