#include "control/copilot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "control/transition_fit.h"
#include "core/error.h"

namespace mfabric::control {

void CopilotOptions::validate() const {
  if (history < 1 || history > kMaxHistory) {
    throw Error("", "history",
                fmt::format("expected 1 to {} observations, got {}", kMaxHistory, history));
  }
  if (!(decay > 0 && decay <= 1)) {
    throw Error("", "decay", fmt::format("expected a recency weight in (0, 1], got {}", decay));
  }
  if (solver_iterations < 0 || solver_iterations > kMaxSolverIterations) {
    throw Error("", "solver_iterations",
                fmt::format("expected 0 to {} iterations, got {}", kMaxSolverIterations,
                            solver_iterations));
  }
  if (!(tolerance >= 0 && tolerance <= 1)) {
    throw Error(
        "", "tolerance",
        fmt::format("expected a largest change of P per step in [0, 1], got {}", tolerance));
  }
  if (refit_every < 1 || refit_every > kMaxWarmup) {
    throw Error("", "refit_every",
                fmt::format("expected 1 to {} observations, got {}", kMaxWarmup, refit_every));
  }
  if (warmup < 1 || warmup > kMaxWarmup) {
    throw Error("", "warmup",
                fmt::format("expected 1 to {} observations, got {}", kMaxWarmup, warmup));
  }
}

CopilotPredictor::CopilotPredictor(int ep, int experts, int layers, const CopilotOptions& options)
    : ep_(ep), experts_(experts), options_(options) {
  if (ep < 1) throw Error("", "ep", fmt::format("expected at least 1 EP rank, got {}", ep));
  if (experts < 1) {
    throw Error("", "experts", fmt::format("expected at least 1 expert, got {}", experts));
  }
  if (layers < 1) {
    throw Error("", "layers", fmt::format("expected at least 1 MoE layer, got {}", layers));
  }
  options_.validate();
  layers_.resize(static_cast<std::size_t>(layers));
}

std::size_t CopilotPredictor::index_of(int layer) const {
  if (layer < 1 || layer >= layers()) {
    throw std::out_of_range(fmt::format(
        "CopilotPredictor: layer {} has no previous MoE layer or is out of range (1 to {})", layer,
        layers() - 1));
  }
  return static_cast<std::size_t>(layer);
}

void CopilotPredictor::check_matrix(std::span<const std::int32_t> m, const char* what) const {
  if (m.size() != static_cast<std::size_t>(ep_) * static_cast<std::size_t>(experts_)) {
    throw std::invalid_argument(
        fmt::format("CopilotPredictor: {} matrix has {} counts, expected "
                    "{} x {}",
                    what, m.size(), ep_, experts_));
  }
  for (std::int32_t c : m) {
    if (c < 0)
      throw std::invalid_argument(fmt::format("CopilotPredictor: negative {} count", what));
  }
}

int CopilotPredictor::observations(int layer) const {
  return layers_[index_of(layer)].observed;
}

std::span<const double> CopilotPredictor::transition(int layer) const {
  return layers_[index_of(layer)].transition;
}

void CopilotPredictor::observe(int layer, std::span<const std::int32_t> previous,
                               std::span<const std::int32_t> current) {
  Layer& state = layers_[index_of(layer)];
  check_matrix(previous, "previous");
  check_matrix(current, "current");
  const auto width = static_cast<std::size_t>(experts_);
  Observation obs;
  obs.previous.reserve(previous.size());
  obs.current.reserve(current.size());
  for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
    const auto from = previous.subspan(r * width, width);
    const auto to = current.subspan(r * width, width);
    double from_sum = 0, to_sum = 0;
    for (std::size_t e = 0; e < width; ++e) {
      from_sum += from[e];
      to_sum += to[e];
    }
    if (from_sum == 0 || to_sum == 0) continue;
    for (std::size_t e = 0; e < width; ++e) {
      obs.previous.push_back(static_cast<float>(from[e] / from_sum));
      obs.current.push_back(static_cast<float>(to[e] / to_sum));
    }
    obs.sources.push_back(static_cast<int>(r));
    ++obs.rows;
  }
  state.window.push_back(std::move(obs));
  if (static_cast<int>(state.window.size()) > options_.history) state.window.pop_front();
  ++state.observed;
  if (state.transition.empty() || state.observed % options_.refit_every == 0) refit(state);
}

