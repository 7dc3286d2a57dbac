// Copilot: the weighted least-squares objective, the projected-gradient fit (recovers a known
// transition matrix), the online predictor (warm-up fallback, window, weights, errors) and its
// evaluation against the baselines on traces with a known layer-to-layer structure.
#include "control/copilot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "control/copilot_evaluation.h"
#include "control/transition_fit.h"
#include "core/error.h"
#include "core/rng.h"

namespace mfabric::control {
namespace copilot_test {
namespace {

// A random column-stochastic n x n matrix (column-major); with `sparse`, about a third of the
// entries are exactly 0 (the optimum then sits on the boundary of the constraints).
std::vector<double> random_transition(int n, Rng& rng, bool sparse) {
  const auto w = static_cast<std::size_t>(n);
  std::vector<double> p(w * w);
  for (std::size_t i = 0; i < w; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < w; ++j) {
      double v = -std::log(1 - rng.uniform());
      if (sparse && j != i && rng.below(3) == 0) v = 0;
      p[i * w + j] = v;
      sum += v;
    }
    for (std::size_t j = 0; j < w; ++j)
      p[i * w + j] /= sum;
  }
  return p;
}

// `count` random load vectors of size n (row after row), each summing to 1.
std::vector<double> random_loads(int n, int count, Rng& rng) {
  std::vector<double> x(static_cast<std::size_t>(n) * static_cast<std::size_t>(count));
  for (int s = 0; s < count; ++s) {
    double sum = 0;
    for (int e = 0; e < n; ++e) {
      double& v = x[static_cast<std::size_t>(s * n + e)];
      v = -std::log(1 - rng.uniform());
      sum += v;
    }
    for (int e = 0; e < n; ++e)
      x[static_cast<std::size_t>(s * n + e)] /= sum;
  }
  return x;
}

// y_s = P x_s for every sample.
std::vector<double> apply(const std::vector<double>& p, const std::vector<double>& xs, int n) {
  std::vector<double> ys(xs.size(), 0.0);
  const auto w = static_cast<std::size_t>(n);
  for (std::size_t s = 0; s < xs.size() / w; ++s) {
    for (std::size_t i = 0; i < w; ++i) {
      for (std::size_t j = 0; j < w; ++j)
        ys[s * w + j] += p[i * w + j] * xs[s * w + i];
    }
  }
  return ys;
}

double max_difference(std::span<const double> a, std::span<const double> b) {
  double d = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    d = std::max(d, std::abs(a[k] - b[k]));
  return d;
}

void expect_column_stochastic(std::span<const double> p, int n) {
  const auto w = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < w; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < w; ++j) {
      EXPECT_GE(p[i * w + j], 0.0);
      EXPECT_LE(p[i * w + j], 1.0);
      sum += p[i * w + j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "column " << i;
  }
}

std::vector<double> uniform_start(int n) {
  return std::vector<double>(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 1.0 / n);
}

TEST(TransitionObjective, ValueByHand) {
  // n = 2, samples x = (1, 0) -> y = (0, 1) weight 2 and x = (0.5, 0.5) -> y = (0.5, 0.5)
  // weight 1. At P = identity: 2 x ||(0,1) - (1,0)||^2 + 1 x 0 = 4. At P = swap: 0 + 0 = 0.
  TransitionObjective f(2);
  f.add(std::vector<double>{1, 0}, std::vector<double>{0, 1}, 1, 2.0);
  f.add(std::vector<double>{0.5, 0.5}, std::vector<double>{0.5, 0.5}, 1, 1.0);
  EXPECT_NEAR(f.value(std::vector<double>{1, 0, 0, 1}), 4.0, 1e-12);
  EXPECT_NEAR(f.value(std::vector<double>{0, 1, 1, 0}), 0.0, 1e-12);
  // Every column (0.5, 0.5): 2 x 0.5 + 0 = 1.
  EXPECT_NEAR(f.value(std::vector<double>{0.5, 0.5, 0.5, 0.5}), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(f.total_weight(), 3.0);
  // Mean target: (2 x (0, 1) + (0.5, 0.5)) / 3.
  const std::vector<double> mean = f.mean_target();
  EXPECT_NEAR(mean[0], 0.5 / 3, 1e-12);
  EXPECT_NEAR(mean[1], 2.5 / 3, 1e-12);
}

TEST(TransitionObjective, BlockOfSamplesEqualsOneByOne) {
  Rng rng(3);
  const std::vector<double> xs = random_loads(5, 7, rng);
  const std::vector<double> ys = random_loads(5, 7, rng);
  TransitionObjective block(5), single(5);
  block.add(xs, ys, 7, 0.3);
  for (std::size_t s = 0; s < 7; ++s) {
    single.add(std::span(xs).subspan(s * 5, 5), std::span(ys).subspan(s * 5, 5), 1, 0.3);
  }
  const std::vector<double> p = random_transition(5, rng, false);
  EXPECT_NEAR(block.value(p), single.value(p), 1e-12);
  // Direct: sum_s w ||y_s - P x_s||^2.
  const std::vector<double> py = apply(p, xs, 5);
  double direct = 0;
  for (std::size_t k = 0; k < xs.size(); ++k)
    direct += 0.3 * (ys[k] - py[k]) * (ys[k] - py[k]);
  EXPECT_NEAR(block.value(p), direct, 1e-12);
}

class TransitionRecovery : public ::testing::TestWithParam<std::tuple<int, bool>> {};

// Y_k = P_true X_k exactly: the fit finds P_true (the minimum, 0, is unique when the X_k span
// the space).
TEST_P(TransitionRecovery, FitFindsTheTrueMatrix) {
  const auto [n, sparse] = GetParam();
  Rng rng(static_cast<std::uint64_t>(100 + n + (sparse ? 1 : 0)));
  const std::vector<double> truth = random_transition(n, rng, sparse);
  const int samples = 6 * n;
  const std::vector<double> xs = random_loads(n, samples, rng);
  const std::vector<double> ys = apply(truth, xs, n);
  TransitionObjective f(n);
  f.add(xs, ys, samples, 1.0);
  std::vector<double> p = uniform_start(n);
  const double start = f.value(p);
  const double end = fit_transition(f, p, 20000).value;
  expect_column_stochastic(p, n);
  EXPECT_LT(end, 1e-12 * start);
  EXPECT_LT(max_difference(p, truth), 1e-4) << "n " << n << (sparse ? " sparse" : "");
}

INSTANTIATE_TEST_SUITE_P(Sizes, TransitionRecovery,
                         ::testing::Combine(::testing::Values(2, 4, 8, 16), ::testing::Bool()));

TEST(TransitionFit, NeverWorseThanItsStartAndAlwaysFeasible) {
  Rng rng(8);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 3 + static_cast<int>(rng.below(6));
    const std::vector<double> xs = random_loads(n, 4, rng);
    const std::vector<double> ys = random_loads(n, 4, rng);  // no exact P: a compromise
    TransitionObjective f(n);
    f.add(xs, ys, 4, 1.0 + rng.uniform());
    std::vector<double> p = random_transition(n, rng, false);
    const double start = f.value(p);
    for (int iterations : {1, 5, 50}) {
      const double end = fit_transition(f, p, iterations).value;
      expect_column_stochastic(p, n);
      EXPECT_LE(end, start + 1e-12);
    }
  }
}

TEST(TransitionFit, InfeasibleStartIsProjectedFirst) {
  TransitionObjective f(2);
  std::vector<double> p{2, 0, -1, 3};  // columns (2, 0) and (-1, 3)
  fit_transition(f, p, 10);            // no samples: only the projection
  EXPECT_EQ(p, (std::vector<double>{1, 0, 0, 1}));
}

// --- the online predictor -----------------------------------------------------------------

// Token matrices [ep x experts] with random rows; `permuted` sends expert e's tokens to
// permutation[e].
std::vector<std::int32_t> random_tokens(int ep, int experts, Rng& rng) {
  std::vector<std::int32_t> m(static_cast<std::size_t>(ep) * static_cast<std::size_t>(experts));
  for (auto& c : m)
    c = static_cast<std::int32_t>(rng.below(1000));
  return m;
}

std::vector<std::int32_t> permuted(const std::vector<std::int32_t>& m, int experts,
                                   const std::vector<int>& permutation) {
  std::vector<std::int32_t> out(m.size());
  const auto w = static_cast<std::size_t>(experts);
  for (std::size_t r = 0; r < m.size() / w; ++r) {
    for (std::size_t e = 0; e < w; ++e)
      out[r * w + static_cast<std::size_t>(permutation[e])] = m[r * w + e];
  }
  return out;
}

TEST(CopilotPredictor, WarmupReusesThePreviousLayerThenPredictsWithTheFit) {
  const std::vector<int> shift{1, 2, 3, 4, 5, 0};
  CopilotOptions options;
  options.warmup = 3;
  options.solver_iterations = 2000;
  CopilotPredictor copilot(8, 6, 2, options);
  Rng rng(21);
  const std::vector<std::int32_t> probe = random_tokens(8, 6, rng);
  for (int k = 0; k < 3; ++k) {
    // Before the warm-up: the previous layer itself.
    EXPECT_FALSE(copilot.ready(1));
    const std::vector<double> reuse = copilot.predict(1, probe);
    EXPECT_EQ(reuse, std::vector<double>(probe.begin(), probe.end()));
    const std::vector<std::int32_t> previous = random_tokens(8, 6, rng);
    copilot.observe(1, previous, permuted(previous, 6, shift));
    EXPECT_EQ(copilot.observations(1), k + 1);
  }
  EXPECT_TRUE(copilot.ready(1));
  const std::vector<std::int32_t> want = permuted(probe, 6, shift);
  const std::vector<double> got = copilot.predict(1, probe);
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], 1e-3 * 1000) << k;
  // The transition found: column i has its mass on shift[i].
  const std::span<const double> p = copilot.transition(1);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(p[i * 6 + static_cast<std::size_t>(shift[i])], 1.0, 1e-3);
}

