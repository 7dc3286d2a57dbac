// Synthetic expert routing (model in docs/routing.md). Per (iteration, MoE layer, micro-batch,
// source rank) a distribution over experts is built from
//   - the layer's popularity: Zipf-like over a per-layer permutation, skew decaying over training,
//     jittered per iteration,
//   - the source rank's own Dirichlet preference (sparse source-expert matrices),
//   - the transition matrix from the previous MoE layer applied to the same source's realized
//     load there (adjacent-layer correlation, what the Copilot predictor fits),
// and tokens_per_rank x top_k assignments are drawn from it, no expert taking more than
// tokens_per_rank (the k experts of one token are distinct).
#include "workload/routing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload/routing_kernel.h"
#include "workload/routing_random.h"

namespace mfabric::workload {
namespace {

using routing_detail::Sampler;

void fail(const char* field, const std::string& message) {
  throw Error("", field, message);
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

void require_fraction(double x, const char* field) {
  if (!(x >= 0.0 && x <= 1.0)) fail(field, "expected a fraction in [0, 1], got " + num(x));
}

void require_positive(double x, const char* field) {
  if (!(x > 0.0)) fail(field, "expected a positive number, got " + num(x));
}

void require_non_negative(double x, const char* field) {
  if (!(x >= 0.0) || std::isinf(x)) {
    fail(field, "expected a finite non-negative number, got " + num(x));
  }
}

void validate(const SyntheticRouting& p, int ep, int experts, int iterations,
              const std::vector<int>& layers, int micro_batches) {
  if (ep < 1) fail("ep", "expected at least 1, got " + std::to_string(ep));
  if (experts < 1) fail("experts", "expected at least 1, got " + std::to_string(experts));
  if (iterations < 1) fail("iterations", "expected at least 1, got " + std::to_string(iterations));
  if (micro_batches < 1) {
    fail("micro_batches", "expected at least 1, got " + std::to_string(micro_batches));
  }
  if (layers.empty()) fail("layers", "expected at least one MoE layer");
  if (p.tokens_per_rank < 1) {
    fail("tokens_per_rank",
         "expected a positive token count, got " + std::to_string(p.tokens_per_rank));
  }
  if (p.top_k < 1 || p.top_k > experts) {
    fail("top_k",
         "expected 1 to experts (" + std::to_string(experts) + "), got " + std::to_string(p.top_k));
  }
  if (p.tokens_per_rank > std::numeric_limits<std::int32_t>::max() / p.top_k) {
    fail("tokens_per_rank", "tokens_per_rank x top_k = " + std::to_string(p.tokens_per_rank) +
                                " x " + std::to_string(p.top_k) +
                                " does not fit a 32-bit token count");
  }
  require_non_negative(p.skew_initial, "skew_initial");
  require_non_negative(p.skew_final, "skew_final");
  require_positive(p.skew_decay_iterations, "skew_decay_iterations");
  if (p.start_iteration < 0) {
    fail("start_iteration",
         "expected a non-negative iteration, got " + std::to_string(p.start_iteration));
  }
  // Up to 1 so that the per-layer exponent skew * (1 + spread * u), u in [-1, 1], stays >= 0.
  require_fraction(p.layer_skew_spread, "layer_skew_spread");
  require_non_negative(p.iteration_jitter, "iteration_jitter");
  require_positive(p.source_concentration, "source_concentration");
  if (std::isinf(p.source_concentration)) fail("source_concentration", "expected a finite number");
  require_fraction(p.source_weight, "source_weight");
  require_fraction(p.layer_correlation, "layer_correlation");
  require_positive(p.transition_concentration, "transition_concentration");
  if (std::isinf(p.transition_concentration)) {
    fail("transition_concentration", "expected a finite number");
  }
}

// What is fixed per MoE layer for the whole run.
struct LayerModel {
  std::vector<int> popularity_rank;  // expert -> its rank in the layer's Zipf order
  double skew_factor = 1.0;          // 1 + layer_skew_spread * u_l
  std::vector<double> preference;    // [ep x experts], rows Dirichlet(source_concentration)
  // [experts x experts]; row i = column i of P_l = distribution of the next expert of a token
  // that went to expert i at the previous MoE layer. Empty for the first layer. Single
  // precision: it only shapes a distribution, and halving its size doubles the SIMD width of
  // the generator's hot loop.
  std::vector<float> transition;
};

LayerModel make_layer(const SyntheticRouting& p, int ep, int experts, int layer, bool first,
                      const Rng& rng) {
  const auto x = static_cast<std::size_t>(experts);
  const std::string tag = std::to_string(layer);
  LayerModel m;
  // Separate streams per purpose: changing ep or layer_correlation leaves the popularity alone,
  // and rank r's preference does not depend on how many ranks follow it.
  Sampler pop(rng.derive("routing/popularity/layer" + tag));
  std::vector<int> order(x);
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = x; i > 1; --i)
    std::swap(order[i - 1], order[pop.below(i)]);
  m.popularity_rank.resize(x);
  for (std::size_t r = 0; r < x; ++r)
    m.popularity_rank[static_cast<std::size_t>(order[r])] = static_cast<int>(r);
  m.skew_factor = 1.0 + p.layer_skew_spread * (2.0 * pop.uniform() - 1.0);

  Sampler pref(rng.derive("routing/preference/layer" + tag));
  m.preference.resize(static_cast<std::size_t>(ep) * x);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ep); ++r) {
    pref.dirichlet(p.source_concentration, std::span(m.preference).subspan(r * x, x));
  }