void CopilotPredictor::update_means(Layer& state) const {
  const auto width = static_cast<std::size_t>(experts_);
  const auto cells = static_cast<std::size_t>(ep_) * width;
  state.mean_previous.assign(cells, 0.0);
  state.mean_current.assign(cells, 0.0);
  state.all_previous.assign(width, 0.0);
  state.all_current.assign(width, 0.0);
  std::vector<double> source_weight(static_cast<std::size_t>(ep_), 0.0);
  double all_weight = 0;
  double weight = 1.0;
  for (auto it = state.window.rbegin(); it != state.window.rend(); ++it, weight *= options_.decay) {
    for (std::size_t row = 0; row < static_cast<std::size_t>(it->rows); ++row) {
      const auto r = static_cast<std::size_t>(it->sources[row]);
      for (std::size_t e = 0; e < width; ++e) {
        const double x = it->previous[row * width + e];
        const double y = it->current[row * width + e];
        state.mean_previous[r * width + e] += weight * x;
        state.mean_current[r * width + e] += weight * y;
        state.all_previous[e] += weight * x;
        state.all_current[e] += weight * y;
      }
      source_weight[r] += weight;
      all_weight += weight;
    }
  }
  state.seen.assign(static_cast<std::size_t>(ep_), false);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
    if (source_weight[r] == 0) continue;
    state.seen[r] = true;
    for (std::size_t e = 0; e < width; ++e) {
      state.mean_previous[r * width + e] /= source_weight[r];
      state.mean_current[r * width + e] /= source_weight[r];
    }
  }
  for (std::size_t e = 0; e < width && all_weight > 0; ++e) {
    state.all_previous[e] /= all_weight;
    state.all_current[e] /= all_weight;
  }
}

void CopilotPredictor::refit(Layer& state) {
  const auto width = static_cast<std::size_t>(experts_);
  if (options_.center_sources) update_means(state);
  TransitionObjective objective(experts_);
  std::vector<double> xs, ys;
  double weight = 1.0;
  for (auto it = state.window.rbegin(); it != state.window.rend(); ++it, weight *= options_.decay) {
    xs.assign(it->previous.begin(), it->previous.end());
    ys.assign(it->current.begin(), it->current.end());
    if (options_.center_sources) {
      for (std::size_t row = 0; row < static_cast<std::size_t>(it->rows); ++row) {
        const auto r = static_cast<std::size_t>(it->sources[row]);
        for (std::size_t e = 0; e < width; ++e) {
          xs[row * width + e] -= state.mean_previous[r * width + e];
          ys[row * width + e] -= state.mean_current[r * width + e];
        }
      }
    }
    objective.add(xs, ys, it->rows, weight);
  }
  if (state.transition.empty()) {
    // The prior for what the samples do not determine. Plain: every column the layer's mean
    // load ("wherever a token was, it goes where layer l's tokens usually go"; uniform without
    // data). Centred: uniform columns, which map every deviation to 0, so that the prediction
    // starts as each source's mean.
    std::vector<double> mean = objective.mean_target();
    if (options_.center_sources || objective.total_weight() == 0) {
      mean.assign(width, 1.0 / static_cast<double>(experts_));
    }
    state.transition.resize(width * width);
    for (std::size_t i = 0; i < width; ++i)
      std::copy(mean.begin(), mean.end(), state.transition.begin() + static_cast<long>(i * width));
  }
  if (objective.total_weight() > 0) {
    solver_steps_ +=
        fit_transition(objective, state.transition, options_.solver_iterations, options_.tolerance)
            .iterations;
  }
}

std::vector<double> CopilotPredictor::predict(int layer,
                                              std::span<const std::int32_t> previous) const {
  const Layer& state = layers_[index_of(layer)];
  check_matrix(previous, "previous");
  std::vector<double> out(previous.begin(), previous.end());
  if (state.observed < options_.warmup) return out;
  const auto width = static_cast<std::size_t>(experts_);
  const std::vector<double>& p = state.transition;
  std::vector<double> shares(width);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
    double* row = out.data() + r * width;
    const double tokens = std::accumulate(row, row + width, 0.0);
    std::fill(row, row + width, 0.0);
    if (tokens == 0) continue;
    if (!options_.center_sources) {
      // P is linear, so P x (row / sum) x sum = P x row: the row keeps its token count.
      for (std::size_t i = 0; i < width; ++i) {
        const double count = previous[r * width + i];
        if (count == 0) continue;
        const double* column = p.data() + i * width;
        for (std::size_t j = 0; j < width; ++j)
          row[j] += column[j] * count;
      }
      continue;
    }
    const bool seen = state.seen[r];
    const double* mean_previous =
        seen ? &state.mean_previous[r * width] : state.all_previous.data();
    const double* mean_current = seen ? &state.mean_current[r * width] : state.all_current.data();
    std::copy(mean_current, mean_current + width, shares.begin());
    for (std::size_t i = 0; i < width; ++i) {
      const double deviation = previous[r * width + i] / tokens - mean_previous[i];
      const double* column = p.data() + i * width;
      for (std::size_t j = 0; j < width; ++j)
        shares[j] += column[j] * deviation;
    }
    double sum = 0;
    for (double& y : shares) {
      y = std::max(y, 0.0);
      sum += y;
    }
    for (std::size_t j = 0; j < width; ++j)
      row[j] = sum > 0 ? shares[j] / sum * tokens : tokens / static_cast<double>(width);
  }
  return out;
}

}  // namespace mfabric::control
