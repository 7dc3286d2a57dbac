// Chakra reader, conversion: nodes -> tasks, collective matching and sizes, eager send/receive,
// and the errors of matching. Decoding is in chakra_stream_test.cpp, control dependencies in
// chakra_deps_test.cpp, process groups in chakra_groups_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "workload/chakra_test_util.h"

namespace mfabric::workload {
namespace {

using namespace chakra_testing;

// Two ranks: compute (duration) -> compute (num_ops) -> all-reduce "dp" -> send/recv -> compute.
void write_basic(const std::string& prefix, bool rank0_gz, bool rank1_gz) {
  std::vector<pb::Node> r0 = {comp(1, 10), make(2, pb::COMP_NODE, {1}),
                              coll(3, pb::ALL_REDUCE, 1 << 20, "dp", {2}), send(4, 1, 4096, 7, {3}),
                              make(5, pb::COMP_NODE, {}, "tail")};
  std::vector<pb::Node> r1 = {comp(1, 20), make(2, pb::COMP_NODE, {1}),
                              coll(3, pb::ALL_REDUCE, 1 << 20, "dp", {2}), recv(4, 0, 4096, 7, {3}),
                              make(5, pb::COMP_NODE, {}, "tail")};
  for (auto* nodes : {&r0, &r1}) {
    add_int((*nodes)[1], "num_ops", 1'000'000'000'000);  // 1 TFLOP
    (*nodes)[4].add_ctrl_deps(4);
    (*nodes)[4].set_duration_micros(5);
  }
  write_rank(prefix, 0, r0, rank0_gz);
  write_rank(prefix, 1, r1, rank1_gz);
}

ChakraOptions petaflop_gpu() {
  ChakraOptions o;
  o.gpu.name = "test";
  o.gpu.peak_bf16_flops = 1e15;
  o.efficiency = 0.5;
  return o;
}

void check_basic(const TaskGraph& g, const ChakraSummary& s) {
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.compute, 6);
  EXPECT_EQ(s.collective, 2);
  EXPECT_EQ(s.send, 1);
  EXPECT_EQ(s.recv, 1);
  EXPECT_EQ(s.other, 0);
  EXPECT_EQ(g.gpus(), 2);
  ASSERT_EQ(g.size(), 9u);  // 6 compute + 1 all-reduce + 1 P2P + the receive's completion

