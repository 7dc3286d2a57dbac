// Synthetic expert routing (model in docs/routing.md). Per (iteration, MoE layer, micro-batch,
// source rank) a distribution over experts is built from
//   - the layer's popularity: Zipf-like over a per-layer permutation, skew decaying over training,
//     jittered per iteration,
//   - the source rank's own Dirichlet preference (sparse source-expert matrices),
//   - the transition matrix from the previous MoE layer applied to the same source's realized
//     load there (adjacent-layer correlation, what the Copilot predictor fits): a fixed sparse
//     affinity per layer, rescaled every iteration (Sinkhorn) so that it maps the previous
//     layer's expected load onto this layer's, which keeps every layer's own skew and its decay,
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
#include <stdexcept>
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

}  // namespace

void validate_shape_free(const SyntheticRouting& p) {
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

namespace {

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
  validate_shape_free(p);
}

// What is fixed per MoE layer for the whole run.
struct LayerModel {
  std::vector<int> popularity_rank;     // expert -> its rank in the layer's Zipf order
  double skew_factor = 1.0;             // 1 + layer_skew_spread * u_l
  std::vector<double> preference;       // [ep x experts], rows Dirichlet(source_concentration)
  std::vector<double> mean_preference;  // [experts], mean of the rows of `preference`
  // [experts x experts]; row i, a Dirichlet draw (see make_layer), says which experts of this
  // layer a token that was at expert i at the previous MoE layer has an affinity for. Empty for
  // the first layer and without layer correlation. Single precision: it only shapes a
  // distribution; entries below kAffinityFloor are 0 (no denormals in the hot loops).
  std::vector<float> affinity;
};

constexpr double kAffinityFloor = 1e-20;
// Smallest Dirichlet parameter of an affinity column (a base share that underflowed).
constexpr double kMinAlpha = 1e-9;

// Zipf weights (rank + 1)^-s over the experts, normalized.
std::vector<double> zipf(const std::vector<int>& rank, double s) {
  std::vector<double> w(rank.size());
  double sum = 0.0;
  for (std::size_t e = 0; e < w.size(); ++e) {
    w[e] = std::pow(static_cast<double>(rank[e] + 1), -s);
    sum += w[e];
  }
  for (double& v : w)
    v /= sum;
  return w;
}

// The expected load of a layer over its sources, (1 - source_weight) * popularity +
// source_weight * mean preference: what every layer's routing averages to (the transition
// matrices are fitted to preserve it).
std::vector<double> expected_load(const SyntheticRouting& p, const LayerModel& m,
                                  const std::vector<double>& pop) {
  std::vector<double> t(pop.size());
  for (std::size_t e = 0; e < t.size(); ++e)
    t[e] = (1.0 - p.source_weight) * pop[e] + p.source_weight * m.mean_preference[e];
  return t;
}

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
  m.mean_preference.assign(x, 0.0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ep); ++r) {
    auto row = std::span(m.preference).subspan(r * x, x);
    pref.dirichlet(p.source_concentration, row);
    for (std::size_t e = 0; e < x; ++e)
      m.mean_preference[e] += row[e];
  }
  for (double& v : m.mean_preference)
    v /= static_cast<double>(ep);

  if (!first && p.layer_correlation > 0.0) {
    // Affinity columns ~ Dirichlet(total * base). `base` is the layer's expected load at the
    // exponent the skew decays to, so the columns already favour the experts the layer loads
    // and fit_transition only corrects them. `total` is the concentration of
    // Dirichlet(transition_concentration) over min(experts, 4 top_k) experts: a column spreads
    // over a few next experts (about 1 + total) however many experts the model has.
    const std::vector<double> base =
        expected_load(p, m, zipf(m.popularity_rank, p.skew_final * m.skew_factor));
    const double total =
        p.transition_concentration * static_cast<double>(std::min(experts, 4 * p.top_k));
    std::vector<double> alpha(x);
    for (std::size_t e = 0; e < x; ++e)
      alpha[e] = std::max(total * base[e], kMinAlpha);
    Sampler trans(rng.derive("routing/transition/layer" + tag));
    m.affinity.resize(x * x);
    std::vector<double> column(x);
    for (std::size_t i = 0; i < x; ++i) {
      trans.dirichlet(alpha, column);
      std::transform(column.begin(), column.end(), m.affinity.begin() + i * x,
                     [](double v) { return v < kAffinityFloor ? 0.0f : static_cast<float>(v); });
    }
  }
  return m;
}

// A layer's expert popularity at one absolute iteration.
struct Popularity {
  std::vector<double> smooth;    // Zipf weights with the decayed, layer-scaled exponent
  std::vector<double> jittered;  // the same times the iteration's log-normal noise
};

