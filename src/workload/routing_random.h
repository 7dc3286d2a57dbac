// Random variates for the routing generator, built only on Rng's raw 64-bit draws so that a seed
// gives the same trace on every platform (std::gamma_distribution and friends are
// implementation-defined). Internal to the routing generator; exposed for its tests.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/rng.h"

namespace mfabric::workload::routing_detail {

class Sampler {
 public:
  explicit Sampler(Rng rng) : rng_(std::move(rng)) {}

  // The same value as Rng::uniform() (top 53 bits), inlined: the generator draws tens of millions.
  double uniform() { return static_cast<double>(rng_.next_u64() >> 11) * 0x1.0p-53; }
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }
  // Standard normal, by inversion (see the .cpp).
  double normal();
  // log of a Gamma(shape, 1) variate, shape > 0 (Marsaglia-Tsang). Logarithms because for a
  // small shape the variate itself underflows to 0 (Gamma(0.01) is below 1e-300 half the time).
  double log_gamma(double shape);
  // Dirichlet(concentration, ..., concentration) into `out` (sums to 1): normalized gamma
  // variates, in log space below kDirectShape.
  void dirichlet(double concentration, std::span<double> out);
  // Dirichlet(alpha[0], ..., alpha[n-1]) into `out` (sums to 1); every alpha > 0, however small
  // (the U^(1/a) factor of small shapes is kept as a logarithm until normalized).
  void dirichlet(std::span<const double> alpha, std::span<double> out);
  // Binomial(n, p). Exact (inversion) while the smaller of n*p and n*(1-p) is below
  // kExactMean; above, the normal approximation rounded to an integer and clamped to [0, n]
  // (its error is then far below the sampling noise the traces model).
  std::int64_t binomial(std::int64_t n, double p);
  // Multinomial(n, weights / sum(weights)) into `out` by conditional binomials, O(categories).
  // Weights must be >= 0 with a positive sum.
  void multinomial(std::int64_t n, std::span<const double> weights, std::span<std::int64_t> out);

  static constexpr double kExactMean = 30.0;
  static constexpr double kDirectShape = 0.1;

 private:
  double gamma_at_least_one(double shape);
  Rng rng_;
  std::vector<double> tail_;  // scratch: multinomial suffix sums, Dirichlet logarithms
};

}  // namespace mfabric::workload::routing_detail
