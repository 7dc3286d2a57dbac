#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The skew alone (what every output prints): the same two records, and an empty one skipped.
TEST(RoutingStats, ExpertLoadSkewByHand) {
  RoutingTrace t(2, 4, 3, {0}, 1);
  fill(t, 0, 0, 0, {4, 0, 0, 0, 4, 0, 0, 0});  // skew 4
  fill(t, 1, 0, 0, {1, 1, 1, 1, 1, 1, 1, 1});  // skew 1
  fill(t, 2, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0});  // no tokens: not a record of skew
  const ExpertLoadSkew skew = expert_load_skew(t);
  EXPECT_EQ(skew.records, 2);
  EXPECT_DOUBLE_EQ(skew.mean, 2.5);
  EXPECT_DOUBLE_EQ(skew.min, 1.0);
  EXPECT_DOUBLE_EQ(skew.max, 4.0);
}

TEST(RoutingStats, SparsityCountsTheHeaviestPairsFirst) {
  RoutingTrace t(1, 5, 1, {0}, 1);
  fill(t, 0, 0, 0, {1, 50, 3, 30, 16});  // 80 of 100: 50 + 30
  EXPECT_DOUBLE_EQ(routing_stats(t).pairs_for_80pct, 2.0 / 5);
  fill(t, 0, 0, 0, {1, 50, 3, 29, 17});  // 50 + 29 = 79 < 80: a third pair
  EXPECT_DOUBLE_EQ(routing_stats(t).pairs_for_80pct, 3.0 / 5);
}

// Rows of 10 tokens over 2 experts for 2 sources x 3 micro-batches (1 iteration): `a[mb][r]`
// tokens to expert 0, the rest to expert 1.
void fill_layer(RoutingTrace& t, int li, const std::vector<std::vector<std::int32_t>>& a) {
  for (int mb = 0; mb < 3; ++mb) {
    const auto& v = a[static_cast<std::size_t>(mb)];
    fill(t, 0, li, mb, {v[0], 10 - v[0], v[1], 10 - v[1]});
  }
}

// Varies per (micro-batch, source) beyond what a source or a micro-batch has in common.
const std::vector<std::vector<std::int32_t>> kVarying = {{10, 2}, {7, 6}, {4, 3}};
// Expert 0's share = 0.5 + source effect (+0.2, -0.2) + micro-batch effect (+0.3, 0, -0.3):
// nothing specific to a (micro-batch, source) pair.
const std::vector<std::vector<std::int32_t>> kAdditive = {{10, 6}, {7, 3}, {4, 0}};

TEST(RoutingStats, AdjacentLayerFollowsPreviousLayer) {
  // Layer 1 is layer 0 with the experts swapped: perfectly predictable from one expert of
  // layer 0. Layers 2 and 3 have the same per-source pattern (each source always sends 9 of 10
  // tokens to "its" expert) but nothing beyond it, which a predictor can learn from the source
  // alone: it counts 0, as does layer 2 against layer 1.
  RoutingTrace t(2, 2, 1, {0, 1, 2, 3}, 3);
  fill_layer(t, 0, kVarying);
  std::vector<std::vector<std::int32_t>> swapped = kVarying;
  for (auto& mb : swapped) {
    for (auto& v : mb)
      v = 10 - v;
  }
  fill_layer(t, 1, swapped);
  const std::vector<std::vector<std::int32_t>> per_source = {{9, 1}, {9, 1}, {9, 1}};
  fill_layer(t, 2, per_source);
  fill_layer(t, 3, per_source);
  const auto st = routing_stats(t);
  // Pairs (0,1): 1; (1,2) and (2,3): 0. Layers two apart, (0,2) and (1,3): 0.
  EXPECT_NEAR(st.adjacent_layer_correlation, 1.0 / 3.0, 1e-6);  // single precision
  EXPECT_NEAR(st.distant_layer_correlation, 0.0, 1e-6);
}

TEST(RoutingStats, DistantBaselineUsesLayersTwoApart) {
  RoutingTrace t(2, 2, 1, {0, 1, 2}, 3);
  fill_layer(t, 0, kVarying);
  fill_layer(t, 1, kAdditive);  // source and micro-batch effects only
  fill_layer(t, 2, kVarying);   // = layer 0
  const auto st = routing_stats(t);
  EXPECT_NEAR(st.distant_layer_correlation, 1.0, 1e-6);
  EXPECT_NEAR(st.adjacent_layer_correlation, 0.0, 1e-6);
}

TEST(RoutingStats, CorrelationIgnoresRowSums) {
  // Loads are shares of the row: doubling some rows changes nothing.
  RoutingTrace a(2, 2, 1, {0, 1}, 3), b(2, 2, 1, {0, 1}, 3);
  std::vector<std::vector<std::int32_t>> next = {{3, 9}, {5, 1}, {8, 6}};
  fill_layer(a, 0, kVarying);
  fill_layer(a, 1, next);
  fill_layer(b, 0, kVarying);
  fill_layer(b, 1, next);
  auto m = b.matrix(0, 1, 2);
  for (auto& v : m)
    v *= 2;
  EXPECT_NEAR(routing_stats(a).adjacent_layer_correlation,
              routing_stats(b).adjacent_layer_correlation, 1e-6);
  EXPECT_GT(routing_stats(a).adjacent_layer_correlation, 0.0);
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
  // One record: what differs between sources is all per-source, nothing is left.
  RoutingTrace one_record(3, 2, 1, {0, 1}, 1);
  fill(one_record, 0, 0, 0, {3, 1, 0, 4, 2, 2});
  fill(one_record, 0, 1, 0, {1, 3, 4, 0, 2, 2});
  EXPECT_EQ(routing_stats(one_record).adjacent_layer_correlation, 0.0);
  // One source over several records: everything is per-record.
  RoutingTrace one_source(1, 2, 3, {0, 1}, 1);
  for (int it = 0; it < 3; ++it) {
    fill(one_source, it, 0, 0, {it, 4 - it});
    fill(one_source, it, 1, 0, {4 - it, it});
  }
  EXPECT_EQ(routing_stats(one_source).adjacent_layer_correlation, 0.0);
}

}  // namespace
}  // namespace mfabric::workload
