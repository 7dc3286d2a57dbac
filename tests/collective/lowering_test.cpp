#include "collective/lowering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "test_text.h"

namespace mfabric::collective {
namespace {

using fabric::NodeId;
using testing::error_text;
using workload::ByteMatrix;
using workload::CollectiveKind;

fabric::ClusterSpec cluster(int servers, int gpus, int nics) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  return c;
}

// 4 servers x 4 GPUs x 4 NICs on a fat-tree, shared by every test.
const fabric::Topology& topo() {
  static const fabric::Topology t = fabric::build_fabric("fat-tree", cluster(4, 4, 4));
  return t;
}

NodeId gpu(int server, int local) {
  return topo().gpu(server, local);
}

// The first n GPUs in server-major order (server g / 4, local g % 4).
std::vector<NodeId> first_gpus(int n) {
  std::vector<NodeId> out;
  for (int g = 0; g < n; ++g)
    out.push_back(gpu(g / 4, g % 4));
  return out;
}

CollectiveRequest request(CollectiveKind kind, std::vector<NodeId> members, std::int64_t bytes,
                          std::uint64_t hash = 7) {
  CollectiveRequest r;
  r.kind = kind;
  r.members = std::move(members);
  r.bytes = Bytes(bytes);
  r.flow_hash = hash;
  return r;
}

Plan lower(const std::string& algorithm, const CollectiveRequest& r) {
  return make_lowering(algorithm)->lower(r, topo());
}

// (src, dst, size, latency_hops) of a step, sorted, for exact comparisons.
using Edge = std::tuple<NodeId, NodeId, std::int64_t, int>;
std::vector<Edge> edges(const Step& step) {
  std::vector<Edge> out;
  for (const net::Transfer& t : step.transfers) {
    out.emplace_back(t.src, t.dst, t.size.count(), t.latency_hops);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The ring over `members` (in order) with `size` and `hops` on every edge.
std::vector<Edge> ring_edges(const std::vector<NodeId>& members, std::int64_t size, int hops) {
  std::vector<Edge> out;
  const std::size_t n = members.size();
  for (std::size_t i = 0; i < n; ++i)
    out.emplace_back(members[i], members[(i + 1) % n], size, hops);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t total_bytes(const Plan& p) {
  std::int64_t sum = 0;
  for (const Step& s : p.steps) {
    for (const net::Transfer& t : s.transfers)
      sum += t.size.count();
  }
  return sum;
}

// --- registry -----------------------------------------------------------------------------

TEST(Lowering, NamesAndFactory) {
  EXPECT_EQ(lowering_names(),
            (std::vector<std::string>{"ring", "hierarchical", "direct", "proxy", "pxn"}));
  for (const std::string& name : lowering_names()) {
    EXPECT_EQ(make_lowering(name)->name(), name);
  }
}

TEST(Lowering, UnknownNameListsTheKnownOnes) {
  const std::string msg = error_text([] { make_lowering("tree"); });
  EXPECT_NE(msg.find("'tree'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ring, hierarchical, direct"), std::string::npos) << msg;
}

// --- ring ---------------------------------------------------------------------------------

TEST(Ring, SingleMemberIsAnEmptyPlan) {
  for (CollectiveKind k :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
        CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    EXPECT_TRUE(lower("ring", request(k, {gpu(2, 1)}, 1000)).steps.empty()) << to_string(k);
  }
}

TEST(Ring, AllReduceTwoMembers) {
  const std::vector<NodeId> m{gpu(0, 0), gpu(1, 0)};
  const Plan p = lower("ring", request(CollectiveKind::AllReduce, m, 1000));
  ASSERT_EQ(p.steps.size(), 1u);
  // 2(n-1)/n x S = S per edge, 2 ring steps.
  EXPECT_EQ(edges(p.steps[0]), ring_edges(m, 1000, 2));
}

TEST(Ring, AllReduceFourAndEightMembers) {
  {
    const auto m = first_gpus(4);
    const Plan p = lower("ring", request(CollectiveKind::AllReduce, m, 1000));
    ASSERT_EQ(p.steps.size(), 1u);
    EXPECT_EQ(edges(p.steps[0]), ring_edges(m, 1500, 6));  // 2*3/4 x 1000
  }
  {
    const auto m = first_gpus(8);
    const Plan p = lower("ring", request(CollectiveKind::AllReduce, m, 1000));
    ASSERT_EQ(p.steps.size(), 1u);
    EXPECT_EQ(edges(p.steps[0]), ring_edges(m, 1750, 14));  // 2*7/8 x 1000
  }
}

TEST(Ring, FollowsGroupOrderNotNodeOrder) {
  const std::vector<NodeId> m{gpu(3, 2), gpu(0, 1), gpu(2, 0)};
  const Plan p = lower("ring", request(CollectiveKind::AllGather, m, 300));
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].transfers.size(), 3u);
  EXPECT_EQ(edges(p.steps[0]), ring_edges(m, 200, 2));
  EXPECT_EQ(p.steps[0].transfers[0].src, gpu(3, 2));
  EXPECT_EQ(p.steps[0].transfers[0].dst, gpu(0, 1));
  EXPECT_EQ(p.steps[0].transfers[2].dst, gpu(3, 2));
}

TEST(Ring, ReduceScatterAndAllGather) {
  for (CollectiveKind k : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
    const auto m2 = first_gpus(2);
    EXPECT_EQ(edges(lower("ring", request(k, m2, 1000)).steps.at(0)), ring_edges(m2, 500, 1));
    const auto m4 = first_gpus(4);
    EXPECT_EQ(edges(lower("ring", request(k, m4, 1000)).steps.at(0)), ring_edges(m4, 750, 3));
    const auto m8 = first_gpus(8);
    EXPECT_EQ(edges(lower("ring", request(k, m8, 1000)).steps.at(0)), ring_edges(m8, 875, 7));
  }
}

TEST(Ring, RoundsUpToWholeBytes) {
  const auto m = first_gpus(8);
  // 2*7/8 x 1001 = 1751.75 -> 1752; 7/8 x 1001 = 875.875 -> 876.
  EXPECT_EQ(lower("ring", request(CollectiveKind::AllReduce, m, 1001)).steps[0].transfers[0].size,
            Bytes(1752));
  EXPECT_EQ(lower("ring", request(CollectiveKind::AllGather, m, 1001)).steps[0].transfers[0].size,
            Bytes(876));
  // 2*2/3 x 1 = 1.33 -> 2.
  EXPECT_EQ(lower("ring", request(CollectiveKind::AllReduce, first_gpus(3), 1))
                .steps[0]
                .transfers[0]
                .size,
            Bytes(2));
}

TEST(Ring, LargeBuffersDoNotOverflow) {
  const std::int64_t s = std::int64_t{1} << 50;  // 1 PiB
  const Plan p = lower("ring", request(CollectiveKind::AllReduce, first_gpus(16), s));
  EXPECT_EQ(p.steps[0].transfers[0].size, Bytes(s / 16 * 30));
}

TEST(Ring, TotalBytesIdentities) {
  const std::int64_t s = 8 * 7 * 5 * 3 * 1000;  // divisible by every n below
  for (int n : {2, 3, 4, 5, 7, 8, 16}) {
    const auto m = first_gpus(n);
    EXPECT_EQ(total_bytes(lower("ring", request(CollectiveKind::AllReduce, m, s))), 2 * (n - 1) * s)
        << n;
    EXPECT_EQ(total_bytes(lower("ring", request(CollectiveKind::ReduceScatter, m, s))), (n - 1) * s)
        << n;
    EXPECT_EQ(total_bytes(lower("ring", request(CollectiveKind::AllGather, m, s))), (n - 1) * s)
        << n;
    EXPECT_EQ(total_bytes(lower("ring", request(CollectiveKind::Broadcast, m, s))), (n - 1) * s)
        << n;
  }
}

TEST(Ring, BroadcastIsAChainFromTheFirstMember) {
  const std::vector<NodeId> m{gpu(1, 0), gpu(0, 3), gpu(2, 2), gpu(3, 1)};
  const Plan p = lower("ring", request(CollectiveKind::Broadcast, m, 1000));
  ASSERT_EQ(p.steps.size(), 1u);
  std::vector<Edge> want{{m[0], m[1], 1000, 3}, {m[1], m[2], 1000, 3}, {m[2], m[3], 1000, 3}};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(edges(p.steps[0]), want);
  // Two members: one transfer, one hop.
  const Plan p2 = lower("ring", request(CollectiveKind::Broadcast, first_gpus(2), 10));
  EXPECT_EQ(edges(p2.steps.at(0)), (std::vector<Edge>{{gpu(0, 0), gpu(0, 1), 10, 1}}));
}

TEST(Ring, BarrierIsZeroByteRingWithAllReduceLatency) {
  for (int n : {2, 4, 8}) {
    const auto m = first_gpus(n);
    const Plan p = lower("ring", request(CollectiveKind::Barrier, m, 0));
    ASSERT_EQ(p.steps.size(), 1u);
    EXPECT_EQ(edges(p.steps[0]), ring_edges(m, 0, 2 * (n - 1))) << n;
    // The bytes field is ignored.
    EXPECT_EQ(edges(lower("ring", request(CollectiveKind::Barrier, m, 4096)).steps.at(0)),
              ring_edges(m, 0, 2 * (n - 1)));
  }
}

TEST(Ring, ZeroBytesIsAnEmptyPlan) {
  for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
                           CollectiveKind::AllGather, CollectiveKind::Broadcast}) {
    EXPECT_TRUE(lower("ring", request(k, first_gpus(4), 0)).steps.empty()) << to_string(k);
  }
}