  const auto computes = find(g, [](const Task& t) { return t.kind == TaskKind::Compute; });
  ASSERT_EQ(computes.size(), 7u);
  const auto colls = find(g, [](const Task& t) { return t.kind == TaskKind::Collective; });
  ASSERT_EQ(colls.size(), 1u);
  const Task& ar = g.task(colls[0]);
  EXPECT_EQ(ar.collective, CollectiveKind::AllReduce);
  EXPECT_EQ(ar.traffic, Traffic::DP);
  EXPECT_EQ(ar.op, Op::Generic);
  EXPECT_EQ(ar.bytes(), Bytes::mib(1));
  EXPECT_EQ(g.group(ar.group()), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(ar.matrix(), -1);

  // The all-reduce waits for the num_ops compute of both ranks: 1e12 / (1e15 x 0.5) = 2 ms.
  const auto ar_deps = deps_of(g, colls[0]);
  ASSERT_EQ(ar_deps.size(), 2u);
  std::vector<std::int32_t> gpus;
  for (TaskId d : ar_deps) {
    EXPECT_EQ(g.task(d).kind, TaskKind::Compute);
    EXPECT_EQ(g.task(d).duration(), Time::milliseconds(2));
    gpus.push_back(g.task(d).gpu());
    // ...which waits for the first compute of its own rank.
    const auto first = deps_of(g, d);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(g.task(first[0]).gpu(), g.task(d).gpu());
    EXPECT_EQ(g.task(first[0]).duration(), Time::microseconds(g.task(d).gpu() == 0 ? 10 : 20));
  }
  std::sort(gpus.begin(), gpus.end());
  EXPECT_EQ(gpus, (std::vector<std::int32_t>{0, 1}));

  const auto p2p = find(g, [](const Task& t) { return t.kind == TaskKind::P2P; });
  ASSERT_EQ(p2p.size(), 1u);
  const Task& pt = g.task(p2p[0]);
  EXPECT_EQ(pt.gpu(), 0);
  EXPECT_EQ(pt.peer(), 1);
  EXPECT_EQ(pt.bytes(), Bytes(4096));
  EXPECT_EQ(pt.traffic, Traffic::Other);  // no pg_name
  // The transfer starts on the send's own dependencies.
  EXPECT_EQ(deps_of(g, p2p[0]), (std::vector<TaskId>{colls[0]}));

  // The receive completes after its own dependencies and the transfer, in zero time on GPU 1.
  std::vector<TaskId> arrival;
  for (TaskId t = 0; t < static_cast<TaskId>(g.size()); ++t) {
    const auto d = deps_of(g, t);
    if (g.task(t).kind == TaskKind::Compute && g.task(t).duration() == Time::zero() &&
        std::count(d.begin(), d.end(), p2p[0]) == 1) {
      arrival.push_back(t);
    }
  }
  ASSERT_EQ(arrival.size(), 1u);
  EXPECT_EQ(g.task(arrival[0]).gpu(), 1);
  EXPECT_EQ(g.task(arrival[0]).duration(), Time::zero());
  EXPECT_EQ(deps_of(g, arrival[0]), (std::vector<TaskId>{colls[0], p2p[0]}));

  // The tails depend (control edge) on their own node 4: the sender's on the transfer, the
  // receiver's on the receive's completion.
  const auto tails = find(g, [](const Task& t) {
    return t.kind == TaskKind::Compute && t.duration() == Time::microseconds(5);
  });
  ASSERT_EQ(tails.size(), 2u);
  for (TaskId t : tails) {
    const TaskId expected = g.task(t).gpu() == 0 ? p2p[0] : arrival[0];
    EXPECT_EQ(deps_of(g, t), (std::vector<TaskId>{expected}));
  }
}

// --- Conversion -------------------------------------------------------------------------------

TEST(Chakra, ReadsComputeAllReduceAndSendRecv) {
  TempDir dir;
  write_basic(dir.prefix(), false, false);
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), petaflop_gpu(), &s);
  check_basic(g, s);
}

TEST(Chakra, ReadsGzipAndMixedFilesIdentically) {
  TempDir dir;
  write_basic(dir.prefix("gz"), true, true);
  write_basic(dir.prefix("mixed"), true, false);
  for (const char* name : {"gz", "mixed"}) {
    ChakraSummary s;
    const TaskGraph g = read_chakra(dir.prefix(name), petaflop_gpu(), &s);
    check_basic(g, s);
  }
}

TEST(Chakra, NumOpsWithoutGpuPeakIsZeroTime) {
  TempDir dir;
  write_basic(dir.prefix(), false, false);
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  const auto zero = find(
      g, [](const Task& t) { return t.kind == TaskKind::Compute && t.duration() == Time::zero(); });
  EXPECT_EQ(zero.size(), 3u);  // the two num_ops nodes and the receive's completion
}

