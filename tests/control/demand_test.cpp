#include "control/demand.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "test_text.h"

namespace mfabric::control {
namespace {

using testing::error_text;

TEST(ServerDemand, SymmetricSumOfBothDirectionsWithoutDiagonal) {
  // S[0][1] = 5, S[1][0] = 3, S[1][2] = 7, diagonal 9 (intra-server).
  const std::vector<std::int64_t> s{9, 5, 0,  //
                                    3, 9, 7,  //
                                    0, 0, 9};
  const ServerDemand d = demand_from_server_bytes(s, 3);
  EXPECT_EQ(d.servers(), 3);
  EXPECT_EQ(d.at(0, 1), 8);
  EXPECT_EQ(d.at(1, 0), 8);
  EXPECT_EQ(d.at(1, 2), 7);
  EXPECT_EQ(d.at(2, 1), 7);
  EXPECT_EQ(d.at(0, 2), 0);
  EXPECT_EQ(d.at(1, 1), 0);
  EXPECT_EQ(d.total(), 15);
  const std::vector<DemandPair> pairs = d.pairs();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].i, 0);
  EXPECT_EQ(pairs[0].j, 1);
  EXPECT_EQ(pairs[0].bytes, 8);
  EXPECT_EQ(pairs[1].i, 1);
  EXPECT_EQ(pairs[1].j, 2);
}

TEST(ServerDemand, ServerBytesErrorsNameTheEntry) {
  EXPECT_NE(error_text([] {
              demand_from_server_bytes(std::vector<std::int64_t>{0, 1, 2}, 2);
            }).find("square 2 x 2"),
            std::string::npos);
  EXPECT_NE(error_text([] {
              demand_from_server_bytes(std::vector<std::int64_t>{0, -1, 0, 0}, 2);
            }).find("demand_bytes[0][1]: expected a non-negative"),
            std::string::npos);
  EXPECT_NE(error_text([] {
              demand_from_server_bytes(std::vector<std::int64_t>{0, kMaxPairBytes + 1, 0, 0}, 2);
            }).find("demand_bytes[0][1]"),
            std::string::npos);
  // Each direction fits, the pair's sum does not.
  EXPECT_NE(error_text([] {
              demand_from_server_bytes(std::vector<std::int64_t>{0, kMaxPairBytes, 1, 0}, 2);
            }).find("demand_bytes[1][0]"),
            std::string::npos);
  EXPECT_NE(error_text([] { demand_from_server_bytes({}, 0); }).find("1 to 1024 servers"),
            std::string::npos);
  EXPECT_NE(error_text([] { ServerDemand(kMaxRegionServers + 1); }).find("1 to 1024"),
            std::string::npos);
}

TEST(ServerDemand, FromGpuBytesDropsIntraServerBytes) {
  // Four GPUs, two per server: members 0, 1 on server 0; 2, 3 on server 1.
  workload::ByteMatrix m(4);
  m.at(0, 1) = 100;  // intra-server
  m.at(0, 2) = 10;
  m.at(1, 3) = 20;
  m.at(3, 0) = 5;
  m.at(2, 3) = 1000;  // intra-server
  const std::vector<int> server{0, 0, 1, 1};
  const ServerDemand d = demand_from_gpu_bytes(m, server, 2);
  EXPECT_EQ(d.at(0, 1), 35);
  EXPECT_EQ(d.at(1, 0), 35);
  EXPECT_EQ(d.at(0, 0), 0);
}

TEST(ServerDemand, FromGpuBytesErrors) {
  workload::ByteMatrix m(2);
  EXPECT_NE(error_text([&] {
              demand_from_gpu_bytes(m, std::vector<int>{0}, 2);
            }).find("one server per member"),
            std::string::npos);
  EXPECT_NE(error_text([&] {
              demand_from_gpu_bytes(m, std::vector<int>{0, 2}, 2);
            }).find("server_of_member[1]"),
            std::string::npos);
  m.at(1, 0) = -4;
  EXPECT_NE(error_text([&] {
              demand_from_gpu_bytes(m, std::vector<int>{0, 1}, 2);
            }).find("bytes[1][0]"),
            std::string::npos);
}

TEST(ServerDemand, FromTokensMapsRanksAndExpertsToServers) {
  // 4 EP ranks, 2 per server (servers 0, 1); 2 experts per rank: experts 0-3 on server 0
  // (ranks 0, 1), experts 4-7 on server 1 (ranks 2, 3). 10 bytes per token.
  std::vector<std::int64_t> tokens(4 * 8, 0);
  tokens[0 * 8 + 5] = 3;  // rank 0 (server 0) -> expert 5 (rank 2, server 1)
  tokens[1 * 8 + 7] = 2;  // rank 1 (server 0) -> expert 7 (server 1)
  tokens[3 * 8 + 1] = 4;  // rank 3 (server 1) -> expert 1 (server 0)
  tokens[2 * 8 + 6] = 9;  // rank 2 (server 1) -> expert 6 (server 1): intra-server
  const ServerDemand d = demand_from_tokens(tokens, 4, 8, {2, 2, 10});
  EXPECT_EQ(d.servers(), 2);
  EXPECT_EQ(d.at(0, 1), (3 + 2 + 4) * 10);
}

TEST(ServerDemand, FromTokensErrors) {
  const std::vector<std::int64_t> tokens(4 * 8, 1);
  EXPECT_NE(error_text([&] {
              demand_from_tokens(tokens, 4, 8, {3, 2, 10});
            }).find("multiple of ep_ranks_per_server (3)"),
            std::string::npos);
  EXPECT_NE(error_text([&] {
              demand_from_tokens(tokens, 4, 8, {2, 3, 10});
            }).find("expected 12 experts"),
            std::string::npos);
  EXPECT_NE(error_text([&] {
              demand_from_tokens(tokens, 4, 8, {2, 2, 0});
            }).find("bytes_per_token"),
            std::string::npos);
  EXPECT_NE(error_text([&] {
              demand_from_tokens(tokens, 4, 8, {0, 2, 1});
            }).find("ep_ranks_per_server"),
            std::string::npos);
  std::vector<std::int64_t> bad = tokens;
  bad[9] = -1;
  EXPECT_NE(error_text([&] {
              demand_from_tokens(bad, 4, 8, {2, 2, 1});
            }).find("tokens[1][1]"),
            std::string::npos);
  bad[9] = kMaxPairBytes;
  EXPECT_NE(error_text([&] {
              demand_from_tokens(bad, 4, 8, {2, 2, 2});
            }).find("tokens[1][1]"),
            std::string::npos);
}

TEST(ServerDemand, TheRegionsTotalIsBoundedSoThatItNeverOverflows) {
  // 1024 servers hold half a million pairs: at 1 PiB each their sum would overflow 64 bits (a
  // fuzzed demand file of 130 servers did). The region carries at most 1 EiB: 1024 full pairs.
  ServerDemand d(kMaxRegionServers);
  int added = 0;
  try {
    for (int i = 0; i < kMaxRegionServers; ++i) {
      for (int j = i + 1; j < kMaxRegionServers; ++j) {
        d.add(i, j, kMaxPairBytes);
        ++added;
      }
    }
    ADD_FAILURE() << "expected the region's total to be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 EiB) a region may carry"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(added, kMaxRegionBytes / kMaxPairBytes);
  EXPECT_EQ(d.total(), kMaxRegionBytes);
}

}  // namespace
}  // namespace mfabric::control