TEST(Ring, RejectsAllToAll) {
  const std::string msg =
      error_text([] { lower("ring", request(CollectiveKind::AllToAll, first_gpus(4), 100)); });
  EXPECT_NE(msg.find("all-to-all"), std::string::npos) << msg;
  EXPECT_NE(msg.find("direct"), std::string::npos) << msg;
}

// --- direct -------------------------------------------------------------------------------

TEST(Direct, UniformAllToAll) {
  for (int n : {2, 4, 8}) {
    const auto m = first_gpus(n);
    const Plan p = lower("direct", request(CollectiveKind::AllToAll, m, 8000));
    ASSERT_EQ(p.steps.size(), 1u);
    std::vector<Edge> want;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j) want.emplace_back(m[i], m[j], 8000 / n, 1);
      }
    }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(edges(p.steps[0]), want) << n;
    // The diagonal share stays local: (n-1)/n of the bytes cross.
    EXPECT_EQ(total_bytes(p), 8000 * (n - 1)) << n;
  }
}

TEST(Direct, UniformRoundsUpAndSingleMemberIsEmpty) {
  const Plan p = lower("direct", request(CollectiveKind::AllToAll, first_gpus(3), 100));
  for (const net::Transfer& t : p.steps.at(0).transfers)
    EXPECT_EQ(t.size, Bytes(34));
  EXPECT_TRUE(lower("direct", request(CollectiveKind::AllToAll, {gpu(0, 0)}, 100)).steps.empty());
  EXPECT_TRUE(lower("direct", request(CollectiveKind::AllToAll, first_gpus(4), 0)).steps.empty());
}