TEST(Chakra, CpuOpsAndNonComputeNodesAreZeroTimeTasksThatKeepDependencies) {
  TempDir dir;
  pb::Node cpu = comp(2, 100, {1});
  auto* a = cpu.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(true);
  write_rank(dir.prefix(), 0,
             {comp(1, 3), cpu, make(3, pb::METADATA_NODE, {2}), make(4, pb::MEM_LOAD_NODE, {3}),
              make(5, pb::MEM_STORE_NODE, {4}), make(6, pb::INVALID_NODE, {5}), comp(7, 4, {6})});
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.compute, 3);
  EXPECT_EQ(s.other, 4);
  ASSERT_EQ(g.size(), 7u);
  // A chain: every task depends on the previous one, and only the two GPU computes take time.
  Time total;
  for (TaskId i = 0; i < 7; ++i) {
    EXPECT_EQ(g.task(i).kind, TaskKind::Compute);
    EXPECT_EQ(g.task(i).gpu(), 0);
    total += g.task(i).duration();
    if (i > 0) {
      EXPECT_EQ(deps_of(g, i), (std::vector<TaskId>{i - 1}));
    }
  }
  EXPECT_EQ(total, Time::microseconds(7));
}

TEST(Chakra, AllToAllVBuildsAMatrixInGroupOrder) {
  TempDir dir;
  // Four ranks, EP group declared in GlobalMetadata in a non-sorted order: rows and columns of
  // the matrix follow that order.
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* g_attr = meta.add_attr();
  g_attr->set_name("pg_ranks:ep_group");
  for (std::int64_t r : {2, 0, 3, 1})
    g_attr->mutable_int64_list()->add_values(r);
  // Member order [2, 0, 3, 1]; rank r's row is what it sends to each member.
  const std::vector<std::vector<std::int64_t>> rows = {
      {1, 2, 3, 4},      // rank 0 = member 1
      {5, 6, 7, 8},      // rank 1 = member 3
      {9, 10, 11, 12},   // rank 2 = member 0
      {13, 14, 15, 16},  // rank 3 = member 2
  };
  for (int r = 0; r < 4; ++r) {
    pb::Node a2a = coll(2, pb::ALL_TO_ALL, -1, "ep_group", {1});
    const auto& row = rows[static_cast<std::size_t>(r)];
    add_list(a2a, "send_bytes_per_rank", {row[0], row[1], row[2], row[3]});
    add_int(a2a, "comm_size", 100 * (r + 1));  // per-rank sizes may differ for all-to-all-v
    write_rank(dir.prefix(), r, {comp(1, 1), a2a, comp(3, 1, {2})}, r % 2 == 1, &meta);
  }
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.collective, 4);
  const auto colls = find(g, [](const Task& t) { return t.kind == TaskKind::Collective; });
  ASSERT_EQ(colls.size(), 1u);
  const Task& t = g.task(colls[0]);
  EXPECT_EQ(t.collective, CollectiveKind::AllToAll);
  EXPECT_EQ(t.traffic, Traffic::EP);
  EXPECT_EQ(g.group(t.group()), (std::vector<std::int32_t>{2, 0, 3, 1}));
  ASSERT_GE(t.matrix(), 0);
  ASSERT_EQ(g.matrix_count(), 1u);
  const ByteMatrix& m = g.matrix(t.matrix());
  ASSERT_EQ(m.n, 4);
  EXPECT_EQ(m.at(0, 0), 9);   // member 0 is rank 2
  EXPECT_EQ(m.at(1, 2), 3);   // member 1 is rank 0
  EXPECT_EQ(m.at(3, 3), 8);   // member 3 is rank 1
  EXPECT_EQ(m.at(2, 1), 14);  // member 2 is rank 3
  const std::int64_t diagonal = 9 + 2 + 15 + 8;
  EXPECT_EQ(t.bytes(), Bytes(136 - diagonal));
  EXPECT_EQ(deps_of(g, colls[0]).size(), 4u);
}

TEST(Chakra, PlainAllToAllUsesCommSize) {
  TempDir dir;
  for (int r = 0; r < 2; ++r) {
    write_rank(dir.prefix(), r, {coll(1, pb::ALL_TO_ALL, 4096, "expert_parallel")});
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g.task(0).bytes(), Bytes(4096));
  EXPECT_EQ(g.task(0).matrix(), -1);
  EXPECT_EQ(g.task(0).traffic, Traffic::EP);
}

