// How close a predicted demand is to the real one (docs/control-plane.md, "Demand prediction
// (Copilot)"): the scores `mfabric predict` reports for every predictor.
#pragma once

#include <span>
#include <vector>

#include "control/demand.h"

namespace mfabric::control {

// Column sums of a row-major [rows x columns] matrix: an expert's load over the source ranks.
std::vector<double> column_sums(std::span<const double> matrix, int rows, int columns);

// The k largest entries of `values` (ties: the smaller index first), as indices in decreasing
// order of value. 1 <= k <= values.size() (std::invalid_argument otherwise).
std::vector<int> top_k_indices(std::span<const double> values, int k);

// Share of the true heavy experts a prediction finds: |top_k(actual) & top_k(predicted)| / k.
// A prediction with every entry equal (uniform) picks the k smallest indices.
double top_k_accuracy(std::span<const double> actual, std::span<const double> predicted, int k);

// Total variation distance between the two vectors normalised to sum 1: half their L1
// distance, in [0, 1]. A vector that sums to 0 counts as uniform. Equal non-empty sizes,
// non-negative finite entries (std::invalid_argument otherwise).
double total_variation(std::span<const double> a, std::span<const double> b);

// Relative L1 error of a server demand: sum over pairs i < j of |predicted - actual| / sum of
// actual. Both demands over the same servers; the actual one must have demand
// (std::invalid_argument otherwise).
double demand_relative_error(const ServerDemand& actual, const ServerDemand& predicted);

}  // namespace mfabric::control