// The layer's popularity at absolute iteration `iteration`: Zipf weights with exponent
// skew(iteration) * skew_factor, and the same times log-normal noise of relative size
// iteration_jitter (fresh per iteration and layer), both normalized.
Popularity popularity(const SyntheticRouting& p, const LayerModel& m, int layer, int iteration,
                      const Rng& rng) {
  const double skew =
      p.skew_final + (p.skew_initial - p.skew_final) *
                         std::exp(-static_cast<double>(iteration) / p.skew_decay_iterations);
  const double sigma = p.iteration_jitter;
  Sampler noise(rng.derive("routing/jitter/iteration" + std::to_string(iteration) + "/layer" +
                           std::to_string(layer)));
  Popularity out;
  out.smooth = zipf(m.popularity_rank, skew * m.skew_factor);
  out.jittered.resize(out.smooth.size());
  double sum = 0.0;
  for (std::size_t e = 0; e < out.smooth.size(); ++e) {
    // exp(sigma z - sigma^2 / 2): mean 1, always positive, ~ 1 + sigma z for small sigma.
    out.jittered[e] = out.smooth[e] * std::exp(sigma * noise.normal() - 0.5 * sigma * sigma);
    sum += out.jittered[e];
  }
  for (double& v : out.jittered)
    v /= sum;
  return out;
}

// The transition matrix P_l of one iteration, stored transposed like `affinity` (row i = column
// i of P_l: where a token that was at expert i goes next): P_l[e][i] = u_e affinity[i][e] v_i,
// with u and v found by Sinkhorn scaling so that every column sums to 1 and P_l prev = next
// (to kSinkhornTolerance in L1, or after kSinkhornRounds rounds), `prev` and `next` being the
// expected loads of the previous and of this layer. The affinity makes a token's next expert
// depend on its current one; the scaling gives the layer its own expected load.
constexpr int kSinkhornRounds = 100;
constexpr double kSinkhornTolerance = 1e-3;