TEST(Direct, AllToAllVWithHandMatrix) {
  const std::vector<NodeId> m{gpu(0, 0), gpu(1, 1), gpu(2, 2), gpu(3, 3)};
  ByteMatrix mat(4);
  // row i = source member i; zeros and the diagonal produce no transfer.
  const std::int64_t v[4][4] = {{5, 10, 0, 30}, {0, 99, 20, 0}, {1, 2, 0, 3}, {0, 0, 7, 1}};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j)
      mat.at(i, j) = v[i][j];
  }
  CollectiveRequest r = request(CollectiveKind::AllToAll, m, mat.off_diagonal_sum());
  r.matrix = &mat;
  const Plan p = lower("direct", r);
  ASSERT_EQ(p.steps.size(), 1u);
  std::vector<Edge> want{{m[0], m[1], 10, 1}, {m[0], m[3], 30, 1}, {m[1], m[2], 20, 1},
                         {m[2], m[0], 1, 1},  {m[2], m[1], 2, 1},  {m[2], m[3], 3, 1},
                         {m[3], m[2], 7, 1}};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(edges(p.steps[0]), want);
  EXPECT_EQ(total_bytes(p), mat.off_diagonal_sum());
}

TEST(Direct, AllToAllVOnlyDiagonalIsEmpty) {
  ByteMatrix mat(2);
  mat.at(0, 0) = 100;
  mat.at(1, 1) = 100;
  CollectiveRequest r = request(CollectiveKind::AllToAll, first_gpus(2), 0);
  r.matrix = &mat;
  EXPECT_TRUE(lower("direct", r).steps.empty());
}

TEST(Direct, MatrixSizeMustMatchTheGroup) {
  ByteMatrix mat(3);
  CollectiveRequest r = request(CollectiveKind::AllToAll, first_gpus(4), 0);
  r.matrix = &mat;
  const std::string msg = error_text([&] { lower("direct", r); });
  EXPECT_NE(msg.find("3 x 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4 members"), std::string::npos) << msg;
}

