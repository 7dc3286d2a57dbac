#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "workload/routing.h"

namespace mfabric::workload {
namespace {

void fill(RoutingTrace& t, int it, int li, int mb, const std::vector<std::int32_t>& values) {
  auto m = t.matrix(it, li, mb);
  ASSERT_EQ(m.size(), values.size());
  std::copy(values.begin(), values.end(), m.begin());
}

TEST(RoutingStats, SkewCvAndSparsityByHand) {
  // 2 sources x 4 experts, 2 iterations, one layer, one micro-batch.
  RoutingTrace t(2, 4, 2, {0}, 1);
  // Iteration 0: expert loads {8, 0, 0, 0} -> mean 2, max 8: skew 4, CV = sqrt(12) / 2.
  fill(t, 0, 0, 0, {4, 0, 0, 0, 4, 0, 0, 0});
  // Iteration 1: uniform loads {2, 2, 2, 2}: skew 1, CV 0.
  fill(t, 1, 0, 0, {1, 1, 1, 1, 1, 1, 1, 1});
  const auto st = routing_stats(t);
  EXPECT_EQ(st.records, 2);
  EXPECT_DOUBLE_EQ(st.skew_mean, 2.5);
  EXPECT_DOUBLE_EQ(st.skew_min, 1.0);
  EXPECT_DOUBLE_EQ(st.skew_max, 4.0);
  EXPECT_NEAR(st.cv_first_iteration, std::sqrt(12.0) / 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(st.cv_last_iteration, 0.0);
  // Iteration 0: 2 of 8 pairs carry everything; iteration 1: 7 of 8 pairs needed for 80% (6.4).
  EXPECT_DOUBLE_EQ(st.pairs_for_80pct, (2.0 / 8 + 7.0 / 8) / 2);
  // One layer: no layer pairs.
  EXPECT_EQ(st.adjacent_layer_correlation, 0.0);
  EXPECT_EQ(st.distant_layer_correlation, 0.0);
}

TEST(RoutingStats, SparsityCountsTheHeaviestPairsFirst) {
  RoutingTrace t(1, 5, 1, {0}, 1);
  fill(t, 0, 0, 0, {1, 50, 3, 30, 16});  // 80 of 100: 50 + 30
  EXPECT_DOUBLE_EQ(routing_stats(t).pairs_for_80pct, 2.0 / 5);
  fill(t, 0, 0, 0, {1, 50, 3, 29, 17});  // 50 + 29 = 79 < 80: a third pair
  EXPECT_DOUBLE_EQ(routing_stats(t).pairs_for_80pct, 3.0 / 5);
}

TEST(RoutingStats, AdjacentLayerFollowsPreviousLayer) {
  // 3 layers, 2 experts, 6 sources. Layer 1 copies layer 0 with the experts swapped (perfectly
  // predictable from one expert of layer 0); layer 2 is constant across sources (correlation
  // with anything counts as 0).
  RoutingTrace t(6, 2, 1, {0, 1, 2}, 1);
  const std::vector<std::int32_t> layer0 = {10, 0, 8, 2, 5, 5, 3, 7, 9, 1, 0, 10};
  std::vector<std::int32_t> layer1(layer0.size());
  for (std::size_t r = 0; r < 6; ++r) {
    layer1[2 * r] = layer0[2 * r + 1];
    layer1[2 * r + 1] = layer0[2 * r];
  }
  fill(t, 0, 0, 0, layer0);
  fill(t, 0, 1, 0, layer1);
  fill(t, 0, 2, 0, std::vector<std::int32_t>(12, 5));
  const auto st = routing_stats(t);
  // Pairs (0,1): every expert correlates perfectly with one expert of layer 0 -> 1.
  // Pairs (1,2): layer 2 is constant -> 0. Mean over the two adjacent pairs: 0.5.
  EXPECT_NEAR(st.adjacent_layer_correlation, 0.5, 1e-6);  // single precision
  EXPECT_NEAR(st.distant_layer_correlation, 0.0, 1e-6);   // layer 2 vs layer 0
}

TEST(RoutingStats, DistantBaselineUsesLayersTwoApart) {
  RoutingTrace t(4, 2, 1, {0, 1, 2}, 1);
  fill(t, 0, 0, 0, {1, 9, 4, 6, 7, 3, 9, 1});
  fill(t, 0, 1, 0, {5, 5, 5, 5, 5, 5, 5, 5});  // constant
  fill(t, 0, 2, 0, {1, 9, 4, 6, 7, 3, 9, 1});  // = layer 0
  const auto st = routing_stats(t);
  EXPECT_NEAR(st.distant_layer_correlation, 1.0, 1e-6);
  EXPECT_NEAR(st.adjacent_layer_correlation, 0.0, 1e-6);
}

TEST(RoutingStats, DegenerateTraces) {
  EXPECT_EQ(routing_stats(RoutingTrace()).records, 0);
  // All-zero trace: nothing to average, everything 0.
  const auto zero = routing_stats(RoutingTrace(2, 3, 1, {0, 1}, 1));
  EXPECT_EQ(zero.records, 2);
  EXPECT_EQ(zero.skew_mean, 0.0);
  EXPECT_EQ(zero.pairs_for_80pct, 0.0);
  EXPECT_EQ(zero.adjacent_layer_correlation, 0.0);
  // A single sample (1 source, 1 micro-batch, 1 iteration): no correlation can be measured.
  RoutingTrace one(1, 2, 1, {0, 1}, 1);
  fill(one, 0, 0, 0, {3, 1});
  fill(one, 0, 1, 0, {1, 3});
  EXPECT_EQ(routing_stats(one).adjacent_layer_correlation, 0.0);
}

}  // namespace
}  // namespace mfabric::workload
