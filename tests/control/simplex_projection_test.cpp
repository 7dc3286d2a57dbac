// Euclidean projection onto the probability simplex: hand-derived cases, the optimality
// conditions on random vectors, and a brute-force comparison on small ones.
#include "control/simplex_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/rng.h"

namespace mfabric::control {
namespace simplex_projection_test {
namespace {

std::vector<double> projected(std::vector<double> v) {
  project_onto_simplex(v);
  return v;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], 1e-12) << "entry " << k;
}

double distance2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    d += (a[k] - b[k]) * (a[k] - b[k]);
  return d;
}

// Hand-derived with the algorithm of the header: sort, theta, max(v - theta, 0).
TEST(SimplexProjection, PointOnTheSimplexStays) {
  expect_near_all(projected({0.2, 0.3, 0.5}), {0.2, 0.3, 0.5});
  expect_near_all(projected({0, 1, 0}), {0, 1, 0});
}

TEST(SimplexProjection, EqualEntriesBecomeUniform) {
  // theta = (4 x 0.4 - 1) / 4 = 0.15.
  expect_near_all(projected({0.4, 0.4, 0.4, 0.4}), {0.25, 0.25, 0.25, 0.25});
  // theta = (1.5 - 1) / 3 = 1/6.
  expect_near_all(projected({0.5, 0.5, 0.5}), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  // Below the simplex: theta = (0 - 1) / 2 = -0.5.
  expect_near_all(projected({0, 0}), {0.5, 0.5});
}

TEST(SimplexProjection, SingleEntryIsOne) {
  expect_near_all(projected({7}), {1});
  expect_near_all(projected({-3}), {1});
}

TEST(SimplexProjection, LargeEntryTakesEverything) {
  // u = (3, 0.5, -1): rho = 1 (0.5 - (3.5 - 1) / 2 < 0), theta = 2.
  expect_near_all(projected({-1, 3, 0.5}), {0, 1, 0});
  // u = (2, 0): theta = 1.
  expect_near_all(projected({2, 0}), {1, 0});
}

TEST(SimplexProjection, PartialSupport) {
  // u = (0.6, 0.5, -0.2): rho = 2 (-0.2 - (0.9 - 1) / 3 < 0), theta = (1.1 - 1) / 2 = 0.05.
  expect_near_all(projected({0.6, 0.5, -0.2}), {0.55, 0.45, 0});
  // All negative: u = (-1, -3), rho = 1 (-3 - (-4 - 1) / 2 = -0.5 < 0), theta = -2.
  expect_near_all(projected({-3, -1}), {0, 1});
  // u = (1, 0.8, 0.7, 0.1): rho = 3 (0.7 - (2.5 - 1) / 3 = 0.2 > 0; 0.1 - (2.6 - 1) / 4 < 0),
  // theta = 0.5.
  expect_near_all(projected({1, 0.1, 0.8, 0.7}), {0.5, 0, 0.3, 0.2});
  // u = (1, 0.8, 0.3, 0.1): rho = 2 (0.3 - (2.1 - 1) / 3 < 0), theta = 0.4.
  expect_near_all(projected({1, 0.1, 0.8, 0.3}), {0.6, 0, 0.4, 0});
}

// Optimality (KKT) of min ||x - v||^2 over the simplex: x = max(v - theta, 0) for one theta,
// i.e. v_i - x_i = theta where x_i > 0 and v_i <= theta where x_i = 0.
TEST(SimplexProjection, RandomVectorsSatisfyTheOptimalityConditions) {
  Rng rng(11);
  std::vector<double> scratch;
  for (int trial = 0; trial < 2000; ++trial) {
    const auto n = static_cast<std::size_t>(1 + rng.below(12));
    const double scale = trial % 3 == 0 ? 0.1 : (trial % 3 == 1 ? 1.0 : 50.0);
    std::vector<double> v(n);
    for (double& x : v)
      x = scale * (2 * rng.uniform() - 1);
    std::vector<double> x = v;
    project_onto_simplex(x, scratch);
    EXPECT_NEAR(std::accumulate(x.begin(), x.end(), 0.0), 1.0, 1e-12);
    double theta = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t k = 0; k < n; ++k) {
      ASSERT_GE(x[k], 0.0);
      if (x[k] > 0) {
        if (std::isnan(theta)) theta = v[k] - x[k];
        EXPECT_NEAR(v[k] - x[k], theta, 1e-9 * scale);
      }
    }
    ASSERT_FALSE(std::isnan(theta)) << "no positive entry";
    for (std::size_t k = 0; k < n; ++k) {
      if (x[k] == 0) {
        EXPECT_LE(v[k], theta + 1e-9 * scale);
      }
    }
  }
}

// No point of a fine grid over the 3-simplex (and no random point of larger simplices) is
// closer to v than its projection.
TEST(SimplexProjection, NoSimplexPointIsCloser) {
  Rng rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> v(3);
    for (double& x : v)
      x = 3 * rng.uniform() - 1.5;
    const std::vector<double> x = projected(v);
    const double best = distance2(v, x);
    const int steps = 200;
    for (int a = 0; a <= steps; ++a) {
      for (int b = 0; a + b <= steps; ++b) {
        const std::vector<double> s{a / double(steps), b / double(steps),
                                    (steps - a - b) / double(steps)};
        ASSERT_LE(best, distance2(v, s) + 1e-12) << "trial " << trial;
      }
    }
  }
  for (int trial = 0; trial < 40; ++trial) {
    const auto n = static_cast<std::size_t>(4 + rng.below(5));
    std::vector<double> v(n);
    for (double& x : v)
      x = 2 * rng.uniform() - 0.5;
    const std::vector<double> x = projected(v);
    const double best = distance2(v, x);
    for (int k = 0; k < 2000; ++k) {
      // A random point of the simplex (normalized exponentials), sometimes near a face.
      std::vector<double> s(n);
      double sum = 0;
      for (double& e : s) {
        e = -std::log(1 - rng.uniform()) * (rng.below(3) == 0 ? 1e-3 : 1.0);
        sum += e;
      }
      for (double& e : s)
        e /= sum;
      ASSERT_LE(best, distance2(v, s) + 1e-12);
    }
  }
}

TEST(SimplexProjection, RefusesEmptyAndNonFiniteInput) {
  std::vector<double> empty;
  EXPECT_THROW(project_onto_simplex(empty), std::invalid_argument);
  std::vector<double> nan{0.5, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(project_onto_simplex(nan), std::invalid_argument);
  std::vector<double> inf{std::numeric_limits<double>::infinity(), 0};
  EXPECT_THROW(project_onto_simplex(inf), std::invalid_argument);
}

}  // namespace
}  // namespace simplex_projection_test
}  // namespace mfabric::control
