// KernelCurve: interpolation of measured efficiencies, checked against values worked by hand.
#include "workload/kernel_curve.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mfabric::workload {
namespace {

TEST(KernelCurve, InterpolatesLinearlyInLogRows) {
  const KernelCurve c({{100, 1, 0.2}, {10000, 1, 0.6}});
  // 1000 is half-way between 100 and 10000 in log: half-way between the efficiencies.
  EXPECT_NEAR(c.efficiency(1000, 1), 0.4, 1e-12);
  EXPECT_NEAR(c.efficiency(100, 1), 0.2, 1e-12);
  EXPECT_NEAR(c.efficiency(10000, 1), 0.6, 1e-12);
}

TEST(KernelCurve, HoldsItsEndsBeyondTheMeasuredRows) {
  const KernelCurve c({{100, 1, 0.2}, {10000, 1, 0.6}});
  EXPECT_NEAR(c.efficiency(1, 1), 0.2, 1e-12);
  EXPECT_NEAR(c.efficiency(1e9, 1), 0.6, 1e-12);
}

TEST(KernelCurve, MixesLinesLinearlyInLogDim) {
  // Two dims, 10 and 1000; at dim 100 (half-way in log) the mean of the two lines.
  const KernelCurve c({{100, 10, 0.2}, {100, 1000, 0.6}, {1000, 10, 0.4}, {1000, 1000, 0.8}});
  EXPECT_NEAR(c.efficiency(100, 100), 0.4, 1e-12);
  EXPECT_NEAR(c.efficiency(1000, 100), 0.6, 1e-12);
  // Beyond the outermost dims the nearest line holds.
  EXPECT_NEAR(c.efficiency(100, 1), 0.2, 1e-12);
  EXPECT_NEAR(c.efficiency(1000, 1e6), 0.8, 1e-12);
}

TEST(KernelCurve, LinesMayCoverDifferentRows) {
  // Line 1 measured at 100 and 10000 rows, line 2 at 1000 only: each is read at its own rows.
  const KernelCurve c({{100, 1, 0.2}, {10000, 1, 0.6}, {1000, 100, 0.5}});
  EXPECT_NEAR(c.efficiency(1000, 10), (0.4 + 0.5) / 2, 1e-12);
}

TEST(KernelCurve, AveragesAShapeMeasuredTwice) {
  const KernelCurve c({{100, 1, 0.2}, {100, 1, 0.4}});
  EXPECT_NEAR(c.efficiency(100, 1), 0.3, 1e-12);
  EXPECT_EQ(c.points().size(), 1u);
}

TEST(KernelCurve, RefusesPointsOutsideTheirRange) {
  EXPECT_THROW(KernelCurve({{0, 1, 0.5}}), Error);
  EXPECT_THROW(KernelCurve({{1, -1, 0.5}}), Error);
  EXPECT_THROW(KernelCurve({{1, 1, 0}}), Error);
  EXPECT_THROW(KernelCurve({{1, 1, 1.5}}), Error);
  EXPECT_THROW(KernelCurve().efficiency(1, 1), Error);
}

}  // namespace
}  // namespace mfabric::workload
