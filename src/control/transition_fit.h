// The Copilot fit (copilot.h): the column-stochastic matrix P (n x n) that best maps load vectors
// x_s of one MoE layer to those y_s of the next, in weighted least squares,
//
//   minimise f(P) = sum_s w_s ||y_s - P x_s||^2   subject to P >= 0, every column summing to 1
//
// (so 0 <= P <= 1), by projected gradient descent with per-column projection onto the
// probability simplex (simplex_projection.h). Matrices are column-major: P[j][i] = p[i * n + j],
// column i the distribution of a token's next expert given expert i.
#pragma once

#include <span>
#include <vector>

namespace mfabric::control {

// f's sufficient statistics: f(P) = tr(P G P^T) - 2 tr(C^T P) + sum_s w_s ||y_s||^2 with the Gram
// matrix G = sum_s w_s x_s x_s^T and the cross matrix C = sum_s w_s y_s x_s^T. Adding samples
// costs O(n^2) each; evaluating f or its gradient no longer depends on how many there were.
class TransitionObjective {
 public:
  // n >= 1 (std::invalid_argument otherwise).
  explicit TransitionObjective(int n);

  int size() const { return n_; }
  // Adds `count` samples of one weight: xs and ys hold count vectors of n values each, one after
  // the other (the rows of a [count x n] row-major matrix). weight >= 0.
  void add(std::span<const double> xs, std::span<const double> ys, int count, double weight);

  // f(P) for a column-major n x n matrix.
  double value(std::span<const double> p) const;
  // The sum of the weights, and sum_s w_s y_s / that sum (the weighted mean target; zeros when no
  // weight was added).
  double total_weight() const { return weight_; }
  std::vector<double> mean_target() const;

  const std::vector<double>& gram() const { return gram_; }
  const std::vector<double>& cross() const { return cross_; }

 private:
  int n_ = 0;
  std::vector<double> gram_;   // G, n x n, symmetric
  std::vector<double> cross_;  // C, n x n, column-major
  std::vector<double> target_sum_;
  double target_norm_ = 0;  // sum_s w_s ||y_s||^2
  double weight_ = 0;
};

struct TransitionFitResult {
  double value = 0;    // f(p) at the end
  int iterations = 0;  // steps taken
};

// Minimises f from `p` (column-major n x n; projected onto the constraints first if it is not
// feasible), in place, with at most `max_iterations` accelerated projected-gradient steps (FISTA
// with the adaptive restart of O'Donoghue and Candes), stopping early once a step moves no entry
// of P by more than `tolerance` (0: never). Step 1 / L with L = 2 x the largest absolute row sum
// of G, an upper bound of the gradient's Lipschitz constant 2 lambda_max(G) (the largest
// absolute row sum bounds every eigenvalue), tight when the x_s are load shares that are all
// equal or all one-hot. The gradient 2 (P G - C) has no component along directions the samples
// do not determine (the null space of G); only the projection moves P there, so the start acts
// as the prior: copilot.cpp starts from the mean target in every column.
TransitionFitResult fit_transition(const TransitionObjective& objective, std::span<double> p,
                                   int max_iterations, double tolerance = 0);

}  // namespace mfabric::control
