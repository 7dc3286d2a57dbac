// Copilot (mFabric, reference mfabric-system.md section 3): predicts the all-to-all demand of MoE
// layer l from the routing of layer l-1, so that a region controller can reconfigure before the
// gate of layer l has run. Per MoE layer a transition matrix P (experts x experts, column-
// stochastic; P[j][i] = probability that a token routed to expert i at layer l-1 goes to expert
// j at layer l) is fitted online to the last `history` observed (layer l-1, layer l) pairs with
// recency weights (transition_fit.h), and a prediction is Y = P X on load vectors
// (docs/control-plane.md, "Demand prediction (Copilot)").
//
// Observations and predictions are [ep x experts] token matrices (row-major: source rank,
// expert), the matrix Megatron's dispatcher all-gathers and a RoutingTrace record holds. Each
// source rank's row is one sample: normalised to sum 1 for the fit, predicted from the same
// rank's row of layer l-1 and scaled to its token count (a token goes to top_k experts at every
// layer, so a source routes as many assignments at layer l as at l-1). The predicted matrix then
// becomes server demand exactly as a real one does (token_demand.h, then demand.h).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace mfabric::control {

struct CopilotOptions {
  // K: the (layer l-1, layer l) observations each layer's fit uses, newest first.
  int history = 16;
  // Recency weights: the observation of age a (0 = newest) weighs decay^a.
  double decay = 0.8;
  // Projected-gradient steps per fit at most, warm-started from the previous fit (0: the prior
  // is the prediction: layer l's weighted mean load in every column, or with center_sources
  // each source's mean).
  int solver_iterations = 50;
  // A fit stops early once a step moves no entry of P by more than this (0: never).
  double tolerance = 1e-4;
  // Refit a layer at every refit_every-th observation of it (and at its first); in between,
  // observations only enter the window. For models with hundreds of experts, where a fit costs
  // tens of milliseconds (docs/control-plane.md), e.g. once per iteration's micro-batches.
  int refit_every = 1;
  // Observations of a layer before its fit is used; until then a prediction reuses layer l-1.
  int warmup = 4;
  // false: the paper's Y = P X on each source's row. true: each source's row is predicted as
  // its own recency-weighted mean at layer l plus P times its row's deviation from its mean at
  // layer l-1, Y_r = m_r(l) + P (X_r - m_r(l-1)) (clamped at 0, renormalised), with P fitted on
  // the deviations: a source's lasting preference is kept per source, P carries what is
  // specific to the micro-batch (docs/control-plane.md compares both).
  bool center_sources = false;

  // mfabric::Error naming the field (history, decay, solver_iterations, tolerance, refit_every,
  // warmup) for values outside history 1..kMaxHistory, decay in (0, 1], solver_iterations
  // 0..kMaxSolverIterations, tolerance in [0, 1], refit_every 1..kMaxWarmup, warmup
  // 1..kMaxWarmup.
  void validate() const;
};
inline constexpr int kMaxHistory = 1024;
inline constexpr int kMaxSolverIterations = 100000;
inline constexpr int kMaxWarmup = 1000000;

// The online predictor of one job's MoE layers. Layers are positions 0..layers-1 (as in
// RoutingTrace::layers()); layer 0 has no previous MoE layer and is never predicted. Not
// thread-safe for concurrent observe(); predict() is const.
//
// Cost per observe(): O(history x ep x experts^2) to rebuild the fit's statistics, then
// O(solver_iterations x experts^3); per predict(): O(ep x experts^2). Memory per layer:
// history x 2 x ep x experts floats (docs/control-plane.md has measured times).
class CopilotPredictor {
 public:
  // ep, experts, layers >= 1 and valid options (mfabric::Error naming the field otherwise).
  CopilotPredictor(int ep, int experts, int layers, const CopilotOptions& options = {});

  int ep() const { return ep_; }
  int experts() const { return experts_; }
  int layers() const { return static_cast<int>(layers_.size()); }
  const CopilotOptions& options() const { return options_; }

  // Records what happened at `layer` (1..layers-1): `current` its token matrix, `previous` the
  // same micro-batch's at layer - 1, both ep x experts non-negative counts; then refits the
  // layer's P (see refit_every). Source rows without tokens at either layer are left out of the
  // fit.
  // std::out_of_range for a bad layer, std::invalid_argument for a wrong size or a negative
  // count (callers pass matrices they validated, e.g. from a RoutingTrace).
  void observe(int layer, std::span<const std::int32_t> previous,
               std::span<const std::int32_t> current);

  // Observations of `layer` so far, and whether they reach the warm-up.
  int observations(int layer) const;
  bool ready(int layer) const { return observations(layer) >= options_.warmup; }

  // The predicted token matrix (ep x experts, row-major, fractional counts) of `layer` given
  // `previous`, the same micro-batch's matrix at layer - 1: row r = P x previous row r once the
  // layer is ready(), the previous row itself before (reuse the previous layer). Every row sums
  // to the previous row's sum. Errors as observe().
  std::vector<double> predict(int layer, std::span<const std::int32_t> previous) const;

  // Projected-gradient steps taken by every fit so far (the tolerance stops fits early).
  std::int64_t solver_steps() const { return solver_steps_; }

  // The layer's current P, column-major (P[j][i] at [i * experts + j]); empty before its first
  // observation.
  std::span<const double> transition(int layer) const;

 private:
  // One observation: the normalised rows of the sources that routed tokens at both layers.
  struct Observation {
    int rows = 0;
    std::vector<int> sources;     // the source rank of each row
    std::vector<float> previous;  // rows x experts
    std::vector<float> current;
  };
  struct Layer {
    std::deque<Observation> window;  // oldest first, at most history
    std::vector<double> transition;  // column-major experts x experts
    int observed = 0;
    // center_sources: each source's weighted mean row at layer l-1 and l over the window
    // (ep x experts), the means over all sources for a source the window has not seen, and
    // which sources it has seen.
    std::vector<double> mean_previous, mean_current;
    std::vector<double> all_previous, all_current;
    std::vector<bool> seen;
  };

  std::size_t index_of(int layer) const;  // std::out_of_range unless 1 <= layer < layers()
  void check_matrix(std::span<const std::int32_t> m, const char* what) const;
  void refit(Layer& layer);
  void update_means(Layer& layer) const;

  int ep_ = 0;
  int experts_ = 0;
  CopilotOptions options_;
  std::vector<Layer> layers_;
  std::int64_t solver_steps_ = 0;
};

}  // namespace mfabric::control