TEST(CopilotPredictor, RecoversATransitionMatrixFromTokenCounts) {
  // Large rows (1e6 tokens) drawn so that layer l = P_true x layer l-1 up to rounding.
  const int ep = 16, experts = 8;
  Rng rng(33);
  const std::vector<double> truth = random_transition(experts, rng, true);
  CopilotOptions options;
  options.solver_iterations = 300;
  options.history = 8;
  options.decay = 1.0;
  CopilotPredictor copilot(ep, experts, 3, options);
  for (int k = 0; k < 8; ++k) {
    const std::vector<double> loads = random_loads(experts, ep, rng);
    const std::vector<double> next = apply(truth, loads, experts);
    std::vector<std::int32_t> previous(loads.size()), current(loads.size());
    for (std::size_t c = 0; c < loads.size(); ++c) {
      previous[c] = static_cast<std::int32_t>(std::llround(loads[c] * 1e6));
      current[c] = static_cast<std::int32_t>(std::llround(next[c] * 1e6));
    }
    copilot.observe(2, previous, current);
  }
  expect_column_stochastic(copilot.transition(2), experts);
  EXPECT_LT(max_difference(copilot.transition(2), truth), 1e-3);
  // Layer 1 was never observed: no fit.
  EXPECT_TRUE(copilot.transition(1).empty());
  EXPECT_EQ(copilot.observations(1), 0);
}

