#include "control/transition_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "control/simplex_projection.h"

namespace mfabric::control {

namespace {

using Matrix = Eigen::MatrixXd;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

void check_square(std::span<const double> p, int n) {
  if (p.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw std::invalid_argument("transition matrix of the wrong size");
  }
}

void project_columns(MatrixMap& p, std::vector<double>& scratch) {
  for (Eigen::Index i = 0; i < p.cols(); ++i) {
    project_onto_simplex(std::span<double>(p.col(i).data(), static_cast<std::size_t>(p.rows())),
                         scratch);
  }
}

}  // namespace

TransitionObjective::TransitionObjective(int n) : n_(n) {
  if (n < 1) throw std::invalid_argument("TransitionObjective: size must be at least 1");
  const auto cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  gram_.assign(cells, 0.0);
  cross_.assign(cells, 0.0);
  target_sum_.assign(static_cast<std::size_t>(n), 0.0);
}

void TransitionObjective::add(std::span<const double> xs, std::span<const double> ys, int count,
                              double weight) {
  const auto values = static_cast<std::size_t>(count) * static_cast<std::size_t>(n_);
  if (count < 0 || xs.size() != values || ys.size() != values || !(weight >= 0)) {
    throw std::invalid_argument("TransitionObjective::add: bad sample block");
  }
  if (count == 0 || weight == 0) return;
  // The rows of a row-major [count x n] matrix are the columns of a column-major [n x count] one.
  const ConstMatrixMap x(xs.data(), n_, count);
  const ConstMatrixMap y(ys.data(), n_, count);
  MatrixMap gram(gram_.data(), n_, n_);
  MatrixMap cross(cross_.data(), n_, n_);
  gram.noalias() += weight * x * x.transpose();  // one GEMM each, scaled in place
  cross.noalias() += weight * y * x.transpose();
  Eigen::Map<Eigen::VectorXd>(target_sum_.data(), n_) += weight * y.rowwise().sum();
  target_norm_ += weight * y.squaredNorm();
  weight_ += weight * count;
}

double TransitionObjective::value(std::span<const double> p) const {
  check_square(p, n_);
  const ConstMatrixMap pm(p.data(), n_, n_);
  const ConstMatrixMap gram(gram_.data(), n_, n_);
  const ConstMatrixMap cross(cross_.data(), n_, n_);
  return (pm * gram).cwiseProduct(pm).sum() - 2.0 * cross.cwiseProduct(pm).sum() + target_norm_;
}

std::vector<double> TransitionObjective::mean_target() const {
  std::vector<double> mean(target_sum_.size(), 0.0);
  if (weight_ > 0) {
    for (std::size_t e = 0; e < mean.size(); ++e)
      mean[e] = target_sum_[e] / weight_;
  }
  return mean;
}

TransitionFitResult fit_transition(const TransitionObjective& objective, std::span<double> p,
                                   int max_iterations, double tolerance) {
  const int n = objective.size();
  check_square(p, n);
  const ConstMatrixMap gram(objective.gram().data(), n, n);
  const ConstMatrixMap cross(objective.cross().data(), n, n);
  MatrixMap current(p.data(), n, n);
  std::vector<double> scratch;
  project_columns(current, scratch);

  const double lipschitz = 2.0 * gram.cwiseAbs().rowwise().sum().maxCoeff();
  TransitionFitResult result;
  if (!(lipschitz > 0) || max_iterations <= 0) {
    result.value = objective.value(p);
    return result;
  }
  const double step = 1.0 / lipschitz;

  // FISTA: a gradient step from the extrapolated point `ahead`, projected; momentum restarts
  // when it points against the last move (the adaptive restart), which keeps the objective
  // from oscillating on the ill-conditioned G of similar load vectors.
  // Every buffer is allocated once: at a few hundred experts a temporary per step would be a
  // fresh mmap (and its page faults) per step.
  Matrix ahead = current;
  Matrix next(n, n);
  Matrix product(n, n);
  double momentum = 1.0;
  while (result.iterations < max_iterations) {
    ++result.iterations;
    product.noalias() = ahead * gram;
    next = ahead - (2.0 * step) * (product - cross);
    MatrixMap next_map(next.data(), n, n);
    project_columns(next_map, scratch);
    const double next_momentum = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * momentum * momentum));
    if ((ahead - next).cwiseProduct(next - current).sum() > 0) {
      ahead = next;
      momentum = 1.0;
    } else {
      ahead = next + ((momentum - 1.0) / next_momentum) * (next - current);
      momentum = next_momentum;
    }
    const double moved = (next - current).cwiseAbs().maxCoeff();
    current = next;
    if (moved <= tolerance) break;
  }
  result.value = objective.value(p);
  return result;
}

}  // namespace mfabric::control