TEST(Direct, RejectsNegativeMatrixEntries) {
  ByteMatrix mat(2);
  mat.at(1, 0) = -1;
  CollectiveRequest r = request(CollectiveKind::AllToAll, first_gpus(2), 0);
  r.matrix = &mat;
  const std::string msg = error_text([&] { lower("direct", r); });
  EXPECT_NE(msg.find("(1, 0)"), std::string::npos) << msg;
}

TEST(Direct, RejectsOtherKinds) {
  for (CollectiveKind k :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
        CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    const std::string msg = error_text([&] { lower("direct", request(k, first_gpus(4), 100)); });
    EXPECT_NE(msg.find(to_string(k)), std::string::npos) << msg;
  }
}

// --- hierarchical -------------------------------------------------------------------------

TEST(Hierarchical, FullClusterAllReduce) {
  // 4 servers x 4 GPUs, S = 1600: s = g = 4.
  const auto m = first_gpus(16);
  const Plan p = lower("hierarchical", request(CollectiveKind::AllReduce, m, 1600));
  ASSERT_EQ(p.steps.size(), 3u);
  std::vector<Edge> local;
  for (int s = 0; s < 4; ++s) {
    const auto ring = ring_edges({gpu(s, 0), gpu(s, 1), gpu(s, 2), gpu(s, 3)}, 1200, 3);
    local.insert(local.end(), ring.begin(), ring.end());
  }
  std::sort(local.begin(), local.end());
  EXPECT_EQ(edges(p.steps[0]), local);  // reduce-scatter: (g-1)/g x S
  EXPECT_EQ(edges(p.steps[2]), local);  // all-gather: (g-1)/g x S
  std::vector<Edge> cross;
  for (int k = 0; k < 4; ++k) {
    // 2(s-1)/s x S/g = 6/4 x 400 = 600.
    const auto ring = ring_edges({gpu(0, k), gpu(1, k), gpu(2, k), gpu(3, k)}, 600, 6);
    cross.insert(cross.end(), ring.begin(), ring.end());
  }
  std::sort(cross.begin(), cross.end());
  EXPECT_EQ(edges(p.steps[1]), cross);
  // Steps 1 and 3 stay inside servers; step 2 only crosses servers.
  for (const net::Transfer& t : p.steps[0].transfers) {
    EXPECT_EQ(topo().node(t.src).server, topo().node(t.dst).server);
  }
  for (const net::Transfer& t : p.steps[1].transfers) {
    EXPECT_NE(topo().node(t.src).server, topo().node(t.dst).server);
    EXPECT_EQ(topo().node(t.src).index, topo().node(t.dst).index);
  }
}

TEST(Hierarchical, TwoByTwoAndTotals) {
  // Members 2 per server on servers 1 and 3, listed interleaved: group order decides local
  // index (first member seen on a server is its local 0).
  const std::vector<NodeId> m{gpu(3, 2), gpu(1, 0), gpu(1, 3), gpu(3, 1)};
  const Plan p = lower("hierarchical", request(CollectiveKind::AllReduce, m, 1000));
  ASSERT_EQ(p.steps.size(), 3u);
  std::vector<Edge> local{{gpu(3, 2), gpu(3, 1), 500, 1},
                          {gpu(3, 1), gpu(3, 2), 500, 1},
                          {gpu(1, 0), gpu(1, 3), 500, 1},
                          {gpu(1, 3), gpu(1, 0), 500, 1}};
  std::sort(local.begin(), local.end());
  EXPECT_EQ(edges(p.steps[0]), local);
  EXPECT_EQ(edges(p.steps[2]), local);
  std::vector<Edge> cross{{gpu(3, 2), gpu(1, 0), 500, 2},
                          {gpu(1, 0), gpu(3, 2), 500, 2},
                          {gpu(3, 1), gpu(1, 3), 500, 2},
                          {gpu(1, 3), gpu(3, 1), 500, 2}};
  std::sort(cross.begin(), cross.end());
  EXPECT_EQ(edges(p.steps[1]), cross);
}

