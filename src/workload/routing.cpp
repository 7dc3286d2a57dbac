// RoutingTrace storage: one flat vector of int32 counts, records ordered (iteration, layer,
// micro-batch), each record an [ep x experts] row-major matrix.
#include "workload/routing.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/error.h"

namespace mfabric::workload {
namespace {

void require_positive(int value, const char* field) {
  if (value < 1) {
    throw Error("", field, "expected at least 1, got " + std::to_string(value));
  }
}

// Multiplies sizes, refusing products that would overflow size_t (a corrupt header in a trace
// file must not turn into a wrapped-around tiny allocation).
std::size_t checked_product(std::initializer_list<std::size_t> factors) {
  std::size_t total = 1;
  for (std::size_t f : factors) {
    if (f != 0 && total > std::numeric_limits<std::size_t>::max() / f) {
      throw Error("", "", "routing trace too large");
    }
    total *= f;
  }
  return total;
}

// Iterations and micro-batches wrap: a recorded trace is finite, a simulation may run longer.
int wrap(int index, int size, const char* what) {
  if (index < 0) {
    throw std::out_of_range(std::string("routing trace: negative ") + what + " " +
                            std::to_string(index));
  }
  return index % size;
}

}  // namespace

RoutingTrace::RoutingTrace(int ep, int experts, int iterations, std::vector<int> layers,
                           int micro_batches)
    : ep_(ep),
      experts_(experts),
      iterations_(iterations),
      layers_(std::move(layers)),
      micro_batches_(micro_batches) {
  require_positive(ep, "ep");
  require_positive(experts, "experts");
  require_positive(iterations, "iterations");
  require_positive(micro_batches, "micro_batches");
  if (layers_.empty()) throw Error("", "layers", "expected at least one MoE layer");
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i] < 0) {
      throw Error("", "layers[" + std::to_string(i) + "]",
                  "expected a non-negative layer index, got " + std::to_string(layers_[i]));
    }
    // Increasing order is what "the previous MoE layer" means to the generator and the stats.
    if (i > 0 && layers_[i] <= layers_[i - 1]) {
      throw Error("", "layers[" + std::to_string(i) + "]",
                  "expected strictly increasing layer indices, got " + std::to_string(layers_[i]) +
                      " after " + std::to_string(layers_[i - 1]));
    }
  }
  counts_.assign(checked_product({static_cast<std::size_t>(ep), static_cast<std::size_t>(experts),
                                  static_cast<std::size_t>(iterations), layers_.size(),
                                  static_cast<std::size_t>(micro_batches)}),
                 0);
}

int RoutingTrace::layer_index(int layer) const {
  if (static_) return 0;
  auto it = std::lower_bound(layers_.begin(), layers_.end(), layer);
  if (it == layers_.end() || *it != layer) return -1;
  return static_cast<int>(it - layers_.begin());
}

void RoutingTrace::mark_static() {
  if (iterations_ != 1 || micro_batches_ != 1 || layers_.size() != 1) {
    throw Error("", "",
                "only a trace of one record (1 iteration, 1 layer, 1 micro-batch) can be "
                "static");
  }
  static_ = true;
}

std::size_t RoutingTrace::offset(int iteration, int layer_idx, int micro_batch) const {
  if (counts_.empty()) throw std::out_of_range("routing trace: empty trace");
  if (layer_idx < 0 || layer_idx >= static_cast<int>(layers_.size())) {
    throw std::out_of_range("routing trace: layer index " + std::to_string(layer_idx) +
                            " outside [0, " + std::to_string(layers_.size()) + ")");
  }
  const std::size_t it = static_cast<std::size_t>(wrap(iteration, iterations_, "iteration"));
  const std::size_t mb = static_cast<std::size_t>(wrap(micro_batch, micro_batches_, "micro-batch"));
  const std::size_t record = (it * layers_.size() + static_cast<std::size_t>(layer_idx)) *
                                 static_cast<std::size_t>(micro_batches_) +
                             mb;
  return record * static_cast<std::size_t>(ep_) * static_cast<std::size_t>(experts_);
}

std::span<std::int32_t> RoutingTrace::matrix(int iteration, int layer_idx, int micro_batch) {
  return {counts_.data() + offset(iteration, layer_idx, micro_batch),
          static_cast<std::size_t>(ep_) * static_cast<std::size_t>(experts_)};
}

std::span<const std::int32_t> RoutingTrace::matrix(int iteration, int layer_idx,
                                                   int micro_batch) const {
  return {counts_.data() + offset(iteration, layer_idx, micro_batch),
          static_cast<std::size_t>(ep_) * static_cast<std::size_t>(experts_)};
}

std::int64_t RoutingTrace::row_sum(int iteration, int layer_idx, int micro_batch, int src) const {
  auto m = matrix(iteration, layer_idx, micro_batch);
  if (src < 0 || src >= ep_) {
    throw std::out_of_range("routing trace: source rank " + std::to_string(src) + " outside [0, " +
                            std::to_string(ep_) + ")");
  }
  auto row = m.subspan(static_cast<std::size_t>(src) * static_cast<std::size_t>(experts_),
                       static_cast<std::size_t>(experts_));
  return std::accumulate(row.begin(), row.end(), std::int64_t{0});
}

}  // namespace mfabric::workload
