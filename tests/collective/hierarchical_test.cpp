// The hierarchical lowering: all-reduce inside and across servers, all-to-all over every rail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "collective/lowering.h"
#include "collective/lowering_cases.h"

// In the namespace of lowering_cases.h (test files are compiled several to a translation unit).
namespace mfabric::collective::lowering_test {
namespace {

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

// --- the hierarchical all-to-all ---------------------------------------------------------

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

}  // namespace
}  // namespace mfabric::collective::lowering_test
