// The ring lowering: all-reduce, reduce-scatter, all-gather, broadcast and barrier as rings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collective/lowering.h"
#include "collective/lowering_cases.h"

// In the namespace of lowering_cases.h (test files are compiled several to a translation unit).
namespace mfabric::collective::lowering_test {
namespace {

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

}  // namespace
}  // namespace mfabric::collective::lowering_test
