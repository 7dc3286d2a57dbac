#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "workload/routing.h"
#include "workload/routing_random.h"

namespace mfabric::workload {
namespace {

// Small dimensions keep every test well under a second in a Debug build.
SyntheticRouting small_params() {
  SyntheticRouting p;
  p.tokens_per_rank = 256;
  p.top_k = 2;
  return p;
}

std::vector<int> layer_list(int n) {
  std::vector<int> layers(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    layers[static_cast<std::size_t>(i)] = 1 + 2 * i;  // 1, 3, 5, ...
  return layers;
}

bool same_counts(const RoutingTrace& a, const RoutingTrace& b) {
  for (int it = 0; it < a.iterations(); ++it) {
    for (int li = 0; li < static_cast<int>(a.layers().size()); ++li) {
      for (int mb = 0; mb < a.micro_batches(); ++mb) {
        auto x = a.matrix(it, li, mb);
        auto y = b.matrix(it, li, mb);
        if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
      }
    }
  }
  return true;
}

// max / mean of the expert load (summed over sources) of one record.
double record_skew(const RoutingTrace& t, int it, int li, int mb) {
  std::vector<double> load(static_cast<std::size_t>(t.experts()), 0.0);
  auto m = t.matrix(it, li, mb);
  for (std::size_t k = 0; k < m.size(); ++k)
    load[k % load.size()] += m[k];
  const double mean =
      std::accumulate(load.begin(), load.end(), 0.0) / static_cast<double>(load.size());
  return *std::max_element(load.begin(), load.end()) / mean;
}

TEST(RoutingGenerator, SameSeedSameTraceOtherSeedDifferent) {
  const auto p = small_params();
  const auto a = generate_routing(p, 4, 8, 2, layer_list(3), 2, Rng(7));
  const auto b = generate_routing(p, 4, 8, 2, layer_list(3), 2, Rng(7));
  const auto c = generate_routing(p, 4, 8, 2, layer_list(3), 2, Rng(8));
  EXPECT_TRUE(same_counts(a, b));
  EXPECT_FALSE(same_counts(a, c));
  EXPECT_EQ(a.ep(), 4);
  EXPECT_EQ(a.experts(), 8);
  EXPECT_EQ(a.iterations(), 2);
  EXPECT_EQ(a.micro_batches(), 2);
  EXPECT_EQ(a.layers(), layer_list(3));
}

// A trace of some micro-batches of a larger one (their streams named) holds that trace's matrices
// for them, in the order named; a wrong number of streams is refused.
TEST(RoutingGenerator, NamedStreamsGiveTheLargerTracesMatrices) {
  const auto p = small_params();
  const auto whole = generate_routing(p, 4, 8, 2, layer_list(3), 6, Rng(7));
  const std::vector<int> streams = {1, 4, 5};
  const auto part = generate_routing(p, 4, 8, 2, layer_list(3), 3, Rng(7), &streams);
  for (int it = 0; it < 2; ++it) {
    for (int li = 0; li < 3; ++li) {
      for (std::size_t k = 0; k < streams.size(); ++k) {
        const auto a = part.matrix(it, li, static_cast<int>(k));
        const auto b = whole.matrix(it, li, streams[k]);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()))
            << it << " " << li << " " << k;
      }
    }
  }
  // Without names, micro-batch 0 is stream 0, which differs from stream 1.
  const auto plain = generate_routing(p, 4, 8, 2, layer_list(3), 3, Rng(7));
  const auto a = plain.matrix(0, 0, 0);
  const auto b = part.matrix(0, 0, 0);
  EXPECT_FALSE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  const std::vector<int> two = {0, 1};
  EXPECT_THROW(generate_routing(p, 4, 8, 2, layer_list(3), 3, Rng(7), &two), std::invalid_argument);
}

TEST(RoutingGenerator, RowsSumToTokensTimesTopKAndNoExpertExceedsTokens) {
  // A sparse, skewed setup where the cap binds often; top_k = experts forces every row uniform.
  for (int top_k : {1, 2, 4, 8}) {
    auto p = small_params();
    p.tokens_per_rank = 100;
    p.top_k = top_k;
    p.skew_initial = 3.0;
    p.source_concentration = 0.05;
    p.transition_concentration = 0.05;
    const auto t = generate_routing(p, 3, 8, 2, layer_list(4), 2, Rng(1));
    for (int it = 0; it < 2; ++it) {
      for (int li = 0; li < 4; ++li) {
        for (int mb = 0; mb < 2; ++mb) {
          auto m = t.matrix(it, li, mb);
          for (int r = 0; r < 3; ++r) {
            EXPECT_EQ(t.row_sum(it, li, mb, r), 100 * top_k);
          }
          for (auto v : m) {
            EXPECT_GE(v, 0);
            EXPECT_LE(v, 100);
          }
          if (top_k == 8) {
            for (auto v : m)
              EXPECT_EQ(v, 100);
          }
        }
      }
    }
  }
}

TEST(RoutingGenerator, SkewDecaysOverTraining) {
  auto p = small_params();
  p.tokens_per_rank = 4096;
  p.skew_initial = 1.5;
  p.skew_final = 0.3;
  p.skew_decay_iterations = 2;
  p.layer_correlation = 0.0;
  // Within one trace: iteration 0 vs iteration 7 (3.5 time constants later).
  const auto t = generate_routing(p, 4, 16, 8, layer_list(3), 2, Rng(3));
  const auto st = routing_stats(t);
  EXPECT_GT(st.cv_first_iteration, 1.5 * st.cv_last_iteration)
      << st.cv_first_iteration << " vs " << st.cv_last_iteration;

  // The same through start_iteration: a job resumed late in training is less skewed.
  p.skew_decay_iterations = 2000;
  const auto early = routing_stats(generate_routing(p, 4, 16, 1, layer_list(3), 2, Rng(3)));
  p.start_iteration = 10000;
  const auto late = routing_stats(generate_routing(p, 4, 16, 1, layer_list(3), 2, Rng(3)));
  EXPECT_GT(early.cv_first_iteration, 1.5 * late.cv_first_iteration)
      << early.cv_first_iteration << " vs " << late.cv_first_iteration;
  EXPECT_GT(early.skew_mean, late.skew_mean);
}

TEST(RoutingGenerator, LayerSkewSpreadMakesLayersDiffer) {
  auto p = small_params();
  p.tokens_per_rank = 8192;
  p.layer_correlation = 0.0;
  p.source_weight = 0.0;  // popularity only: the skew is the layer's Zipf exponent
  p.iteration_jitter = 0.0;
  auto spread_of_layer_skews = [&](double spread) {
    p.layer_skew_spread = spread;
    const auto t = generate_routing(p, 4, 16, 1, layer_list(8), 1, Rng(5));
    double lo = 1e9, hi = 0;
    for (int li = 0; li < 8; ++li) {
      const double s = record_skew(t, 0, li, 0);
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    return hi / lo;
  };
  const double uniform_layers = spread_of_layer_skews(0.0);
  const double spread_layers = spread_of_layer_skews(1.0);
  EXPECT_LT(uniform_layers, 1.1);  // only sampling noise
  EXPECT_GT(spread_layers, 1.5);
}

TEST(RoutingGenerator, SmallSourceConcentrationMakesSparseMatrices) {
  auto p = small_params();
  p.layer_correlation = 0.0;
  p.source_weight = 0.8;
  auto pairs = [&](double concentration) {
    p.source_concentration = concentration;
    return routing_stats(generate_routing(p, 8, 16, 1, layer_list(2), 2, Rng(11))).pairs_for_80pct;
  };
  const double sparse = pairs(0.1);
  const double dense = pairs(10.0);
  EXPECT_LT(sparse, 0.6 * dense) << sparse << " vs " << dense;
}

// Mean coefficient of variation of the expert load of one layer over a trace's records.
double layer_cv(const RoutingTrace& t, int li) {
  double total = 0.0;
  for (int it = 0; it < t.iterations(); ++it) {
    for (int mb = 0; mb < t.micro_batches(); ++mb) {
      std::vector<double> load(static_cast<std::size_t>(t.experts()), 0.0);
      auto m = t.matrix(it, li, mb);
      for (std::size_t k = 0; k < m.size(); ++k)
        load[k % load.size()] += m[k];
      const double n = static_cast<double>(load.size());
      const double mean = std::accumulate(load.begin(), load.end(), 0.0) / n;
      double var = 0.0;
      for (double v : load)
        var += (v - mean) * (v - mean);
      total += std::sqrt(var / n) / mean;
    }
  }
  return total / (t.iterations() * t.micro_batches());
}

// Mixtral 8x7B's routing shape: EP 8, 8 experts, top-2, 32 MoE layers.
RoutingTrace mixtral_like(SyntheticRouting p, int iterations, int micro_batches,
                          std::uint64_t seed) {
  return generate_routing(p, 8, 8, iterations, layer_list(32), micro_batches, Rng(seed));
}

TEST(RoutingGenerator, SkewPersistsAtLateLayersAndDecays) {
  // The transition matrices are rescaled to map the previous layer's expected load onto this
  // layer's, so the last of 32 chained layers keeps its own skew (the same as without the chain)
  // and loses it over training like the first layer does.
  const SyntheticRouting p;
  SyntheticRouting independent = p;
  independent.layer_correlation = 0.0;
  SyntheticRouting late = p;
  late.start_iteration = 10000;
  const auto chained = mixtral_like(p, 1, 8, 1);
  const auto unchained = mixtral_like(independent, 1, 8, 1);
  const auto trained = mixtral_like(late, 1, 8, 1);

  const double first = layer_cv(chained, 0), last = layer_cv(chained, 31);
  EXPECT_GT(last, 0.4 * first) << last << " vs " << first;  // layers differ (layer_skew_spread)
  EXPECT_LT(last, 2.5 * first) << last << " vs " << first;
  EXPECT_NEAR(last / layer_cv(unchained, 31), 1.0, 0.15);
  double chained_mean = 0.0, unchained_mean = 0.0;
  for (int li = 1; li < 32; ++li) {
    chained_mean += layer_cv(chained, li);
    unchained_mean += layer_cv(unchained, li);
  }
  EXPECT_NEAR(chained_mean / unchained_mean, 1.0, 0.1);

  EXPECT_GT(last, 1.3 * layer_cv(trained, 31)) << last << " vs " << layer_cv(trained, 31);
  const double early_cv = routing_stats(chained).cv_first_iteration;
  const double late_cv = routing_stats(trained).cv_first_iteration;
  EXPECT_GT(early_cv, 1.5 * late_cv) << early_cv << " vs " << late_cv;
}

TEST(RoutingGenerator, AdjacentLayersBeatLayersTwoApartAtMixtralShape) {
  // Default parameters, 4 iterations x 4 micro-batches. Over seeds 1-20: adjacent 0.27-0.29,
  // two apart 0.16-0.17 (the chance level of the statistic here is about 0.15); with
  // independent layers both 0.14-0.15.
  SyntheticRouting p;
  const auto chained = routing_stats(mixtral_like(p, 4, 4, 7));
  p.layer_correlation = 0.0;
  const auto independent = routing_stats(mixtral_like(p, 4, 4, 7));
  EXPECT_GT(chained.adjacent_layer_correlation, chained.distant_layer_correlation + 0.07)
      << chained.adjacent_layer_correlation << " vs " << chained.distant_layer_correlation;
  EXPECT_GT(chained.adjacent_layer_correlation, independent.adjacent_layer_correlation + 0.07)
      << chained.adjacent_layer_correlation << " vs " << independent.adjacent_layer_correlation;
  EXPECT_NEAR(independent.adjacent_layer_correlation, independent.distant_layer_correlation, 0.03);
}

TEST(RoutingGenerator, AdjacentLayersBeatLayersTwoApartWithManyExperts) {
  // EP 16, 64 experts, default parameters. Over seeds 1-20 (4 x 8 records): adjacent 0.25-0.27,
  // two apart 0.12, independent layers 0.11 both.
  SyntheticRouting p;
  auto stats = [&](double correlation) {
    p.layer_correlation = correlation;
    return routing_stats(generate_routing(p, 16, 64, 4, layer_list(6), 8, Rng(11)));
  };
  const auto chained = stats(0.7);
  const auto independent = stats(0.0);
  EXPECT_GT(chained.adjacent_layer_correlation, chained.distant_layer_correlation + 0.07)
      << chained.adjacent_layer_correlation << " vs " << chained.distant_layer_correlation;
  EXPECT_NEAR(independent.adjacent_layer_correlation, independent.distant_layer_correlation, 0.03);
}

TEST(RoutingGenerator, DefaultsAtModerateScale) {
  // The default parameters with a realistic token count: exact row sums, a skewed and sparse
  // trace.
  const SyntheticRouting p;
  const auto t = generate_routing(p, 8, 32, 2, layer_list(4), 2, Rng(17));
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(t.row_sum(1, 3, 1, r), p.tokens_per_rank * p.top_k);
  const auto st = routing_stats(t);
  EXPECT_EQ(st.records, 16);
  EXPECT_GT(st.skew_mean, 1.5);
  EXPECT_LE(st.skew_min, st.skew_mean);
  EXPECT_GE(st.skew_max, st.skew_mean);
  EXPECT_LT(st.pairs_for_80pct, 0.7);  // a uniform matrix needs 0.8
}

// Forced balance, by hand: 3 sources, 4 experts, 7 tokens top-2 = 14 assignments a row, 3 to
// each expert and one more to the 2 experts from the source's index on: source 0 to experts 0
// and 1, source 1 to 1 and 2, source 2 to 2 and 3. Expert loads 10, 11, 11, 10: the busiest
// 11 / 10.5 of the mean. With 8 tokens (16 a row) every count is 4: skew exactly 1.
TEST(RoutingGenerator, ForcedBalanceSplitsEveryRowEvenly) {
  SyntheticRouting p;
  p.balance = RoutingBalance::Forced;
  p.tokens_per_rank = 7;
  const RoutingTrace t = generate_routing(p, 3, 4, 2, layer_list(2), 2, Rng(1));
  const std::vector<std::int32_t> expected = {4, 4, 3, 3, 3, 4, 4, 3, 3, 3, 4, 4};
  for (int it = 0; it < 2; ++it) {
    for (int li = 0; li < 2; ++li) {
      for (int mb = 0; mb < 2; ++mb) {
        const auto m = t.matrix(it, li, mb);
        EXPECT_EQ(std::vector<std::int32_t>(m.begin(), m.end()), expected);
      }
    }
  }
  EXPECT_NEAR(expert_load_skew(t).mean, 11.0 / 10.5, 1e-12);
  p.tokens_per_rank = 8;
  const ExpertLoadSkew even =
      expert_load_skew(generate_routing(p, 3, 4, 1, layer_list(1), 1, Rng(1)));
  EXPECT_EQ(even.min, 1.0);
  EXPECT_EQ(even.max, 1.0);
}

void expect_param_error(const std::string& field, auto mutate) {
  SyntheticRouting p = small_params();
  int ep = 2, experts = 4, iterations = 1, micro_batches = 1;
  std::vector<int> layers = {0, 1};
  mutate(p, ep, experts, iterations, layers, micro_batches);
  try {
    generate_routing(p, ep, experts, iterations, layers, micro_batches, Rng(1));
    FAIL() << "accepted a bad " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(RoutingGenerator, RejectsBadParametersNamingThem) {
  using P = SyntheticRouting;
  using L = std::vector<int>;
  expect_param_error("ep", [](P&, int& ep, int&, int&, L&, int&) { ep = 0; });
  expect_param_error("experts", [](P&, int&, int& x, int&, L&, int&) { x = 0; });
  expect_param_error("iterations", [](P&, int&, int&, int& i, L&, int&) { i = 0; });
  expect_param_error("micro_batches", [](P&, int&, int&, int&, L&, int& m) { m = 0; });
  expect_param_error("layers", [](P&, int&, int&, int&, L& l, int&) { l.clear(); });
  expect_param_error("layers[1]", [](P&, int&, int&, int&, L& l, int&) { l = {3, 3}; });
  expect_param_error("layers[0]", [](P&, int&, int&, int&, L& l, int&) { l = {-1}; });
  expect_param_error("tokens_per_rank",
                     [](P& p, int&, int&, int&, L&, int&) { p.tokens_per_rank = 0; });
  expect_param_error("tokens_per_rank", [](P& p, int&, int&, int&, L&, int&) {
    p.tokens_per_rank = std::int64_t{1} << 31;
  });
  expect_param_error("top_k", [](P& p, int&, int&, int&, L&, int&) { p.top_k = 5; });
  expect_param_error("top_k", [](P& p, int&, int&, int&, L&, int&) { p.top_k = 0; });
  expect_param_error("skew_initial", [](P& p, int&, int&, int&, L&, int&) { p.skew_initial = -1; });
  expect_param_error("skew_final",
                     [](P& p, int&, int&, int&, L&, int&) { p.skew_final = std::nan(""); });
  expect_param_error("skew_decay_iterations",
                     [](P& p, int&, int&, int&, L&, int&) { p.skew_decay_iterations = 0; });
  expect_param_error("start_iteration",
                     [](P& p, int&, int&, int&, L&, int&) { p.start_iteration = -5; });
  expect_param_error("layer_skew_spread",
                     [](P& p, int&, int&, int&, L&, int&) { p.layer_skew_spread = 1.5; });
  expect_param_error("iteration_jitter",
                     [](P& p, int&, int&, int&, L&, int&) { p.iteration_jitter = -0.1; });
  expect_param_error("source_concentration",
                     [](P& p, int&, int&, int&, L&, int&) { p.source_concentration = 0; });
  expect_param_error("source_weight",
                     [](P& p, int&, int&, int&, L&, int&) { p.source_weight = 1.01; });
  expect_param_error("layer_correlation",
                     [](P& p, int&, int&, int&, L&, int&) { p.layer_correlation = -0.5; });
  expect_param_error("transition_concentration",
                     [](P& p, int&, int&, int&, L&, int&) { p.transition_concentration = -1; });
}

TEST(RoutingGenerator, PrefixOfSourcesDoesNotDependOnEp) {
  // Popularity and each rank's preference come from their own streams, so with independent
  // layers a run with more ranks keeps the distribution of the first ranks; the sampled counts
  // share one stream per micro-batch and may differ, but the layer's popularity order must not.
  auto p = small_params();
  p.layer_correlation = 0.0;
  p.source_weight = 0.0;
  p.iteration_jitter = 0.0;
  p.tokens_per_rank = 20000;
  p.top_k = 1;
  const auto a = generate_routing(p, 2, 8, 1, {0}, 1, Rng(21));
  const auto b = generate_routing(p, 6, 8, 1, {0}, 1, Rng(21));
  auto top_expert = [](const RoutingTrace& t) {
    auto m = t.matrix(0, 0, 0);
    return std::max_element(m.begin(), m.begin() + t.experts()) - m.begin();
  };
  EXPECT_EQ(top_expert(a), top_expert(b));
}

using routing_detail::Sampler;

TEST(RoutingSampler, BinomialMomentsExactAndApproximate) {
  Sampler s(Rng(1).derive("test"));
  // (n, p): exact inversion (small mean), the flipped side (p > 1/2), the normal approximation.
  for (auto [n, p] : {std::pair<std::int64_t, double>{50, 0.1}, {40, 0.9}, {100000, 0.3}}) {
    const int draws = 20000;
    double sum = 0, sq = 0;
    for (int i = 0; i < draws; ++i) {
      const auto k = s.binomial(n, p);
      ASSERT_GE(k, 0);
      ASSERT_LE(k, n);
      sum += static_cast<double>(k);
      sq += static_cast<double>(k) * static_cast<double>(k);
    }
    const double mean = sum / draws, var = sq / draws - mean * mean;
    const double want_var = static_cast<double>(n) * p * (1 - p);
    EXPECT_NEAR(mean, static_cast<double>(n) * p, 4 * std::sqrt(want_var / draws)) << n << " " << p;
    EXPECT_NEAR(var / want_var, 1.0, 0.05) << n << " " << p;
  }
  EXPECT_EQ(s.binomial(10, 0.0), 0);
  EXPECT_EQ(s.binomial(10, 1.0), 10);
  EXPECT_EQ(s.binomial(0, 0.5), 0);
}

TEST(RoutingSampler, GammaAndDirichlet) {
  Sampler s(Rng(2).derive("test"));
  for (double shape : {0.3, 1.0, 4.5}) {
    const int draws = 20000;
    double sum = 0;
    for (int i = 0; i < draws; ++i)
      sum += std::exp(s.log_gamma(shape));
    EXPECT_NEAR(sum / draws, shape, 4 * std::sqrt(shape / draws)) << shape;  // mean = var = a
  }
  // A tiny concentration underflows every gamma variate; the Dirichlet must still sum to 1.
  std::vector<double> d(16);
  for (double c : {0.001, 0.5, 50.0}) {
    s.dirichlet(c, d);
    EXPECT_NEAR(std::accumulate(d.begin(), d.end(), 0.0), 1.0, 1e-12);
    for (double v : d)
      EXPECT_GE(v, 0.0);
  }
}

TEST(RoutingSampler, DirichletWithUnequalParameters) {
  Sampler s(Rng(4).derive("test"));
  // Mean of component e is alpha_e / sum(alpha), also when most parameters are far below the
  // shape where gamma variates underflow.
  const std::vector<double> alpha = {2.0, 0.5, 0.05, 1e-4, 1e-4, 0.4499};
  std::vector<double> d(alpha.size()), mean(alpha.size(), 0.0);
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    s.dirichlet(alpha, d);
    ASSERT_NEAR(std::accumulate(d.begin(), d.end(), 0.0), 1.0, 1e-12);
    for (std::size_t e = 0; e < d.size(); ++e) {
      ASSERT_GE(d[e], 0.0);
      mean[e] += d[e] / draws;
    }
  }
  const double total = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  for (std::size_t e = 0; e < alpha.size(); ++e) {
    const double m = alpha[e] / total;
    // sd of one component: sqrt(m (1 - m) / (total + 1)).
    EXPECT_NEAR(mean[e], m, 4 * std::sqrt(m * (1 - m) / (total + 1) / draws) + 1e-9) << e;
  }
  // Every parameter tiny: still a distribution.
  const std::vector<double> tiny(8, 1e-6);
  d.resize(tiny.size());
  s.dirichlet(tiny, d);
  EXPECT_NEAR(std::accumulate(d.begin(), d.end(), 0.0), 1.0, 1e-12);
}

TEST(RoutingSampler, MultinomialKeepsTheTotal) {
  Sampler s(Rng(3).derive("test"));
  const std::vector<double> w = {0.0, 3.0, 1.0, 0.0, 6.0, 0.0};
  std::vector<std::int64_t> out(w.size());
  std::vector<double> mean(w.size(), 0.0);
  for (int i = 0; i < 2000; ++i) {
    s.multinomial(1000, w, out);
    EXPECT_EQ(std::accumulate(out.begin(), out.end(), std::int64_t{0}), 1000);
    for (std::size_t e = 0; e < w.size(); ++e)
      mean[e] += static_cast<double>(out[e]) / 2000;
  }
  EXPECT_EQ(mean[0] + mean[3] + mean[5], 0.0);  // zero weight, never chosen
  EXPECT_NEAR(mean[1], 300, 3);
  EXPECT_NEAR(mean[2], 100, 3);
  EXPECT_NEAR(mean[4], 600, 3);
}

}  // namespace
}  // namespace mfabric::workload