TEST(CopilotPredictor, RowsKeepTheirTokenCounts) {
  CopilotOptions options;
  options.warmup = 1;
  CopilotPredictor copilot(4, 4, 2, options);
  Rng rng(2);
  const auto a = random_tokens(4, 4, rng);
  const auto b = random_tokens(4, 4, rng);
  copilot.observe(1, a, b);
  std::vector<std::int32_t> probe = random_tokens(4, 4, rng);
  std::fill(probe.begin() + 4, probe.begin() + 8, 0);  // source 1 routed nothing
  const std::vector<double> got = copilot.predict(1, probe);
  for (std::size_t r = 0; r < 4; ++r) {
    const double want = std::accumulate(probe.begin() + static_cast<long>(4 * r),
                                        probe.begin() + static_cast<long>(4 * r + 4), 0.0);
    const double sum = std::accumulate(got.begin() + static_cast<long>(4 * r),
                                       got.begin() + static_cast<long>(4 * r + 4), 0.0);
    EXPECT_NEAR(sum, want, 1e-9 * (want + 1)) << "row " << r;
  }
}

TEST(CopilotPredictor, WindowForgetsOldObservations) {
  const std::vector<int> identity{0, 1, 2, 3};
  const std::vector<int> reverse{3, 2, 1, 0};
  for (const bool short_window : {true, false}) {
    CopilotOptions options;
    options.warmup = 1;
    options.solver_iterations = 3000;
    options.decay = 1.0;
    options.history = short_window ? 1 : 16;
    CopilotPredictor copilot(8, 4, 2, options);
    Rng rng(4);
    for (int k = 0; k < 5; ++k) {
      const auto m = random_tokens(8, 4, rng);
      copilot.observe(1, m, permuted(m, 4, identity));
    }
    const auto m = random_tokens(8, 4, rng);
    copilot.observe(1, m, permuted(m, 4, reverse));
    const std::span<const double> p = copilot.transition(1);
    // History 1: only the reversal is left. History 16, equal weights: five identities against
    // one reversal, the diagonal wins.
    if (short_window) {
      EXPECT_NEAR(p[0 * 4 + 3], 1.0, 1e-3);
    } else {
      EXPECT_GT(p[0 * 4 + 0], 0.5);
    }
  }
}