TEST(Chakra, GroupsFromPgNamesAndTrafficClasses) {
  TempDir dir;
  // TP pairs {0,1} and {2,3} with distinct names, a PP group, an all-ranks barrier and a group
  // whose name says nothing.
  for (int r = 0; r < 4; ++r) {
    const std::string tp = r < 2 ? "tp0" : "TENSOR_MODEL_PARALLEL_GROUP_1";
    std::vector<pb::Node> nodes = {coll(1, pb::ALL_GATHER, 64, tp),
                                   coll(2, pb::BARRIER, -1, "", {1}),
                                   coll(3, pb::REDUCE_SCATTER, 32, "7", {2})};
    if (r == 0 || r == 3) nodes.push_back(coll(4, pb::BROADCAST, 16, "pipe-0-3", {3}));
    write_rank(dir.prefix(), r, nodes);
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 2u + 1u + 1u + 1u);
  auto only = [&](CollectiveKind k) {
    return find(g, [k](const Task& t) { return t.collective == k; });
  };
  const auto gathers = only(CollectiveKind::AllGather);
  ASSERT_EQ(gathers.size(), 2u);
  std::vector<std::vector<std::int32_t>> groups;
  for (TaskId t : gathers) {
    EXPECT_EQ(g.task(t).traffic, Traffic::TP);
    groups.push_back(g.group(g.task(t).group()));
  }
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::vector<std::int32_t>>{{0, 1}, {2, 3}}));

  const auto barrier = only(CollectiveKind::Barrier);
  ASSERT_EQ(barrier.size(), 1u);
  EXPECT_EQ(g.group(g.task(barrier[0]).group()), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(g.task(barrier[0]).bytes(), Bytes(0));
  EXPECT_EQ(g.task(barrier[0]).traffic, Traffic::Other);  // the default group says nothing
  EXPECT_EQ(deps_of(g, barrier[0]), gathers);             // both TP gathers

  const auto rs = only(CollectiveKind::ReduceScatter);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(g.task(rs[0]).traffic, Traffic::Other);  // "7" says nothing
  EXPECT_EQ(g.task(rs[0]).bytes(), Bytes(32));

  const auto bcast = only(CollectiveKind::Broadcast);
  ASSERT_EQ(bcast.size(), 1u);
  EXPECT_EQ(g.task(bcast[0]).traffic, Traffic::PP);
  EXPECT_EQ(g.group(g.task(bcast[0]).group()), (std::vector<std::int32_t>{0, 3}));
}

TEST(Chakra, RootedCollectivesMapToTheNearestSymmetricOne) {
  TempDir dir;
  for (int r = 0; r < 2; ++r) {
    write_rank(
        dir.prefix(), r,
        {coll(1, pb::REDUCE, 8, "data"), coll(2, pb::GATHER, 8, "data", {1}),
         coll(3, pb::SCATTER, 8, "data", {2}), coll(4, pb::REDUCE_SCATTER_BLOCK, 8, "data", {3})});
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.task(0).collective, CollectiveKind::ReduceScatter);
  EXPECT_EQ(g.task(1).collective, CollectiveKind::AllGather);
  EXPECT_EQ(g.task(2).collective, CollectiveKind::Broadcast);
  EXPECT_EQ(g.task(3).collective, CollectiveKind::ReduceScatter);
  for (TaskId i = 0; i < 4; ++i)
    EXPECT_EQ(g.task(i).traffic, Traffic::DP);
  // A gather's comm_size is each member's input, as an all-gather's: 2 members x 8 bytes.
  EXPECT_EQ(g.task(1).bytes(), Bytes(16));
  for (TaskId i : {0, 2, 3})
    EXPECT_EQ(g.task(i).bytes(), Bytes(8));
}

