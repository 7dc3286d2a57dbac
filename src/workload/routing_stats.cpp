// Summary statistics of a routing trace (definitions in routing.h and docs/routing.md): the
// properties the paper measured on real MoE training and the generator reproduces.
#include "workload/routing.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "workload/routing_kernel.h"

namespace mfabric::workload {
namespace {

// A layer's samples, one per (iteration, micro-batch, source): the source's normalized expert
// load (its row divided by its sum; an all-zero row gives zero shares), minus the mean of its
// record (the same iteration and micro-batch, over the sources) and minus the mean of its
// source (over the records), plus the grand mean: the part of a source's load that is specific
// to this micro-batch. Stored expert-major ([experts x samples]) and scaled per expert to unit
// norm (the residuals already have zero mean) so that a Pearson correlation is one dot product.
// Experts whose residual is zero (one source, one record, or a load that never changes) get a
// zero column: their correlation with anything counts as 0.
std::vector<double> standardized_layer(const RoutingTrace& t, int layer_idx) {
  const auto x = static_cast<std::size_t>(t.experts());
  const auto ep = static_cast<std::size_t>(t.ep());
  const std::size_t records =
      static_cast<std::size_t>(t.iterations()) * static_cast<std::size_t>(t.micro_batches());
  const std::size_t samples = records * ep;
  std::vector<double> z(x * samples, 0.0);
  std::size_t s = 0;
  for (int it = 0; it < t.iterations(); ++it) {
    for (int mb = 0; mb < t.micro_batches(); ++mb) {
      auto m = t.matrix(it, layer_idx, mb);
      for (std::size_t r = 0; r < ep; ++r, ++s) {
        const std::int32_t* row = m.data() + r * x;
        std::int64_t sum = 0;
        for (std::size_t e = 0; e < x; ++e)
          sum += row[e];
        if (sum == 0) continue;  // a source that sent nothing: all-zero sample
        for (std::size_t e = 0; e < x; ++e) {
          z[e * samples + s] = static_cast<double>(row[e]) / static_cast<double>(sum);
        }
      }
    }
  }
  std::vector<double> record_mean(records), source_mean(ep);
  for (std::size_t e = 0; e < x; ++e) {
    double* col = z.data() + e * samples;  // sample k = record * ep + source
    std::fill(record_mean.begin(), record_mean.end(), 0.0);
    std::fill(source_mean.begin(), source_mean.end(), 0.0);
    double grand = 0.0;
    for (std::size_t rec = 0; rec < records; ++rec) {
      for (std::size_t r = 0; r < ep; ++r) {
        const double v = col[rec * ep + r];
        record_mean[rec] += v;
        source_mean[r] += v;
        grand += v;
      }
    }
    for (double& v : record_mean)
      v /= static_cast<double>(ep);
    for (double& v : source_mean)
      v /= static_cast<double>(records);
    grand /= static_cast<double>(samples);
    double ss = 0.0;
    for (std::size_t rec = 0; rec < records; ++rec) {
      for (std::size_t r = 0; r < ep; ++r) {
        double& v = col[rec * ep + r];
        v = v - record_mean[rec] - source_mean[r] + grand;
        ss += v * v;
      }
    }
    // Shares are in [0, 1]; a residual this small is rounding, not signal.
    const double norm = std::sqrt(ss);
    if (norm < 1e-9) {
      std::fill(col, col + samples, 0.0);
    } else {
      for (std::size_t k = 0; k < samples; ++k)
        col[k] /= norm;
    }
  }
  return z;
}

// The same samples sample-major ([samples x experts]) for the right-hand side of the product
// below. Single precision: correlations are reported to a few digits, and it halves the time of
// the O(experts^2 x samples) product that dominates the statistics of a large trace.
std::vector<float> sample_major(const std::vector<double>& z, std::size_t experts,
                                std::size_t samples) {
  std::vector<float> out(z.size());
  for (std::size_t e = 0; e < experts; ++e) {
    for (std::size_t k = 0; k < samples; ++k) {
      out[k * experts + e] = static_cast<float>(z[e * samples + k]);
    }
  }
  return out;
}

// Mean over experts j of layer `a` of the best Pearson correlation with any expert i of layer
// `b`: how well the best single expert of the earlier layer predicts each expert's load.
// `a` is expert-major, `b` sample-major, so all correlations are one matrix product. An expert
// whose load never changes has an all-zero row and so contributes 0.
double layer_pair_score(const std::vector<float>& a, const std::vector<float>& b,
                        std::size_t experts, std::size_t samples) {
  std::vector<float> corr(experts * experts);
  routing_detail::multiply(a.data(), b.data(), corr.data(), experts, samples, experts);
  double total = 0.0;
  for (std::size_t j = 0; j < experts; ++j) {
    const float* row = corr.data() + j * experts;
    total += static_cast<double>(*std::max_element(row, row + experts));
  }
  return total / static_cast<double>(experts);
}

// Fewest of the largest values whose sum reaches `target` (> 0, at most the total). Quickselect
// on the running sum: O(n) expected rather than a full sort of every record.
std::size_t heaviest_needed(std::span<std::int32_t> v, double target) {
  std::size_t lo = 0, hi = v.size(), count = 0;
  double need = target;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(lo);
    const auto middle = v.begin() + static_cast<std::ptrdiff_t>(mid);
    std::nth_element(first, middle, v.begin() + static_cast<std::ptrdiff_t>(hi), std::greater<>());
    double upper = 0.0;
    for (auto p = first; p != middle; ++p)
      upper += *p;
    if (upper >= need) {
      hi = mid;  // the answer lies among the larger half
      continue;
    }
    count += mid - lo + 1;
    need -= upper + *middle;
    if (need <= 0.0) return count;
    lo = mid + 1;
  }
  return count;
}

}  // namespace