TEST(CopilotPredictor, RecencyWeightsFavourTheNewest) {
  const std::vector<int> identity{0, 1, 2, 3};
  const std::vector<int> reverse{3, 2, 1, 0};
  CopilotOptions options;
  options.warmup = 1;
  options.solver_iterations = 3000;
  options.decay = 0.01;  // the newest observation weighs 100 x the one before
  CopilotPredictor copilot(8, 4, 2, options);
  Rng rng(6);
  for (int k = 0; k < 5; ++k) {
    const auto m = random_tokens(8, 4, rng);
    copilot.observe(1, m, permuted(m, 4, identity));
  }
  const auto m = random_tokens(8, 4, rng);
  copilot.observe(1, m, permuted(m, 4, reverse));
  EXPECT_GT(copilot.transition(1)[0 * 4 + 3], 0.9);
}

TEST(CopilotPredictor, RefitEveryNthObservation) {
  CopilotOptions options;
  options.refit_every = 3;
  options.warmup = 1;
  CopilotPredictor copilot(4, 4, 2, options);
  Rng rng(12);
  const auto observe = [&] {
    const auto m = random_tokens(4, 4, rng);
    copilot.observe(1, m, random_tokens(4, 4, rng));
    return std::vector<double>(copilot.transition(1).begin(), copilot.transition(1).end());
  };
  const std::vector<double> first = observe();  // the first observation always fits
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(observe(), first);  // 2: kept
  EXPECT_NE(observe(), first);  // 3: refit
  const std::int64_t steps = copilot.solver_steps();
  observe();  // 4: no fit, no steps
  EXPECT_EQ(copilot.solver_steps(), steps);
}

TEST(CopilotPredictor, ProgrammingErrors) {
  CopilotPredictor copilot(2, 3, 3);
  const std::vector<std::int32_t> ok(6, 1), small(5, 1);
  std::vector<std::int32_t> negative(6, 1);
  negative[4] = -1;
  EXPECT_THROW(copilot.observe(0, ok, ok), std::out_of_range);  // no previous MoE layer
  EXPECT_THROW(copilot.observe(3, ok, ok), std::out_of_range);
  EXPECT_THROW(copilot.predict(0, ok), std::out_of_range);
  EXPECT_THROW(copilot.observe(1, small, ok), std::invalid_argument);
  EXPECT_THROW(copilot.observe(1, ok, negative), std::invalid_argument);
  EXPECT_THROW(copilot.predict(2, small), std::invalid_argument);
}