TEST(Chakra, CollectivesMatchInTopologicalOrderNotFileOrder) {
  TempDir dir;
  write_rank(dir.prefix(), 0,
             {coll(1, pb::ALL_REDUCE, 100, "dp"), coll(2, pb::ALL_GATHER, 200, "dp", {1})});
  // Rank 1 lists the all-gather first and gives it the smaller id, but it depends on the
  // all-reduce.
  write_rank(dir.prefix(), 1,
             {coll(10, pb::ALL_GATHER, 200, "dp", {11}), coll(11, pb::ALL_REDUCE, 100, "dp")});
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.task(0).collective, CollectiveKind::AllReduce);
  EXPECT_EQ(g.task(1).collective, CollectiveKind::AllGather);
  EXPECT_EQ(deps_of(g, 1), (std::vector<TaskId>{0}));
}

TEST(Chakra, SendsAndReceivesMatchInOrderPerTag) {
  TempDir dir;
  write_rank(dir.prefix(), 0,
             {send(1, 1, 10, 0), send(2, 1, 20, 0, {1}), send(3, 1, 30, 5), recv(4, 1, 40, 0)});
  write_rank(dir.prefix(), 1,
             {recv(1, 0, 30, 5), recv(2, 0, 10, 0), recv(3, 0, 20, 0, {2}), send(4, 0, 40, 0)});
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.send, 4);
  EXPECT_EQ(s.recv, 4);
  ASSERT_EQ(g.size(), 8u);  // 4 transfers, 4 receive completions
  std::vector<std::pair<std::int32_t, std::int64_t>> seen;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::P2P) {
      EXPECT_EQ(t.kind, TaskKind::Compute);
      EXPECT_EQ(t.duration(), Time::zero());
      continue;
    }
    EXPECT_EQ(t.peer(), 1 - t.gpu());
    seen.emplace_back(t.gpu(), t.bytes().count());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<std::int32_t, std::int64_t>>{
                      {0, 10}, {0, 20}, {0, 30}, {1, 40}}));
  const auto second = find(g, [](const Task& t) { return t.bytes() == Bytes(20); });
  const auto first = find(g, [](const Task& t) { return t.bytes() == Bytes(10); });
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(deps_of(g, second[0]), first);
}

TEST(Chakra, SendThenReceiveRingIsEager) {
  // ASTRA-sim's custom ring: every rank sends to its right neighbour, then receives from its
  // left, the receive depending on the send. Merging a send with its receive into one task made
  // this a deadlock; with eager semantics every transfer starts at once.
  TempDir dir;
  const int n = 4;
  for (int r = 0; r < n; ++r) {
    write_rank(
        dir.prefix(), r,
        {send(1, (r + 1) % n, 1000, 0), recv(2, (r + n - 1) % n, 1000, 0, {1}), comp(3, 7, {2})});
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 3u * n);
  const auto transfers = find(g, [](const Task& t) { return t.kind == TaskKind::P2P; });
  ASSERT_EQ(transfers.size(), static_cast<std::size_t>(n));
  for (TaskId t : transfers) {
    EXPECT_TRUE(deps_of(g, t).empty());  // a send without dependencies starts at once
    EXPECT_EQ(g.task(t).peer(), (g.task(t).gpu() + 1) % n);
  }
  for (TaskId c : find(g, [](const Task& t) { return t.duration() == Time::microseconds(7); })) {
    // compute -> receive completion -> {own send's transfer, the left neighbour's transfer}
    const auto arrival = deps_of(g, c);
    ASSERT_EQ(arrival.size(), 1u);
    const int gpu = g.task(c).gpu();
    std::vector<std::int32_t> senders;
    for (TaskId d : deps_of(g, arrival[0])) {
      ASSERT_EQ(g.task(d).kind, TaskKind::P2P);
      senders.push_back(g.task(d).gpu());
    }
    std::sort(senders.begin(), senders.end());
    std::vector<std::int32_t> expected{gpu, (gpu + n - 1) % n};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(senders, expected);
  }
}