namespace {

// Calls f(iteration, matrix, load, total) for every record (iteration, MoE layer, micro-batch)
// that routes any tokens (an empty record has no skew or sparsity to speak of), with its expert
// loads summed over the sources.
template <class F>
void for_each_routed_record(const RoutingTrace& t, F&& f) {
  const auto x = static_cast<std::size_t>(t.experts());
  const auto ep = static_cast<std::size_t>(t.ep());
  std::vector<double> load(x);
  for (int it = 0; it < t.iterations(); ++it) {
    for (int li = 0; li < static_cast<int>(t.layers().size()); ++li) {
      for (int mb = 0; mb < t.micro_batches(); ++mb) {
        auto m = t.matrix(it, li, mb);
        std::fill(load.begin(), load.end(), 0.0);
        std::int64_t total = 0;
        for (std::size_t r = 0; r < ep; ++r) {
          for (std::size_t e = 0; e < x; ++e) {
            load[e] += m[r * x + e];
            total += m[r * x + e];
          }
        }
        if (total > 0) f(it, m, load, total);
      }
    }
  }
}

}  // namespace

ExpertLoadSkew expert_load_skew(const RoutingTrace& t) {
  ExpertLoadSkew skew;
  double sum = 0.0;
  const auto x = static_cast<double>(t.experts());
  for_each_routed_record(t, [&](int, auto, const std::vector<double>& load, std::int64_t total) {
    const double ratio =
        *std::max_element(load.begin(), load.end()) * x / static_cast<double>(total);
    skew.min = skew.records == 0 ? ratio : std::min(skew.min, ratio);
    skew.max = skew.records == 0 ? ratio : std::max(skew.max, ratio);
    sum += ratio;
    ++skew.records;
  });
  if (skew.records > 0) skew.mean = sum / skew.records;
  return skew;
}

RoutingStats routing_stats(const RoutingTrace& t) {
  RoutingStats st;
  if (t.ep() == 0 || t.experts() == 0) return st;
  const auto x = static_cast<std::size_t>(t.experts());
  const auto ep = static_cast<std::size_t>(t.ep());
  const int layers = static_cast<int>(t.layers().size());
  st.records = t.iterations() * layers * t.micro_batches();

  const ExpertLoadSkew skew = expert_load_skew(t);
  st.skew_mean = skew.mean;
  st.skew_min = skew.min;
  st.skew_max = skew.max;
  std::vector<std::int32_t> pairs(x * ep);
  int sparsity_records = 0;
  int cv_first_n = 0, cv_last_n = 0;
  double sparsity_sum = 0.0, cv_first = 0.0, cv_last = 0.0;
  for_each_routed_record(
      t, [&](int it, auto m, const std::vector<double>& load, std::int64_t total) {
        const double mean = static_cast<double>(total) / static_cast<double>(x);
        double var = 0.0;
        for (double l : load)
          var += (l - mean) * (l - mean);
        const double cv = std::sqrt(var / static_cast<double>(x)) / mean;
        if (it == 0) {
          cv_first += cv;
          ++cv_first_n;
        }
        if (it == t.iterations() - 1) {
          cv_last += cv;
          ++cv_last_n;
        }
        // Fewest (source, expert) pairs that carry 80% of the tokens: the heaviest first.
        std::copy(m.begin(), m.end(), pairs.begin());
        const std::size_t needed = heaviest_needed(pairs, 0.8 * static_cast<double>(total));
        sparsity_sum += static_cast<double>(needed) / static_cast<double>(pairs.size());
        ++sparsity_records;
      });
  if (cv_first_n > 0) st.cv_first_iteration = cv_first / cv_first_n;
  if (cv_last_n > 0) st.cv_last_iteration = cv_last / cv_last_n;
  if (sparsity_records > 0) st.pairs_for_80pct = sparsity_sum / sparsity_records;

  // Correlations: a layer's standardized samples are needed by the next two layers only.
  const std::size_t samples =
      static_cast<std::size_t>(t.iterations()) * static_cast<std::size_t>(t.micro_batches()) * ep;
  if (layers >= 2 && t.ep() >= 2 && samples / ep >= 2) {
    std::vector<float> two_back, one_back = sample_major(standardized_layer(t, 0), x, samples);
    double adjacent = 0.0, distant = 0.0;
    for (int li = 1; li < layers; ++li) {
      const std::vector<double> z = standardized_layer(t, li);
      std::vector<float> expert_major(z.size());
      std::transform(z.begin(), z.end(), expert_major.begin(),
                     [](double v) { return static_cast<float>(v); });
      std::vector<float> current = sample_major(z, x, samples);
      adjacent += layer_pair_score(expert_major, one_back, x, samples);
      if (li >= 2) distant += layer_pair_score(expert_major, two_back, x, samples);
      two_back = std::move(one_back);
      one_back = std::move(current);
    }
    st.adjacent_layer_correlation = adjacent / (layers - 1);
    if (layers >= 3) st.distant_layer_correlation = distant / (layers - 2);
  }
  return st;
}

}  // namespace mfabric::workload
