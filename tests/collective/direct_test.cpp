// The direct lowering: uniform all-to-all and all-to-allv from a byte matrix.
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

}  // namespace
}  // namespace mfabric::collective::lowering_test