TEST(Chakra, AllGatherCommSizeIsEachMembersInput) {
  // ASTRA-sim reads an all-gather's comm_size as each rank's input, so the gathered buffer (the
  // task graph's bytes) is n x comm_size. Reduce-scatter, all-reduce and all-to-all comm_size
  // are already the full buffer.
  TempDir dir;
  for (int r = 0; r < 4; ++r) {
    write_rank(
        dir.prefix(), r,
        {coll(1, pb::ALL_GATHER, 1000, "dp"), coll(2, pb::REDUCE_SCATTER, 1000, "dp", {1}),
         coll(3, pb::ALL_REDUCE, 1000, "dp", {2}), coll(4, pb::ALL_TO_ALL, 1000, "dp", {3})});
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.task(0).collective, CollectiveKind::AllGather);
  EXPECT_EQ(g.task(0).bytes(), Bytes(4000));
  for (TaskId i : {1, 2, 3})
    EXPECT_EQ(g.task(i).bytes(), Bytes(1000));
}

TEST(ChakraErrors, AllGatherTooLargeToRepresent) {
  TempDir dir;
  // 2^50 / 4 + 1 per member: the gathered buffer passes 2^50 bytes.
  for (int r = 0; r < 4; ++r) {
    write_rank(dir.prefix(), r, {coll(1, pb::ALL_GATHER, (std::int64_t{1} << 48) + 1, "dp")});
  }
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node 1 (n1)", "4 members x comm_size", "2^50"});
}

// --- Errors -----------------------------------------------------------------------------------

TEST(ChakraErrors, UnmatchedSend) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {send(1, 1, 64, 3)});
  write_rank(dir.prefix(), 1, {recv(1, 0, 64, 4)});  // different tag
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"no matching receive", "rank 1", rank_file(dir.prefix(), 1)});
}

TEST(ChakraErrors, UnmatchedReceive) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  write_rank(dir.prefix(), 1, {recv(1, 0, 64, 0)});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1), {"no matching send", "node 1"});
}

TEST(ChakraErrors, SendToUnknownRank) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {send(1, 5, 64, 0)});
  write_rank(dir.prefix(), 1, {comp(1, 1)});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"comm_dst 5"});
}

TEST(ChakraErrors, CollectiveMissingOnAMemberRank) {
  TempDir dir;
  write_rank(dir.prefix(), 0,
             {coll(1, pb::ALL_REDUCE, 8, "dp"), coll(2, pb::ALL_REDUCE, 8, "dp", {1})});
  write_rank(dir.prefix(), 1, {coll(1, pb::ALL_REDUCE, 8, "dp")});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"collective #1", "'dp'", "no counterpart", rank_file(dir.prefix(), 1)});
}

TEST(ChakraErrors, CollectiveMissingOnADeclaredMember) {
  TempDir dir;
  pb::GlobalMetadata meta;
  auto* a = meta.add_attr();
  a->set_name("pg_ranks:dp");
  for (std::int64_t r : {0, 1})
    a->mutable_int64_list()->add_values(r);
  write_rank(dir.prefix(), 0, {coll(1, pb::ALL_REDUCE, 8, "dp")}, false, &meta);
  write_rank(dir.prefix(), 1, {comp(1, 1)}, false, &meta);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"collective #0", "member rank 1", rank_file(dir.prefix(), 1)});
}

TEST(ChakraErrors, CollectiveOnANonMemberRank) {
  TempDir dir;
  pb::GlobalMetadata meta;
  auto* a = meta.add_attr();
  a->set_name("pg_ranks:dp");
  a->mutable_int64_list()->add_values(0);
  write_rank(dir.prefix(), 0, {coll(1, pb::ALL_REDUCE, 8, "dp")}, false, &meta);
  write_rank(dir.prefix(), 1, {coll(1, pb::ALL_REDUCE, 8, "dp")}, false, &meta);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1), {"not a member", "'dp'"});
}