// Runs fn and returns the mfabric::Error's field ("" when nothing was thrown).
template <class F>
std::string error_field(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

TEST(CopilotOptions, ValuesOutOfRangeNameTheirField) {
  const auto with = [](auto change) {
    CopilotOptions o;
    change(o);
    return error_field([&] { o.validate(); });
  };
  EXPECT_EQ(with([](CopilotOptions&) {}), "");
  EXPECT_EQ(with([](CopilotOptions& o) { o.history = 0; }), "history");
  EXPECT_EQ(with([](CopilotOptions& o) { o.history = kMaxHistory + 1; }), "history");
  EXPECT_EQ(with([](CopilotOptions& o) { o.decay = 0; }), "decay");
  EXPECT_EQ(with([](CopilotOptions& o) { o.decay = 1.5; }), "decay");
  EXPECT_EQ(with([](CopilotOptions& o) { o.decay = std::nan(""); }), "decay");
  EXPECT_EQ(with([](CopilotOptions& o) { o.solver_iterations = -1; }), "solver_iterations");
  EXPECT_EQ(with([](CopilotOptions& o) { o.warmup = 0; }), "warmup");
  EXPECT_EQ(with([](CopilotOptions& o) { o.tolerance = -1e-9; }), "tolerance");
  EXPECT_EQ(with([](CopilotOptions& o) { o.tolerance = std::nan(""); }), "tolerance");
  EXPECT_EQ(with([](CopilotOptions& o) { o.refit_every = 0; }), "refit_every");
  EXPECT_EQ(with([](CopilotOptions& o) { o.solver_iterations = 0; }), "");
  EXPECT_EQ(error_field([] { CopilotPredictor(0, 4, 2); }), "ep");
  EXPECT_EQ(error_field([] { CopilotPredictor(2, 0, 2); }), "experts");
  EXPECT_EQ(error_field([] { CopilotPredictor(2, 4, 0); }), "layers");
  CopilotOptions bad;
  bad.warmup = 0;
  EXPECT_EQ(error_field([&] { CopilotPredictor(2, 4, 2, bad); }), "warmup");
}

// --- evaluation ---------------------------------------------------------------------------

// EP 4, 4 experts (one per rank), 1 iteration, 3 MoE layers, 12 micro-batches: layer 0 random,
// layer 1 = layer 0 with expert e's tokens sent to first[e], layer 2 likewise with second.
workload::RoutingTrace permutation_trace() {
  const std::vector<int> first{2, 0, 3, 1};
  const std::vector<int> second{1, 3, 0, 2};
  workload::RoutingTrace trace(4, 4, 1, {0, 1, 2}, 12);
  Rng rng(9);
  for (int mb = 0; mb < 12; ++mb) {
    const auto m0 = random_tokens(4, 4, rng);
    const auto m1 = permuted(m0, 4, first);
    const auto m2 = permuted(m1, 4, second);
    std::copy(m0.begin(), m0.end(), trace.matrix(0, 0, mb).begin());
    std::copy(m1.begin(), m1.end(), trace.matrix(0, 1, mb).begin());
    std::copy(m2.begin(), m2.end(), trace.matrix(0, 2, mb).begin());
  }
  return trace;
}

TEST(CopilotEvaluation, LearnsAPermutationThatReuseMisses) {
  PredictionSetup setup;
  setup.copilot.warmup = 2;
  setup.copilot.solver_iterations = 500;
  setup.top_k = 2;
  setup.ranks_per_server = 1;
  setup.bytes_per_token = 1000;
  const PredictionEvaluation result = evaluate_prediction(permutation_trace(), setup);
  // Per layer pair 12 micro-batches, the first 2 during the warm-up; 2 layer pairs.
  EXPECT_EQ(result.scored, 2 * 10);
  EXPECT_EQ(result.warmup, 2 * 2);
  EXPECT_EQ(result.servers, 4);
  ASSERT_EQ(result.predictors.size(), 5u);
  EXPECT_EQ(result.predictors[0].name, "uniform");
  EXPECT_EQ(result.predictors[1].name, "reuse");
  EXPECT_EQ(result.predictors[2].name, "history");
  const PredictorScore& copilot = result.predictors[3];
  EXPECT_EQ(copilot.name, "copilot");
  EXPECT_DOUBLE_EQ(copilot.top_k_accuracy, 1.0);
  EXPECT_LT(copilot.load_tvd, 1e-4);
  EXPECT_LT(copilot.row_tvd, 1e-4);
  EXPECT_LT(copilot.demand_error, 1e-4);
  const PredictorScore& reuse = result.predictors[1];
  EXPECT_GT(reuse.row_tvd, 0.3);  // random rows moved to other experts
  EXPECT_GT(reuse.demand_error, 0.1);
  // The centred variant: the same permutation, on deviations from each source's mean.
  const PredictorScore& centered = result.predictors[4];
  EXPECT_EQ(centered.name, "copilot-centered");
  EXPECT_DOUBLE_EQ(centered.top_k_accuracy, 1.0);
  EXPECT_LT(centered.row_tvd, 1e-3);
  EXPECT_GT(copilot.observe_seconds, 0.0);
  EXPECT_GT(copilot.predict_seconds, 0.0);
  EXPECT_EQ(reuse.observe_seconds, 0.0);
}

TEST(CopilotEvaluation, UniformBaselineByHand) {
  // Every row uniform at every layer: uniform, reuse and copilot predict exactly; the
  // top-k of equal loads is the smallest indices for actual and prediction alike.
  workload::RoutingTrace trace(2, 2, 1, {0, 1}, 3);
  for (int mb = 0; mb < 3; ++mb) {
    for (int l = 0; l < 2; ++l) {
      for (auto& c : trace.matrix(0, l, mb))
        c = 5;
    }
  }
  PredictionSetup setup;
  setup.copilot.warmup = 1;
  setup.top_k = 1;
  const PredictionEvaluation result = evaluate_prediction(trace, setup);
  EXPECT_EQ(result.scored, 2);
  for (const PredictorScore& s : result.predictors) {
    EXPECT_DOUBLE_EQ(s.top_k_accuracy, 1.0) << s.name;
    EXPECT_NEAR(s.load_tvd, 0.0, 1e-12) << s.name;
    EXPECT_NEAR(s.demand_error, 0.0, 1e-12) << s.name;
  }
}

TEST(CopilotEvaluation, GeneratedCorrelatedLayersBeatTheBaselines) {
  // The generator's defaults (layer_correlation 0.7): the layers are chained through transition
  // matrices, which Copilot fits and the baselines cannot see.
  const workload::RoutingTrace trace = workload::generate_routing(
      workload::SyntheticRouting{.tokens_per_rank = 4096}, 8, 8, 3, {0, 1, 2, 3, 4, 5}, 8, Rng(1));
  PredictionSetup setup;
  const PredictionEvaluation result = evaluate_prediction(trace, setup);
  const PredictorScore& uniform = result.predictors[0];
  const PredictorScore& reuse = result.predictors[1];
  const PredictorScore& copilot = result.predictors[3];
  EXPECT_LT(copilot.row_tvd, reuse.row_tvd);
  EXPECT_LT(copilot.row_tvd, uniform.row_tvd);
  EXPECT_LT(copilot.load_tvd, reuse.load_tvd);
  EXPECT_GT(copilot.top_k_accuracy, uniform.top_k_accuracy);
}

TEST(CopilotEvaluation, BadTracesAndSetupsNameTheField) {
  PredictionSetup setup;
  workload::RoutingTrace one_layer(2, 2, 1, {0}, 2);
  EXPECT_EQ(error_field([&] { evaluate_prediction(one_layer, setup); }), "trace");
  workload::RoutingTrace single(2, 2, 1, {0}, 1);
  single.mark_static();
  EXPECT_EQ(error_field([&] { evaluate_prediction(single, setup); }), "trace");
  const workload::RoutingTrace trace = permutation_trace();
  setup.top_k = 0;
  EXPECT_EQ(error_field([&] { evaluate_prediction(trace, setup); }), "top_k");
  setup.top_k = 5;
  EXPECT_EQ(error_field([&] { evaluate_prediction(trace, setup); }), "top_k");
  setup.top_k = 2;
  setup.ranks_per_server = 3;
  EXPECT_EQ(error_field([&] { evaluate_prediction(trace, setup); }), "ranks_per_server");
  setup.ranks_per_server = 1;
  setup.copilot.history = 0;
  EXPECT_EQ(error_field([&] { evaluate_prediction(trace, setup); }), "history");
  setup.copilot.history = 4;
  workload::RoutingTrace odd(2, 3, 1, {0, 1}, 2);  // 3 experts over 2 ranks
  EXPECT_EQ(error_field([&] { evaluate_prediction(odd, setup); }), "trace");
}

}  // namespace
}  // namespace copilot_test
}  // namespace mfabric::control