TEST(Hierarchical, TotalBytesMatchTheFlatRing) {
  // s servers x g GPUs: steps 1 and 3 move s (g-1) S each (inside servers), step 2 moves
  // 2 (s-1) S (across servers); together 2 (sg - 1) S, what a flat ring over the same members
  // moves.
  const std::int64_t S = 144 * 1000;  // divisible by every s x g below
  for (int s : {2, 3, 4}) {
    for (int g : {2, 3, 4}) {
      std::vector<NodeId> m;
      for (int i = 0; i < s; ++i) {
        for (int k = 0; k < g; ++k)
          m.push_back(gpu(i, k));
      }
      const Plan p = lower("hierarchical", request(CollectiveKind::AllReduce, m, S));
      ASSERT_EQ(p.steps.size(), 3u);
      std::int64_t step_bytes[3] = {0, 0, 0};
      for (int k = 0; k < 3; ++k) {
        for (const net::Transfer& t : p.steps[static_cast<std::size_t>(k)].transfers)
          step_bytes[k] += t.size.count();
      }
      EXPECT_EQ(step_bytes[0], s * (g - 1) * S) << s << "x" << g;
      EXPECT_EQ(step_bytes[1], 2 * (s - 1) * S) << s << "x" << g;
      EXPECT_EQ(step_bytes[2], s * (g - 1) * S) << s << "x" << g;
      EXPECT_EQ(total_bytes(p),
                total_bytes(lower("ring", request(CollectiveKind::AllReduce, m, S))));
      EXPECT_EQ(p.steps[0].transfers.size(), static_cast<std::size_t>(s * g));
      EXPECT_EQ(p.steps[1].transfers.size(), static_cast<std::size_t>(s * g));
      EXPECT_EQ(p.steps[1].transfers.front().latency_hops, 2 * (s - 1));
      EXPECT_EQ(p.steps[0].transfers.front().latency_hops, g - 1);
    }
  }
}

TEST(Hierarchical, RoundsUpToWholeBytes) {
  // 4 x 4, S = 1001: (g-1)/g x S = 750.75 -> 751; 2(s-1)/(s g) x S = 375.375 -> 376.
  const Plan p = lower("hierarchical", request(CollectiveKind::AllReduce, first_gpus(16), 1001));
  ASSERT_EQ(p.steps.size(), 3u);
  for (const net::Transfer& t : p.steps[0].transfers)
    EXPECT_EQ(t.size, Bytes(751));
  for (const net::Transfer& t : p.steps[1].transfers)
    EXPECT_EQ(t.size, Bytes(376));
  for (const net::Transfer& t : p.steps[2].transfers)
    EXPECT_EQ(t.size, Bytes(751));
}

TEST(Hierarchical, FallsBackToRing) {
  auto same_as_ring = [](const std::vector<NodeId>& m) {
    const CollectiveRequest r = request(CollectiveKind::AllReduce, m, 1000);
    const Plan h = lower("hierarchical", r);
    const Plan ring = lower("ring", r);
    ASSERT_EQ(h.steps.size(), ring.steps.size());
    for (std::size_t i = 0; i < h.steps.size(); ++i) {
      EXPECT_EQ(edges(h.steps[i]), edges(ring.steps[i]));
    }
    ASSERT_EQ(h.steps.size(), 1u);
  };
  same_as_ring({gpu(2, 0), gpu(2, 1), gpu(2, 2), gpu(2, 3)});             // one server
  same_as_ring({gpu(0, 1), gpu(1, 1), gpu(2, 1), gpu(3, 1)});             // one member per server
  same_as_ring({gpu(0, 0), gpu(0, 1), gpu(1, 0)});                        // uneven: 2 + 1
  same_as_ring({gpu(0, 0), gpu(0, 1), gpu(1, 0), gpu(1, 1), gpu(1, 2)});  // 2 + 3
  EXPECT_TRUE(
      lower("hierarchical", request(CollectiveKind::AllReduce, {gpu(0, 0)}, 1000)).steps.empty());
  EXPECT_TRUE(
      lower("hierarchical", request(CollectiveKind::AllReduce, first_gpus(8), 0)).steps.empty());
}

TEST(Hierarchical, OtherKindsRunAsRings) {
  for (CollectiveKind k : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
                           CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    const CollectiveRequest r = request(k, first_gpus(8), 1000);
    const Plan h = lower("hierarchical", r);
    ASSERT_EQ(h.steps.size(), 1u) << to_string(k);
    EXPECT_EQ(edges(h.steps[0]), edges(lower("ring", r).steps.at(0))) << to_string(k);
  }
}