// sum_k a[k] * b[k], b in single precision, in four interleaved partial sums (a fixed order).
double dot(const double* a, const float* b, std::size_t n) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (std::size_t j = 0; j < 4; ++j)
      s[j] += a[k + j] * static_cast<double>(b[k + j]);
  }
  for (; k < n; ++k)
    s[0] += a[k] * static_cast<double>(b[k]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

struct SinkhornScratch {
  std::vector<double> u, v, row;
};

void fit_transition(const std::vector<float>& affinity, const std::vector<double>& prev,
                    const std::vector<double>& next, SinkhornScratch& w,
                    std::vector<float>& transition) {
  const std::size_t x = prev.size();
  w.u = next;
  w.v.assign(x, 0.0);
  w.row.assign(x, 0.0);
  for (int round = 1;; ++round) {
    // Columns: v_i = 1 / sum_e u_e a[i][e] (a column the scaled affinity cannot reach stays 0).
    for (std::size_t i = 0; i < x; ++i) {
      const double sum = dot(w.u.data(), affinity.data() + i * x, x);
      w.v[i] = sum > 0.0 ? 1.0 / sum : 0.0;
    }
    // Rows: the layer receives u_e row_e with row_e = sum_i a[i][e] v_i prev_i; it wants next_e.
    std::fill(w.row.begin(), w.row.end(), 0.0);
    for (std::size_t i = 0; i < x; ++i) {
      const float* a = affinity.data() + i * x;
      const double weight = w.v[i] * prev[i];
      if (weight == 0.0) continue;
      for (std::size_t e = 0; e < x; ++e)
        w.row[e] += weight * static_cast<double>(a[e]);
    }
    double error = 0.0;
    for (std::size_t e = 0; e < x; ++e)
      error += std::abs(w.u[e] * w.row[e] - next[e]);
    if (error <= kSinkhornTolerance || round >= kSinkhornRounds) break;
    for (std::size_t e = 0; e < x; ++e)
      w.u[e] = w.row[e] > 0.0 ? next[e] / w.row[e] : 0.0;
  }
  transition.resize(x * x);
  for (std::size_t i = 0; i < x; ++i) {
    const float* a = affinity.data() + i * x;
    float* t = transition.data() + i * x;
    for (std::size_t e = 0; e < x; ++e) {
      const double value = w.u[e] * static_cast<double>(a[e]) * w.v[i];
      t[e] = value < kAffinityFloor ? 0.0f : static_cast<float>(value);
    }
  }
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

const char* to_string(RoutingBalance b) {
  return b == RoutingBalance::Forced ? "forced" : "skewed";
}

namespace {

// Forced balance: row r's n assignments as n / experts each, and one more to the n mod experts
// experts from index r on (wrapping), so that the sources' remainders spread over the experts.
void fill_balanced(RoutingTrace& trace, std::int64_t n) {
  const auto x = static_cast<std::int64_t>(trace.experts());
  const std::int64_t base = n / x, extra = n % x;
  for (int it = 0; it < trace.iterations(); ++it) {
    for (int li = 0; li < static_cast<int>(trace.layers().size()); ++li) {
      for (int mb = 0; mb < trace.micro_batches(); ++mb) {
        auto out = trace.matrix(it, li, mb);
        for (std::int64_t r = 0; r < trace.ep(); ++r) {
          for (std::int64_t e = 0; e < x; ++e) {
            const bool one_more = (e - r % x + x) % x < extra;
            out[static_cast<std::size_t>(r * x + e)] =
                static_cast<std::int32_t>(base + (one_more ? 1 : 0));
          }
        }
      }
    }
  }
}

}  // namespace

RoutingTrace generate_routing(const SyntheticRouting& params, int ep, int experts, int iterations,
                              const std::vector<int>& layers, int micro_batches, const Rng& rng,
                              const std::vector<int>* streams) {
  validate(params, ep, experts, iterations, layers, micro_batches);
  if (streams != nullptr && streams->size() != static_cast<std::size_t>(micro_batches)) {
    throw std::invalid_argument("generate_routing: one stream per micro-batch");
  }
  RoutingTrace trace(ep, experts, iterations, layers, micro_batches);
  if (params.balance == RoutingBalance::Forced) {
    // Every expert the same tokens (to one): top_k <= experts keeps each count within
    // tokens_per_rank, one per token.
    fill_balanced(trace, params.tokens_per_rank * params.top_k);
    return trace;
  }

  const auto x = static_cast<std::size_t>(experts);
  const std::int64_t n = params.tokens_per_rank * params.top_k;  // assignments per row
  const double inv_n = 1.0 / static_cast<double>(n);
  const double c = params.layer_correlation;
  const double w = params.source_weight;

  // What is fixed per layer, built once: the affinities are the costly part (experts^2 gamma
  // variates per layer).
  std::vector<LayerModel> models;
  models.reserve(layers.size());
  for (std::size_t li = 0; li < layers.size(); ++li) {
    models.push_back(make_layer(params, ep, experts, layers[li], li == 0, rng));
  }

  std::vector<double> q(x), weights, ratio(x);
  SinkhornScratch sinkhorn;
  std::vector<float> loads(static_cast<std::size_t>(ep) * x), follow(loads.size()), transition;
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
      const int stream = streams != nullptr ? (*streams)[static_cast<std::size_t>(mb)] : mb;
      samplers.emplace_back(rng.derive("routing/sample/iteration" + std::to_string(iteration) +
                                       "/micro_batch" + std::to_string(stream)));
    }
    std::vector<double> prev_expected;  // the previous layer's expected load, without jitter
    for (std::size_t li = 0; li < layers.size(); ++li) {
      const LayerModel& model = models[li];
      const bool chained = !model.affinity.empty();
      const Popularity pop = popularity(params, model, layers[li], iteration, rng);
      std::vector<double> expected = expected_load(params, model, pop.smooth);
      if (chained) {
        fit_transition(model.affinity, prev_expected, expected, sinkhorn, transition);
        // The iteration's noise of this layer's popularity, applied to what the transition
        // delivers: on average the layer then receives its jittered expected load.
        const std::vector<double> jittered = expected_load(params, model, pop.jittered);
        for (std::size_t e = 0; e < x; ++e)
          ratio[e] = expected[e] > 0.0 ? jittered[e] / expected[e] : 0.0;
      }
      for (int mb = 0; mb < micro_batches; ++mb) {
        Sampler& sampler = samplers[static_cast<std::size_t>(mb)];
        auto out = trace.matrix(it, static_cast<int>(li), mb);
        if (chained) {
          // follow = x_{l-1} P_l^T for all sources at once: each source's realized, normalized
          // load at the previous MoE layer pushed through the transition matrix.
          auto prev = std::as_const(trace).matrix(it, static_cast<int>(li) - 1, mb);
          std::transform(prev.begin(), prev.end(), loads.begin(), [inv_n](std::int32_t val) {
            return static_cast<float>(static_cast<double>(val) * inv_n);
          });
          routing_detail::multiply(loads.data(), transition.data(), follow.data(),
                                   static_cast<std::size_t>(ep), x, x);
        }
        for (std::size_t r = 0; r < static_cast<std::size_t>(ep); ++r) {
          const double* pref = model.preference.data() + r * x;
          for (std::size_t e = 0; e < x; ++e)
            q[e] = (1.0 - w) * pop.jittered[e] + w * pref[e];
          if (chained) {
            const float* f = follow.data() + r * x;
            double total = 0.0;
            for (std::size_t e = 0; e < x; ++e)
              total += static_cast<double>(f[e]) * ratio[e];
            // total is ~1; 0 only if the affinity never reaches an expert the layer uses.
            if (total > 0.0) {
              const double scale = c / total;
              for (std::size_t e = 0; e < x; ++e)
                q[e] = scale * static_cast<double>(f[e]) * ratio[e] + (1.0 - c) * q[e];
            }
          }
          cap_shares(q, share_cap, capped);
          sampler.multinomial(n, q, counts);
          enforce_cap(counts, q, params.tokens_per_rank, sampler, weights, extra);
          std::int32_t* dst = out.data() + r * x;
          for (std::size_t e = 0; e < x; ++e)
            dst[e] = static_cast<std::int32_t>(counts[e]);
        }
      }
      prev_expected = std::move(expected);
    }
  }
  return trace;
}

}  // namespace mfabric::workload