  if (!first && p.layer_correlation > 0.0) {
    Sampler trans(rng.derive("routing/transition/layer" + tag));
    m.transition.resize(x * x);
    std::vector<double> column(x);
    for (std::size_t i = 0; i < x; ++i) {
      trans.dirichlet(p.transition_concentration, column);
      std::transform(column.begin(), column.end(), m.transition.begin() + i * x,
                     [](double v) { return static_cast<float>(v); });
    }
  }
  return m;
}

// The layer's expert popularity at absolute iteration `iteration`: Zipf weights with the decayed,
// layer-scaled exponent, times log-normal noise of relative size iteration_jitter, normalized.
std::vector<double> popularity(const SyntheticRouting& p, const LayerModel& m, int layer,
                               int iteration, const Rng& rng) {
  const double skew =
      p.skew_final + (p.skew_initial - p.skew_final) *
                         std::exp(-static_cast<double>(iteration) / p.skew_decay_iterations);
  const double s = skew * m.skew_factor;
  const double sigma = p.iteration_jitter;
  Sampler noise(rng.derive("routing/jitter/iteration" + std::to_string(iteration) + "/layer" +
                           std::to_string(layer)));
  std::vector<double> w(m.popularity_rank.size());
  double sum = 0.0;
  for (std::size_t e = 0; e < w.size(); ++e) {
    const double zipf = std::pow(static_cast<double>(m.popularity_rank[e] + 1), -s);
    // exp(sigma z - sigma^2 / 2): mean 1, always positive, ~ 1 + sigma z for small sigma.
    w[e] = zipf * std::exp(sigma * noise.normal() - 0.5 * sigma * sigma);
    sum += w[e];
  }
  for (double& v : w)
    v /= sum;
  return w;
}