// --- flow hashes --------------------------------------------------------------------------

std::vector<std::uint64_t> hashes(const Plan& p) {
  std::vector<std::uint64_t> out;
  for (const Step& s : p.steps) {
    for (const net::Transfer& t : s.transfers)
      out.push_back(t.flow_hash);
  }
  return out;
}

TEST(FlowHash, DeterministicAndDistinct) {
  const std::vector<CollectiveRequest> reqs{
      request(CollectiveKind::AllReduce, first_gpus(16), 1 << 20, 42),
      request(CollectiveKind::AllToAll, first_gpus(16), 1 << 20, 42),
      request(CollectiveKind::Broadcast, first_gpus(8), 1 << 20, 42),
  };
  const std::vector<std::string> algos{"hierarchical", "direct", "ring"};
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto a = hashes(lower(algos[i], reqs[i]));
    EXPECT_EQ(a, hashes(lower(algos[i], reqs[i])));  // same input, same hashes
    const std::set<std::uint64_t> unique(a.begin(), a.end());
    EXPECT_EQ(unique.size(), a.size()) << algos[i];  // every transfer its own hash
    // Another seed gives other hashes, none shared with the first.
    CollectiveRequest other = reqs[i];
    other.flow_hash = 43;
    const auto b = hashes(lower(algos[i], other));
    ASSERT_EQ(b.size(), a.size());
    for (std::uint64_t h : b)
      EXPECT_EQ(unique.count(h), 0u);
  }
}

TEST(FlowHash, ReversedEdgesDiffer) {
  // In a two-member ring both directions share (step, {0, 1}); order must still matter.
  const Plan p = lower("ring", request(CollectiveKind::AllReduce, first_gpus(2), 100, 0));
  ASSERT_EQ(p.steps.at(0).transfers.size(), 2u);
  EXPECT_NE(p.steps[0].transfers[0].flow_hash, p.steps[0].transfers[1].flow_hash);
  EXPECT_NE(p.steps[0].transfers[0].flow_hash, 0u);
}

// --- validation ---------------------------------------------------------------------------

TEST(Validation, EveryLoweringChecksMembers) {
  const NodeId nic = topo().nic(0, 0);
  const NodeId nvswitch = topo().nvswitch(1);
  const auto nodes = static_cast<NodeId>(topo().nodes().size());
  for (const std::string& algo : lowering_names()) {
    const CollectiveKind k = algo == "direct" || algo == "proxy" || algo == "pxn"
                                 ? CollectiveKind::AllToAll
                                 : CollectiveKind::AllReduce;
    std::string msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), nic}, 100)); });
    EXPECT_NE(msg.find("s0.nic0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a GPU"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {nvswitch}, 100)); });
    EXPECT_NE(msg.find("s1.nvswitch"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), nodes}, 100)); });
    EXPECT_NE(msg.find("outside the topology"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), -1}, 100)); });
    EXPECT_NE(msg.find("outside the topology"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), gpu(1, 0), gpu(0, 0)}, 100)); });
    EXPECT_NE(msg.find("s0.gpu0 more than once"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {}, 100)); });
    EXPECT_NE(msg.find("no members"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, first_gpus(2), -5)); });
    EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
    // The message names the algorithm.
    EXPECT_EQ(msg.rfind(algo + ":", 0), 0u) << msg;
  }
}

TEST(Validation, MatrixOnlyWithAllToAll) {
  ByteMatrix mat(2);
  for (const char* algo : {"ring", "hierarchical"}) {
    CollectiveRequest r = request(CollectiveKind::AllReduce, first_gpus(2), 100);
    r.matrix = &mat;
    const std::string msg = error_text([&] { lower(algo, r); });
    EXPECT_NE(msg.find("matrix"), std::string::npos) << msg;
  }
}

// --- Lowerer ------------------------------------------------------------------------------

TEST(Lowerer, AutoAllReduceChoosesHierarchicalOnlyWhenItHelps) {
  const Lowerer lowerer;
  auto steps = [&](const std::vector<NodeId>& m) {
    return lowerer.lower(request(CollectiveKind::AllReduce, m, 1000), topo()).steps.size();
  };
  EXPECT_EQ(steps(first_gpus(16)), 3u);                                // 4 x 4
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(1, 0), gpu(1, 1)}), 3u);  // 2 x 2
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(0, 2)}), 1u);             // one server
  EXPECT_EQ(steps({gpu(0, 0), gpu(1, 0), gpu(2, 0), gpu(3, 0)}), 1u);  // one per server
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(1, 0)}), 1u);             // uneven -> ring
  EXPECT_EQ(steps({gpu(0, 0)}), 0u);
  // Auto validates before looking at servers.
  EXPECT_THROW(steps({gpu(0, 0), topo().nic(0, 0)}), Error);
}

