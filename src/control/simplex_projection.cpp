#include "control/simplex_projection.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace mfabric::control {

void project_onto_simplex(std::span<double> v, std::vector<double>& scratch) {
  if (v.empty()) throw std::invalid_argument("project_onto_simplex: empty vector");
  for (double x : v) {
    if (!std::isfinite(x)) throw std::invalid_argument("project_onto_simplex: non-finite entry");
  }
  scratch.assign(v.begin(), v.end());
  std::sort(scratch.begin(), scratch.end(), std::greater<>());
  // theta is the threshold of the largest rho whose entry stays positive after the shift. The
  // condition holds for rho = 1 (u_1 - (u_1 - 1) = 1 > 0) and, once it fails, fails for every
  // larger rho, so the scan can stop at the first failure.
  double prefix = 0;
  double theta = scratch.front() - 1.0;
  for (std::size_t k = 0; k < scratch.size(); ++k) {
    prefix += scratch[k];
    const double candidate = (prefix - 1.0) / static_cast<double>(k + 1);
    if (scratch[k] - candidate <= 0) break;
    theta = candidate;
  }
  for (double& x : v)
    x = std::max(x - theta, 0.0);
}

void project_onto_simplex(std::span<double> v) {
  std::vector<double> scratch;
  project_onto_simplex(v, scratch);
}

}  // namespace mfabric::control
