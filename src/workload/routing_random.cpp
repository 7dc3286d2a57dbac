#include "workload/routing_random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mfabric::workload::routing_detail {

double Sampler::normal() {
  // Inverse of the normal CDF at a uniform in (0, 1) (P. J. Acklam's rational approximation,
  // relative error below 1.2e-9): one uniform per variate and, 95% of the time, no logarithm,
  // which matters because the generator draws one per (row, expert). The uniform is offset by
  // half a step so it is never 0 or 1; the variates are then bounded by about +-8.3.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  const double p = uniform() + 0x1.0p-54;
  auto tail = [&](double u) {
    const double q = std::sqrt(-2.0 * std::log(u));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  };
  if (p < kLow) return tail(p);
  if (p > 1.0 - kLow) return -tail(1.0 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double Sampler::gamma_at_least_one(double shape) {
  // Marsaglia & Tsang (2000), "A simple method for generating gamma variables".
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double z = normal();
    double v = 1.0 + c * z;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform();
    const double z2 = z * z;
    // The squeeze accepts ~98% of candidates without a logarithm.
    if (u < 1.0 - 0.0331 * z2 * z2) return d * v;
    if (u > 0.0 && std::log(u) < 0.5 * z2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double Sampler::log_gamma(double shape) {
  if (shape >= 1.0) return std::log(gamma_at_least_one(shape));
  // Gamma(a) = Gamma(a + 1) * U^(1/a) (Marsaglia-Tsang's boost for a < 1); 1 - U is in (0, 1]
  // so the logarithm is finite.
  const double log_u = std::log(1.0 - uniform());
  return std::log(gamma_at_least_one(shape + 1.0)) + log_u / shape;
}

void Sampler::dirichlet(double concentration, std::span<double> out) {
  double sum = 0.0;
  if (concentration >= kDirectShape) {
    // U^(1/a) >= 2^(-53/a) >= 1e-160 here: no underflow, so no need for logarithms.
    for (double& x : out) {
      if (concentration >= 1.0) {
        x = gamma_at_least_one(concentration);
      } else {
        const double log_u = std::log(1.0 - uniform());
        x = gamma_at_least_one(concentration + 1.0) * std::exp(log_u / concentration);
      }
      sum += x;
    }
  } else {
    // Normalizing in log space keeps the largest component at exp(0) = 1, so the sum is >= 1
    // even when every gamma variate underflows.
    double top = -std::numeric_limits<double>::infinity();
    for (double& x : out) {
      x = log_gamma(concentration);
      top = std::max(top, x);
    }
    for (double& x : out) {
      x = std::exp(x - top);
      sum += x;
    }
  }
  for (double& x : out)
    x /= sum;
}

void Sampler::dirichlet(std::span<const double> alpha, std::span<double> out) {
  // Gamma(a) = Gamma(a + 1) U^(1/a) below shape 1: keep the first factor as it is (it is O(1))
  // and the second as its logarithm log(U) / a, which can be far below the smallest double.
  // Shifting the logarithms by their maximum before exponentiating leaves the component with
  // the largest one at Gamma(a + 1) times 1, so the sum cannot underflow; one logarithm per
  // component instead of two.
  std::vector<double>& log_part = tail_;
  log_part.assign(out.size(), 0.0);
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < out.size(); ++e) {
    const double a = alpha[e];
    if (a >= 1.0) {
      out[e] = gamma_at_least_one(a);
    } else {
      log_part[e] = std::log(1.0 - uniform()) / a;
      out[e] = gamma_at_least_one(a + 1.0);
    }
    top = std::max(top, log_part[e]);
  }
  double sum = 0.0;
  for (std::size_t e = 0; e < out.size(); ++e) {
    out[e] *= std::exp(log_part[e] - top);
    sum += out[e];
  }
  for (double& x : out)
    x /= sum;
}

std::int64_t Sampler::binomial(std::int64_t n, double p) {
  if (n <= 0 || !(p > 0.0)) return 0;
  if (p >= 1.0) return n;
  // Sample the rarer outcome: its mean decides between the exact and the approximate method.
  const bool flip = p > 0.5;
  const double pp = flip ? 1.0 - p : p;
  const double mean = static_cast<double>(n) * pp;
  std::int64_t k = 0;
  if (mean < kExactMean) {
    // Inversion: walk the pmf from 0 (expected mean + 1 steps). pmf(0) = (1-p)^n >= e^-42 here.
    const double q = 1.0 - pp;
    const double ratio = pp / q;
    const double f0 = std::exp(static_cast<double>(n) * std::log1p(-pp));
    for (bool done = false; !done;) {
      double u = uniform();
      double f = f0;
      k = 0;
      for (;;) {
        if (u < f) {
          done = true;
          break;
        }
        u -= f;
        ++k;
        // Rounding can leave u above the remaining (computed) mass; draw again rather than
        // walk to n.
        if (k > n) break;
        f *= ratio * static_cast<double>(n - k + 1) / static_cast<double>(k);
        if (!(f > 0.0)) break;
      }
    }
  } else {
    const double sd = std::sqrt(mean * (1.0 - pp));
    // Round half up after clamping (x >= 0, so adding 0.5 and truncating rounds).
    const double x = std::clamp(mean + sd * normal(), 0.0, static_cast<double>(n));
    k = static_cast<std::int64_t>(x + 0.5);
  }
  return flip ? n - k : k;
}

void Sampler::multinomial(std::int64_t n, std::span<const double> weights,
                          std::span<std::int64_t> out) {
  const std::size_t count = weights.size();
  // Suffix sums rather than a running "remaining mass" so that rounding does not accumulate
  // over hundreds of experts.
  tail_.assign(count + 1, 0.0);
  std::size_t last = count;
  for (std::size_t e = count; e-- > 0;) {
    tail_[e] = tail_[e + 1] + weights[e];
    if (last == count && weights[e] > 0.0) last = e;
  }
  if (last == count && n > 0) throw std::logic_error("multinomial: no positive weight");
  std::int64_t remaining = n;
  for (std::size_t e = 0; e < count; ++e) {
    out[e] = 0;
    if (remaining == 0 || !(weights[e] > 0.0)) continue;
    if (e == last) {
      out[e] = remaining;
      remaining = 0;
      continue;
    }
    const std::int64_t k = binomial(remaining, std::min(1.0, weights[e] / tail_[e]));
    out[e] = k;
    remaining -= k;
  }
}

}  // namespace mfabric::workload::routing_detail