TEST(Lowerer, ExplicitChoices) {
  const auto m = first_gpus(16);
  const CollectiveRequest r = request(CollectiveKind::AllReduce, m, 1600);
  AlgorithmChoice ring;
  ring.all_reduce = "ring";
  EXPECT_EQ(Lowerer(ring).lower(r, topo()).steps.size(), 1u);
  AlgorithmChoice hier;
  hier.all_reduce = "hierarchical";
  EXPECT_EQ(Lowerer(hier).lower(r, topo()).steps.size(), 3u);
  // Hierarchical chosen explicitly still falls back where it does not apply.
  EXPECT_EQ(Lowerer(hier)
                .lower(request(CollectiveKind::AllReduce, {gpu(0, 0), gpu(1, 0)}, 10), topo())
                .steps.size(),
            1u);
}

TEST(Lowerer, DispatchesEveryKind) {
  const Lowerer lowerer;
  const auto m = first_gpus(8);
  for (CollectiveKind k : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
                           CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    const CollectiveRequest r = request(k, m, 1000);
    EXPECT_EQ(edges(lowerer.lower(r, topo()).steps.at(0)), edges(lower("ring", r).steps.at(0)))
        << to_string(k);
  }
  const CollectiveRequest a2a = request(CollectiveKind::AllToAll, m, 8000);
  EXPECT_EQ(edges(lowerer.lower(a2a, topo()).steps.at(0)), edges(lower("direct", a2a).steps.at(0)));
}

TEST(Lowerer, RejectsInvalidChoices) {
  struct Case {
    std::string AlgorithmChoice::*field;
    std::string value;
    std::string name;
    std::string collective;
    std::string valid;
  };
  const std::vector<Case> cases{
      {&AlgorithmChoice::all_reduce, "direct", "all_reduce", "all-reduce",
       "auto, ring, hierarchical"},
      {&AlgorithmChoice::all_reduce, "", "all_reduce", "all-reduce", "auto, ring, hierarchical"},
      {&AlgorithmChoice::all_to_all, "ring", "all_to_all", "all-to-all",
       "auto, hierarchical, direct, proxy, pxn"},
      {&AlgorithmChoice::all_gather, "hierarchical", "all_gather", "all-gather", "ring"},
      {&AlgorithmChoice::reduce_scatter, "auto", "reduce_scatter", "reduce-scatter", "ring"},
  };
  for (const Case& c : cases) {
    AlgorithmChoice choice;
    choice.*c.field = c.value;
    try {
      const Lowerer lowerer(choice);
      ADD_FAILURE() << c.name << "=" << c.value << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), c.name);
      EXPECT_NE(e.message().find(c.collective), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("'" + c.value + "'"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("(valid: " + c.valid + ")"), std::string::npos) << e.what();
    }
  }
}

// --- pxn and the hierarchical all-to-all ------------------------------------------------------

// Members on two servers, with cross-rail and rail-aligned pairs: member i sends to member j
// the bytes v[i][j].
struct RelayCase {
  std::vector<NodeId> members{gpu(0, 0), gpu(0, 1), gpu(1, 1), gpu(1, 2)};
  ByteMatrix mat{4};
  CollectiveRequest r;
  RelayCase() {
    const std::int64_t v[4][4] = {{0, 5, 100, 40}, {0, 0, 8, 0}, {0, 0, 0, 0}, {0, 0, 6, 0}};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j)
        mat.at(i, j) = v[i][j];
    }
    r = request(CollectiveKind::AllToAll, members, mat.off_diagonal_sum());
    r.matrix = &mat;
  }
};