TEST(ChakraErrors, MismatchedCollectiveSizes) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {coll(1, pb::ALL_REDUCE, 1024, "dp")});
  write_rank(dir.prefix(), 1, {coll(1, pb::ALL_REDUCE, 2048, "dp")});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1),
               {"comm_size 2048", "1024", rank_file(dir.prefix(), 0)});
}

TEST(ChakraErrors, MismatchedCollectiveTypes) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {coll(1, pb::ALL_REDUCE, 1024, "dp")});
  write_rank(dir.prefix(), 1, {coll(1, pb::ALL_GATHER, 1024, "dp")});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1), {"ALL_GATHER", "ALL_REDUCE"});
}

TEST(ChakraErrors, AllToAllVWithWrongLengthOrMissingRow) {
  TempDir dir;
  // Three ranks, the group "ep" of ranks 0 and 1: a row of three entries is one too many.
  for (int r = 0; r < 2; ++r) {
    pb::Node a2a = coll(1, pb::ALL_TO_ALL, 0, "ep");
    if (r == 0) add_list(a2a, "send_bytes_per_rank", {1, 2});
    if (r == 1) add_list(a2a, "send_bytes_per_rank", {1, 2, 3});
    write_rank(dir.prefix("length"), r, {a2a});
  }
  write_rank(dir.prefix("length"), 2, {comp(1, 1)});
  expect_error(dir.prefix("length"), rank_file(dir.prefix("length"), 1),
               {"send_bytes_per_rank has 3 entries, expected 2"});

  for (int r = 0; r < 2; ++r) {
    pb::Node a2a = coll(1, pb::ALL_TO_ALL, 0, "ep");
    if (r == 0) add_list(a2a, "send_bytes_per_rank", {1, 2});
    write_rank(dir.prefix("missing"), r, {a2a});
  }
  expect_error(dir.prefix("missing"), rank_file(dir.prefix("missing"), 1),
               {"send_bytes_per_rank is missing", rank_file(dir.prefix("missing"), 0)});

  pb::Node ar = coll(1, pb::ALL_REDUCE, 8, "dp");
  add_list(ar, "send_bytes_per_rank", {8});
  write_rank(dir.prefix("not_a2a"), 0, {ar});
  expect_error(dir.prefix("not_a2a"), rank_file(dir.prefix("not_a2a"), 0),
               {"only meaningful on ALL_TO_ALL"});
}

TEST(ChakraErrors, InconsistentCollectiveOrderIsADeadlock) {
  TempDir dir;
  write_rank(dir.prefix(), 0,
             {coll(1, pb::ALL_REDUCE, 8, "a"), coll(2, pb::ALL_REDUCE, 8, "b", {1})});
  write_rank(dir.prefix(), 1,
             {coll(1, pb::ALL_REDUCE, 8, "b"), coll(2, pb::ALL_REDUCE, 8, "a", {1})});
  try {
    read_chakra(dir.prefix(), ChakraOptions{});
    ADD_FAILURE() << "expected a deadlock";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
    EXPECT_NE(what.find("'a'"), std::string::npos) << what;
    EXPECT_NE(what.find("'b'"), std::string::npos) << what;
    EXPECT_NE(what.find(rank_file(dir.prefix(), 0)), std::string::npos) << what;
    EXPECT_NE(what.find(rank_file(dir.prefix(), 1)), std::string::npos) << what;
  }
}

TEST(ChakraErrors, ReceiveBeforeSendOnBothRanksIsADeadlock) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {recv(1, 1, 8, 0), send(2, 1, 8, 0, {1})});
  write_rank(dir.prefix(), 1, {recv(1, 0, 8, 0), send(2, 0, 8, 0, {1})});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"deadlock", "send", "receive"});
}

TEST(ChakraErrors, BadEfficiency) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  ChakraOptions o;
  o.efficiency = 0;
  EXPECT_THROW(read_chakra(dir.prefix(), o), Error);
}

}  // namespace
}  // namespace mfabric::workload
