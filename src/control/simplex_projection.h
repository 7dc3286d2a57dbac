// Euclidean projection onto the probability simplex {x : x >= 0, sum x = 1}: the constraint step
// of the Copilot fit (copilot.h), one column of a transition matrix at a time.
#pragma once

#include <span>
#include <vector>

namespace mfabric::control {

// Replaces v by the point of the simplex closest to it in Euclidean distance. The sort-based
// algorithm (Held, Wolfe and Crowder 1974): sort v in decreasing order u, take the largest rho
// with u_rho - (u_1 + ... + u_rho - 1) / rho > 0, theta = (u_1 + ... + u_rho - 1) / rho; the
// projection is max(v_i - theta, 0). O(n log n). `scratch` is working memory (grown to n, so a
// caller that keeps it allocates nothing after the first call). v must be non-empty and finite
// (std::invalid_argument otherwise: the fit only projects finite numbers it computed).
void project_onto_simplex(std::span<double> v, std::vector<double>& scratch);
void project_onto_simplex(std::span<double> v);

}  // namespace mfabric::control
