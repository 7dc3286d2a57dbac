// The scores of a demand prediction and the token -> rank-bytes placement, on hand-derived cases.
#include "control/prediction_metrics.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "control/token_demand.h"
#include "core/error.h"

namespace mfabric::control {
namespace prediction_metrics_test {
namespace {

TEST(PredictionMetrics, ColumnSums) {
  const std::vector<double> m{1, 2, 3,  //
                              4, 5, 6};
  EXPECT_EQ(column_sums(m, 2, 3), (std::vector<double>{5, 7, 9}));
  EXPECT_THROW(column_sums(m, 3, 3), std::invalid_argument);
}

TEST(PredictionMetrics, TopKIndicesTieBreakBySmallerIndex) {
  const std::vector<double> v{3, 7, 7, 1, 3};
  EXPECT_EQ(top_k_indices(v, 1), (std::vector<int>{1}));
  EXPECT_EQ(top_k_indices(v, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(top_k_indices(v, 5), (std::vector<int>{1, 2, 0, 4, 3}));
  EXPECT_THROW(top_k_indices(v, 0), std::invalid_argument);
  EXPECT_THROW(top_k_indices(v, 6), std::invalid_argument);
}

TEST(PredictionMetrics, TopKAccuracyByHand) {
  const std::vector<double> actual{5, 1, 3, 2};  // top-2 {0, 2}
  EXPECT_DOUBLE_EQ(top_k_accuracy(actual, std::vector<double>{1, 5, 4, 0}, 2), 0.5);  // {1, 2}
  EXPECT_DOUBLE_EQ(top_k_accuracy(actual, std::vector<double>{9, 0, 8, 0}, 2), 1.0);
  EXPECT_DOUBLE_EQ(top_k_accuracy(actual, std::vector<double>{0, 9, 0, 8}, 2), 0.0);
  // Uniform: ties -> {0, 1}, one of the two.
  EXPECT_DOUBLE_EQ(top_k_accuracy(actual, std::vector<double>{1, 1, 1, 1}, 2), 0.5);
  EXPECT_DOUBLE_EQ(top_k_accuracy(actual, std::vector<double>{1, 1, 1, 1}, 4), 1.0);
}

TEST(PredictionMetrics, TotalVariationByHand) {
  EXPECT_DOUBLE_EQ(total_variation(std::vector<double>{1, 0}, std::vector<double>{0, 1}), 1.0);
  // (0.5, 0.5) vs (0.25, 0.75): half of 0.25 + 0.25.
  EXPECT_DOUBLE_EQ(total_variation(std::vector<double>{2, 2}, std::vector<double>{1, 3}), 0.25);
  // Scale does not matter; a zero vector is uniform.
  EXPECT_DOUBLE_EQ(total_variation(std::vector<double>{10, 30}, std::vector<double>{1, 3}), 0.0);
  EXPECT_DOUBLE_EQ(total_variation(std::vector<double>{0, 0}, std::vector<double>{1, 1}), 0.0);
  EXPECT_THROW(total_variation(std::vector<double>{1}, std::vector<double>{1, 2}),
               std::invalid_argument);
  EXPECT_THROW(total_variation(std::vector<double>{-1, 2}, std::vector<double>{1, 2}),
               std::invalid_argument);
}

TEST(PredictionMetrics, DemandRelativeErrorByHand) {
  // Actual: (0,1) 10, (1,2) 30 -> total 40. Predicted: (0,1) 15, (0,2) 5, (1,2) 30.
  // |15 - 10| + |5 - 0| + 0 = 10 -> 0.25.
  const ServerDemand actual =
      demand_from_server_bytes(std::vector<std::int64_t>{0, 10, 0, 0, 0, 30, 0, 0, 0}, 3);
  const ServerDemand predicted =
      demand_from_server_bytes(std::vector<std::int64_t>{0, 15, 5, 0, 0, 30, 0, 0, 0}, 3);
  EXPECT_DOUBLE_EQ(demand_relative_error(actual, predicted), 0.25);
  EXPECT_DOUBLE_EQ(demand_relative_error(actual, actual), 0.0);
  EXPECT_THROW(demand_relative_error(ServerDemand(3), predicted), std::invalid_argument);
  EXPECT_THROW(demand_relative_error(actual, ServerDemand(2)), std::invalid_argument);
}

// --- token_demand.h -----------------------------------------------------------------------

TEST(RankBytesFromTokens, ExpertsGroupedByRankByHand) {
  // EP 2, 4 experts: experts 0, 1 on rank 0, experts 2, 3 on rank 1; 10 bytes per token.
  const std::vector<double> tokens{1, 2, 3, 4,  //
                                   0, 1, 0, 5.5};
  const workload::ByteMatrix m = rank_bytes_from_tokens(tokens, 2, 4, 10);
  ASSERT_EQ(m.n, 2);
  EXPECT_EQ(m.at(0, 0), 30);
  EXPECT_EQ(m.at(0, 1), 70);
  EXPECT_EQ(m.at(1, 0), 10);
  EXPECT_EQ(m.at(1, 1), 55);
  // Fractions are rounded to whole bytes: 0.26 x 10 = 2.6 -> 3.
  const workload::ByteMatrix r =
      rank_bytes_from_tokens(std::vector<double>{0.26, 0, 0, 0}, 2, 2, 10);
  EXPECT_EQ(r.at(0, 0), 3);
}

TEST(RankBytesFromTokens, BadInputNamesTheField) {
  const auto field = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.field();
    }
    return std::string();
  };
  const std::vector<double> ok{1, 2, 3, 4};
  EXPECT_EQ(field([&] { rank_bytes_from_tokens(ok, 0, 4, 1); }), "ep");
  EXPECT_EQ(field([&] {
              rank_bytes_from_tokens(std::vector<double>{1, 2, 3}, 2, 3, 1);
            }),
            "experts");
  EXPECT_EQ(field([&] { rank_bytes_from_tokens(ok, 2, 4, 1); }), "tokens");  // 4 != 2 x 4
  EXPECT_EQ(field([&] { rank_bytes_from_tokens(ok, 2, 2, 0); }), "bytes_per_token");
  EXPECT_EQ(field([&] {
              rank_bytes_from_tokens(std::vector<double>{1, -2, 3, 4}, 2, 2, 1);
            }),
            "tokens[0][1]");
  EXPECT_EQ(field([&] {
              rank_bytes_from_tokens(std::vector<double>{1, 2, 3, 1e300}, 2, 2, 1);
            }),
            "tokens[1][1]");
}

}  // namespace
}  // namespace prediction_metrics_test
}  // namespace mfabric::control
