#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "workload/routing.h"

namespace mfabric::workload {
namespace {

TEST(RoutingTrace, ShapeAndZeroCounts) {
  RoutingTrace t(2, 3, 4, {1, 3, 5}, 2);
  EXPECT_EQ(t.ep(), 2);
  EXPECT_EQ(t.experts(), 3);
  EXPECT_EQ(t.iterations(), 4);
  EXPECT_EQ(t.micro_batches(), 2);
  EXPECT_EQ(t.layers(), (std::vector<int>{1, 3, 5}));
  EXPECT_FALSE(t.is_static());
  EXPECT_EQ(t.matrix(3, 2, 1).size(), 6u);
  for (auto v : t.matrix(3, 2, 1))
    EXPECT_EQ(v, 0);
  EXPECT_EQ(t.row_sum(0, 0, 0, 1), 0);
}

TEST(RoutingTrace, LayerIndex) {
  RoutingTrace t(1, 1, 1, {1, 3, 5}, 1);
  EXPECT_EQ(t.layer_index(1), 0);
  EXPECT_EQ(t.layer_index(5), 2);
  EXPECT_EQ(t.layer_index(0), -1);
  EXPECT_EQ(t.layer_index(4), -1);
  EXPECT_EQ(t.layer_index(6), -1);
}

TEST(RoutingTrace, RecordsAreDistinctAndRowMajor) {
  RoutingTrace t(2, 3, 2, {0, 7}, 2);
  t.matrix(1, 1, 0)[1 * 3 + 2] = 42;  // iteration 1, layer 7, micro-batch 0, rank 1 -> expert 2
  t.matrix(0, 0, 1)[0] = 5;
  EXPECT_EQ(t.row_sum(1, 1, 0, 1), 42);
  EXPECT_EQ(t.row_sum(1, 1, 0, 0), 0);
  EXPECT_EQ(t.row_sum(0, 0, 1, 0), 5);
  // Every other record is untouched.
  int nonzero_records = 0;
  for (int it = 0; it < 2; ++it) {
    for (int li = 0; li < 2; ++li) {
      for (int mb = 0; mb < 2; ++mb) {
        for (int r = 0; r < 2; ++r)
          nonzero_records += t.row_sum(it, li, mb, r) != 0;
      }
    }
  }
  EXPECT_EQ(nonzero_records, 2);
}

TEST(RoutingTrace, IterationsAndMicroBatchesWrapAround) {
  RoutingTrace t(1, 2, 3, {0}, 2);
  t.matrix(1, 0, 1)[0] = 9;
  EXPECT_EQ(t.matrix(4, 0, 1)[0], 9);  // 4 % 3 = 1
  EXPECT_EQ(t.matrix(1, 0, 3)[0], 9);  // 3 % 2 = 1
  EXPECT_EQ(t.matrix(7, 0, 5)[0], 9);  // both wrap
  EXPECT_EQ(t.row_sum(301, 0, 11, 0), 9);
  EXPECT_EQ(t.matrix(2, 0, 1)[0], 0);
  const RoutingTrace& c = t;
  EXPECT_EQ(c.matrix(10, 0, 1)[0], 9);
}

TEST(RoutingTrace, BoundsChecks) {
  RoutingTrace t(2, 2, 1, {0, 1}, 1);
  EXPECT_THROW(t.matrix(0, 2, 0), std::out_of_range);
  EXPECT_THROW(t.matrix(0, -1, 0), std::out_of_range);
  EXPECT_THROW(t.matrix(-1, 0, 0), std::out_of_range);
  EXPECT_THROW(t.matrix(0, 0, -1), std::out_of_range);
  EXPECT_THROW(t.row_sum(0, 0, 0, 2), std::out_of_range);
  EXPECT_THROW(t.row_sum(0, 0, 0, -1), std::out_of_range);
  EXPECT_THROW(t.row_sum(0, 5, 0, 0), std::out_of_range);
  const RoutingTrace empty;
  EXPECT_THROW(empty.matrix(0, 0, 0), std::out_of_range);
}

TEST(RoutingTrace, RejectsBadShapesNamingTheField) {
  auto field_of = [](auto make) {
    try {
      make();
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_of([] { RoutingTrace(0, 1, 1, {0}, 1); }), "ep");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 0, 1, {0}, 1); }), "experts");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 0, {0}, 1); }), "iterations");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 1, {0}, 0); }), "micro_batches");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 1, {}, 1); }), "layers");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 1, {-2}, 1); }), "layers[0]");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 1, {3, 1}, 1); }), "layers[1]");
  EXPECT_EQ(field_of([] { RoutingTrace(1, 1, 1, {1, 1}, 1); }), "layers[1]");
}

TEST(RoutingTrace, StaticTraceStandsForEveryLayer) {
  RoutingTrace t(2, 2, 1, {0}, 1);
  t.matrix(0, 0, 0)[3] = 7;
  t.mark_static();
  EXPECT_TRUE(t.is_static());
  EXPECT_EQ(t.layer_index(0), 0);
  EXPECT_EQ(t.layer_index(3), 0);
  EXPECT_EQ(t.layer_index(60), 0);
  EXPECT_EQ(t.matrix(12, t.layer_index(60), 5)[3], 7);

  RoutingTrace two_layers(2, 2, 1, {0, 1}, 1);
  EXPECT_THROW(two_layers.mark_static(), Error);
  RoutingTrace two_iterations(2, 2, 2, {0}, 1);
  EXPECT_THROW(two_iterations.mark_static(), Error);
}

}  // namespace
}  // namespace mfabric::workload