TEST(Pxn, CrossRailBytesMoveToTheDestinationsRailFirst) {
  const RelayCase c;
  const Plan p = lower("pxn", c.r);
  ASSERT_EQ(p.steps.size(), 2u);
  // s0.gpu0 -> s1.gpu1: over the NVSwitch to s0.gpu1, then rail 1. s0.gpu0 -> s1.gpu2: to
  // s0.gpu2, then rail 2. s0.gpu1 -> s1.gpu1 is on its rail already: sent directly. Server-local
  // bytes (s0.gpu0 -> s0.gpu1, s1.gpu2 -> s1.gpu1) move in the second step.
  std::vector<Edge> first{{gpu(0, 0), gpu(0, 1), 100, 1}, {gpu(0, 0), gpu(0, 2), 40, 1}};
  std::vector<Edge> second{{gpu(0, 0), gpu(0, 1), 5, 1},
                           {gpu(0, 1), gpu(1, 1), 100 + 8, 1},
                           {gpu(0, 2), gpu(1, 2), 40, 1},
                           {gpu(1, 2), gpu(1, 1), 6, 1}};
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(edges(p.steps[0]), first);
  EXPECT_EQ(edges(p.steps[1]), second);
  // Every transfer between servers is on one rail.
  for (const net::Transfer& t : p.steps[1].transfers) {
    if (topo().node(t.src).server != topo().node(t.dst).server) {
      EXPECT_EQ(topo().node(t.src).index, topo().node(t.dst).index);
    }
  }
  EXPECT_THROW(lower("pxn", request(CollectiveKind::AllReduce, first_gpus(4), 100)), Error);
}

TEST(HierarchicalAllToAll, EachPairSpreadsOverEveryRail) {
  const RelayCase c;
  const Plan p = lower("hierarchical", c.r);
  ASSERT_EQ(p.steps.size(), 3u);
  // Cross-server pairs split over the 4 rails: 100 -> 25 each, 40 -> 10 each, 8 -> 2 each.
  std::map<std::pair<NodeId, NodeId>, std::int64_t> gather, exchange, scatter;
  for (const net::Transfer& t : p.steps[0].transfers)
    gather[{t.src, t.dst}] += t.size.count();
  for (const net::Transfer& t : p.steps[1].transfers)
    exchange[{t.src, t.dst}] += t.size.count();
  for (const net::Transfer& t : p.steps[2].transfers)
    scatter[{t.src, t.dst}] += t.size.count();
  // s0.gpu0 keeps a quarter of its 140 on rail 0 and gathers the rest onto the other rails.
  EXPECT_EQ((gather[{gpu(0, 0), gpu(0, 1)}]), 25 + 10);
  EXPECT_EQ((gather[{gpu(0, 0), gpu(0, 2)}]), 25 + 10);
  EXPECT_EQ((gather[{gpu(0, 0), gpu(0, 3)}]), 25 + 10);
  EXPECT_EQ((gather[{gpu(0, 1), gpu(0, 0)}]), 2);
  // Rail c carries a quarter of every cross-server byte: (100 + 40 + 8) / 4 = 37.
  for (int rail = 0; rail < 4; ++rail)
    EXPECT_EQ((exchange[{gpu(0, rail), gpu(1, rail)}]), 37) << rail;
  // The server-local bytes move alongside: 5 in server 0, 6 in server 1.
  EXPECT_EQ((exchange[{gpu(0, 0), gpu(0, 1)}]), 5);
  EXPECT_EQ((exchange[{gpu(1, 2), gpu(1, 1)}]), 6);
  // The receiving GPUs get three quarters of their bytes scattered from the other rails (the
  // quarter on their own rail arrives directly): s1.gpu1 3/4 x (100 + 8), s1.gpu2 3/4 x 40.
  std::int64_t to_gpu11 = 0, to_gpu12 = 0;
  for (const auto& [pair, bytes] : scatter) {
    to_gpu11 += pair.second == gpu(1, 1) ? bytes : 0;
    to_gpu12 += pair.second == gpu(1, 2) ? bytes : 0;
  }
  EXPECT_EQ(to_gpu11, 81);
  EXPECT_EQ(to_gpu12, 30);
}

TEST(Lowerer, RailOptimizedRunsAllToAllsWithPxn) {
  const fabric::Topology rail = fabric::build_fabric("rail-optimized", cluster(4, 4, 4));
  const RelayCase c;
  CollectiveRequest r = c.r;
  for (NodeId& m : r.members)
    m = rail.gpu(topo().node(m).server, topo().node(m).index);
  const Plan p = Lowerer().lower(r, rail);
  EXPECT_EQ(p.steps.size(), 2u);                             // pxn's
  EXPECT_EQ(Lowerer().lower(c.r, topo()).steps.size(), 1u);  // direct on the fat-tree
}

}  // namespace
}  // namespace mfabric::collective
