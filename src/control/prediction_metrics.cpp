#include "control/prediction_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

namespace mfabric::control {

std::vector<double> column_sums(std::span<const double> matrix, int rows, int columns) {
  if (rows < 0 || columns < 0 ||
      matrix.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns)) {
    throw std::invalid_argument("column_sums: matrix of the wrong size");
  }
  std::vector<double> sums(static_cast<std::size_t>(columns), 0.0);
  for (std::size_t k = 0; k < matrix.size(); ++k)
    sums[k % sums.size()] += matrix[k];
  return sums;
}

std::vector<int> top_k_indices(std::span<const double> values, int k) {
  if (k < 1 || static_cast<std::size_t>(k) > values.size()) {
    throw std::invalid_argument("top_k_indices: k must be between 1 and the number of values");
  }
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
    const double va = values[static_cast<std::size_t>(a)];
    const double vb = values[static_cast<std::size_t>(b)];
    return va != vb ? va > vb : a < b;
  });
  order.resize(static_cast<std::size_t>(k));
  return order;
}

double top_k_accuracy(std::span<const double> actual, std::span<const double> predicted, int k) {
  if (actual.size() != predicted.size()) {
    throw std::invalid_argument("top_k_accuracy: vectors of different sizes");
  }
  std::vector<int> a = top_k_indices(actual, k);
  std::vector<int> p = top_k_indices(predicted, k);
  std::sort(a.begin(), a.end());
  std::sort(p.begin(), p.end());
  std::vector<int> common;
  std::set_intersection(a.begin(), a.end(), p.begin(), p.end(), std::back_inserter(common));
  return static_cast<double>(common.size()) / k;
}

double total_variation(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || a.size() != b.size()) {
    throw std::invalid_argument("total_variation: vectors of different or zero sizes");
  }
  double sa = 0, sb = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!(a[k] >= 0 && b[k] >= 0) || !std::isfinite(a[k]) || !std::isfinite(b[k])) {
      throw std::invalid_argument("total_variation: negative or non-finite entry");
    }
    sa += a[k];
    sb += b[k];
  }
  const double uniform = 1.0 / static_cast<double>(a.size());
  double distance = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double pa = sa > 0 ? a[k] / sa : uniform;
    const double pb = sb > 0 ? b[k] / sb : uniform;
    distance += std::abs(pa - pb);
  }
  return 0.5 * distance;
}

double demand_relative_error(const ServerDemand& actual, const ServerDemand& predicted) {
  if (actual.servers() != predicted.servers()) {
    throw std::invalid_argument("demand_relative_error: demands over different servers");
  }
  const std::int64_t total = actual.total();
  if (total <= 0) throw std::invalid_argument("demand_relative_error: no actual demand");
  double error = 0;
  for (int i = 0; i < actual.servers(); ++i) {
    for (int j = i + 1; j < actual.servers(); ++j)
      error += std::abs(static_cast<double>(predicted.at(i, j) - actual.at(i, j)));
  }
  return error / static_cast<double>(total);
}

}  // namespace mfabric::control