// Water-fills q (summing to ~1) so that no expert's share exceeds `cap` = 1/top_k, moving the
// excess to the other experts in proportion to their share: a token picks top_k distinct
// experts, so one expert can take at most 1/top_k of the assignments.
void cap_shares(std::span<double> q, double cap, std::vector<char>& capped) {
  if (cap >= 1.0) return;
  const double limit = cap * (1.0 + 1e-12);
  capped.assign(q.size(), 0);
  for (;;) {
    double free_mass = 1.0, open_sum = 0.0;
    std::size_t open = 0;
    for (std::size_t e = 0; e < q.size(); ++e) {
      if (capped[e]) {
        free_mass -= cap;
      } else {
        open_sum += q[e];
        ++open;
      }
    }
    if (open == 0 || free_mass <= 0.0) return;
    for (std::size_t e = 0; e < q.size(); ++e) {
      if (capped[e]) continue;
      q[e] = open_sum > 0.0 ? q[e] * free_mass / open_sum : free_mass / static_cast<double>(open);
    }
    bool changed = false;
    for (std::size_t e = 0; e < q.size(); ++e) {
      if (!capped[e] && q[e] > limit) {
        q[e] = cap;
        capped[e] = 1;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

// Moves sampled counts above `cap` to experts with room, in proportion to q (uniformly if no
// expert with room has a positive share). Each round either ends or fills another expert, so it
// stops after at most `experts` rounds; the total is preserved and cap x experts >= total.
void enforce_cap(std::span<std::int64_t> counts, std::span<const double> q, std::int64_t cap,
                 Sampler& sampler, std::vector<double>& weights, std::vector<std::int64_t>& extra) {
  for (;;) {
    std::int64_t excess = 0;
    for (auto& c : counts) {
      if (c > cap) {
        excess += c - cap;
        c = cap;
      }
    }
    if (excess == 0) return;
    weights.assign(counts.size(), 0.0);
    double sum = 0.0;
    for (std::size_t e = 0; e < counts.size(); ++e) {
      if (counts[e] < cap) sum += weights[e] = q[e];
    }
    if (!(sum > 0.0)) {
      for (std::size_t e = 0; e < counts.size(); ++e)
        weights[e] = counts[e] < cap ? 1.0 : 0.0;
    }
    extra.resize(counts.size());
    sampler.multinomial(excess, weights, extra);
    for (std::size_t e = 0; e < counts.size(); ++e)
      counts[e] += extra[e];
  }
}

}  // namespace

RoutingTrace generate_routing(const SyntheticRouting& params, int ep, int experts, int iterations,
                              const std::vector<int>& layers, int micro_batches, const Rng& rng) {
  validate(params, ep, experts, iterations, layers, micro_batches);
  RoutingTrace trace(ep, experts, iterations, layers, micro_batches);

  const auto x = static_cast<std::size_t>(experts);
  const std::int64_t n = params.tokens_per_rank * params.top_k;  // assignments per row
  const double inv_n = 1.0 / static_cast<double>(n);
  const double c = params.layer_correlation;
  const double w = params.source_weight;

  // What is fixed per layer, built once: the transition matrices are the costly part
  // (experts^2 gamma variates per layer).
  std::vector<LayerModel> models;
  models.reserve(layers.size());
  for (std::size_t li = 0; li < layers.size(); ++li) {
    models.push_back(make_layer(params, ep, experts, layers[li], li == 0, rng));
  }

  std::vector<double> q(x), weights;
  std::vector<float> loads(static_cast<std::size_t>(ep) * x), follow(loads.size());
  std::vector<std::int64_t> counts(x), extra;
  std::vector<char> capped;
  const double share_cap = 1.0 / static_cast<double>(params.top_k);
  std::vector<Sampler> samplers;

  for (int it = 0; it < iterations; ++it) {
    const int iteration = params.start_iteration + it;
    // One sampling stream per (iteration, micro-batch): the layers of one micro-batch form a
    // chain, so its rows are drawn in (layer, source) order from one stream.
    samplers.clear();
    for (int mb = 0; mb < micro_batches; ++mb) {
      samplers.emplace_back(rng.derive("routing/sample/iteration" + std::to_string(iteration) +
                                       "/micro_batch" + std::to_string(mb)));
    }
    for (std::size_t li = 0; li < layers.size(); ++li) {
      const LayerModel& model = models[li];
      const bool chained = !model.transition.empty();
      const std::vector<double> pop = popularity(params, model, layers[li], iteration, rng);
      for (int mb = 0; mb < micro_batches; ++mb) {
        Sampler& sampler = samplers[static_cast<std::size_t>(mb)];
        auto out = trace.matrix(it, static_cast<int>(li), mb);
        if (chained) {
          // follow = x_{l-1} P_l^T for all sources at once: each source's realized, normalized
          // load at the previous MoE layer pushed through the transition matrix.
          auto prev = std::as_const(trace).matrix(it, static_cast<int>(li) - 1, mb);
          std::transform(prev.begin(), prev.end(), loads.begin(), [inv_n](std::int32_t v) {
            return static_cast<float>(static_cast<double>(v) * inv_n);
          });
          routing_detail::multiply(loads.data(), model.transition.data(), follow.data(),
                                   static_cast<std::size_t>(ep), x, x);
        }
        for (std::size_t r = 0; r < static_cast<std::size_t>(ep); ++r) {
          const double* pref = model.preference.data() + r * x;
          for (std::size_t e = 0; e < x; ++e)
            q[e] = (1.0 - w) * pop[e] + w * pref[e];
          if (chained) {
            const float* f = follow.data() + r * x;
            for (std::size_t e = 0; e < x; ++e)
              q[e] = c * f[e] + (1.0 - c) * q[e];
          }
          cap_shares(q, share_cap, capped);
          sampler.multinomial(n, q, counts);
          enforce_cap(counts, q, params.tokens_per_rank, sampler, weights, extra);
          std::int32_t* dst = out.data() + r * x;
          for (std::size_t e = 0; e < x; ++e)
            dst[e] = static_cast<std::int32_t>(counts[e]);
        }
      }
    }
  }
  return trace;
}

}  // namespace mfabric::workload
