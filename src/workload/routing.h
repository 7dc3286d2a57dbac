// Expert routing: how many tokens each EP source rank sends to each expert, per (iteration, MoE
// layer, micro-batch). This is the matrix Megatron-LM's token dispatcher all-gathers
// (num_global_tokens_per_expert, [ep x experts]) and what mFabric's traffic monitor reads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"

namespace mfabric::workload {

class RoutingTrace {
 public:
  RoutingTrace() = default;
  // All counts zero. `layers` are the global indices of the MoE layers the trace covers, strictly
  // increasing; sizes must be >= 1 (mfabric::Error naming the field otherwise).
  RoutingTrace(int ep, int experts, int iterations, std::vector<int> layers, int micro_batches);

  int ep() const { return ep_; }
  int experts() const { return experts_; }
  int iterations() const { return iterations_; }
  int micro_batches() const { return micro_batches_; }
  const std::vector<int>& layers() const { return layers_; }
  // Position of a global layer index in layers(), or -1. A static trace answers 0 for every layer.
  int layer_index(int layer) const;

  // A static trace is one record (1 iteration, 1 layer, 1 micro-batch) that stands for every
  // MoE layer and iteration: what a bare-matrix file (the authors' simulator format) holds.
  bool is_static() const { return static_; }
  // Marks a 1 x 1 x 1 trace static; throws mfabric::Error for any other shape.
  void mark_static();

  // The [ep x experts] matrix (row-major: source rank, expert) of one record. `layer_idx` indexes
  // layers(). Iterations and micro-batches beyond the trace wrap around (a recorded trace is
  // finite; a simulation may run longer).
  std::span<std::int32_t> matrix(int iteration, int layer_idx, int micro_batch);
  std::span<const std::int32_t> matrix(int iteration, int layer_idx, int micro_batch) const;

  // Tokens each source rank routes in one record (row sum; = tokens x top_k).
  std::int64_t row_sum(int iteration, int layer_idx, int micro_batch, int src) const;

 private:
  std::size_t offset(int iteration, int layer_idx, int micro_batch) const;

  int ep_ = 0;
  int experts_ = 0;
  int iterations_ = 0;
  std::vector<int> layers_;
  int micro_batches_ = 0;
  std::vector<std::int32_t> counts_;
  bool static_ = false;
};

// Parameters of the synthetic generator (docs/routing.md). Defaults reproduce what the paper
// measured: per-expert load skew that varies per layer and iteration and shrinks as training
// goes on, sparse source-to-expert matrices, and adjacent layers correlated through a
// transition matrix.
// How the synthetic generator spreads a row's tokens over the experts: by the skewed popularity
// model below, or evenly (Megatron-Core's --moe-router-force-load-balancing, which its published
// MoE benchmarks use: every expert gets the same tokens).
enum class RoutingBalance { Skewed, Forced };
const char* to_string(RoutingBalance b);

struct SyntheticRouting {
  std::int64_t tokens_per_rank = 32768;  // tokens each EP rank routes per micro-batch
  int top_k = 2;
  // Forced: each source's tokens x top_k assignments split evenly over the experts (the rest,
  // fewer than `experts`, one each to the experts after the source's index); the skew fields
  // below are then unused.
  RoutingBalance balance = RoutingBalance::Skewed;
  // Expert popularity ~ Zipf-like with exponent `skew`, decaying from skew_initial to
  // skew_final with time constant skew_decay_iterations (training starts at iteration
  // start_iteration).
  double skew_initial = 1.2;
  double skew_final = 0.6;
  double skew_decay_iterations = 2000;
  int start_iteration = 0;
  double layer_skew_spread = 0.3;  // relative spread of skew across layers
  double iteration_jitter = 0.15;  // relative per-iteration noise of expert popularity
  // Each source rank's own preference (Dirichlet concentration; smaller = sparser: a few heavy
  // source-expert pairs).
  double source_concentration = 0.5;
  double source_weight = 0.5;  // mix of the source's preference vs the layer's popularity
  // Adjacent-layer correlation: share of a token's routing at layer l that follows the
  // transition matrix from layer l-1 (0 = independent layers, 1 = fully determined). The
  // transition matrices are rescaled so that a layer's expected load (its skew) does not
  // depend on it.
  double layer_correlation = 0.7;
  // Concentration of the Dirichlet affinity columns of the transition matrices: per expert with
  // up to 4 x top_k experts, total 4 x top_k x this above (small = a token's next expert
  // depends more on its current one; docs/routing.md).
  double transition_concentration = 0.3;
};

// Checks the generator's own parameters (skews, jitter, concentrations, correlations), those that
// do not depend on the job's shape; mfabric::Error naming the field. generate_routing checks
// these and the shape.
void validate_shape_free(const SyntheticRouting& params);

// Generates a trace. Deterministic for (params, rng seed). Each micro-batch of the trace draws
// from its own random stream, the i-th from stream i, or from stream (*streams)[i] when
// `streams` is given (one per micro-batch): a trace of some micro-batches of a larger one, the
// same matrices as that trace's for them.
RoutingTrace generate_routing(const SyntheticRouting& params, int ep, int experts, int iterations,
                              const std::vector<int>& layers, int micro_batches, const Rng& rng,
                              const std::vector<int>* streams = nullptr);

// Reading and writing recorded traces (formats in docs/routing.md): JSON
// {"format": "mfabric-routing-trace", ...} or plain text, one record per line
// "<iteration> <layer> <micro_batch> [[r0e0, r0e1, ...], [r1e0, ...]]"; a file holding a single
// bare matrix "[[...], ...]" (the authors' simulator format) is one record used for every
// layer and iteration. Errors name the file, line and field: a number out of range (1e999), a
// negative, fractional or non-numeric count, and a trace whose dimensions need more than
// kMaxRoutingTraceCounts counts (checked before anything is allocated) are mfabric::Error.
// Writing replaces `path` atomically (core/output_files.h).
inline constexpr std::int64_t kMaxRoutingTraceCounts = std::int64_t{1} << 28;  // 1 GiB of int32
RoutingTrace read_routing_trace(const std::string& path);
void write_routing_trace(const RoutingTrace& trace, const std::string& path);

// How unevenly a trace loads the experts: per record (iteration, MoE layer, micro-batch) the
// busiest expert's tokens over the mean expert's, averaged over the records that route any
// tokens, and the range. 1 = perfectly balanced.
struct ExpertLoadSkew {
  int records = 0;
  double mean = 0, min = 0, max = 0;
};
ExpertLoadSkew expert_load_skew(const RoutingTrace& trace);

struct RoutingStats {
  int records = 0;
  // Expert load skew: max / mean expert load, averaged over records, and its range.
  double skew_mean = 0, skew_min = 0, skew_max = 0;
  // Coefficient of variation of expert load, first vs last iteration (shows the decay).
  double cv_first_iteration = 0, cv_last_iteration = 0;
  // Sparsity: share of (source, expert) pairs that carry 80% of the tokens (small = sparse).
  double pairs_for_80pct = 0;
  // Adjacent-layer correlation: each (iteration, micro-batch, source) sample's normalized load
  // minus its record's mean over sources and its source's mean over records (what is specific
  // to that micro-batch of that source); mean over experts j of layer l of the max over experts
  // i of layer l-1 of the Pearson correlation of these residuals, averaged over layer pairs;
  // and the same for layers two apart as the baseline (chance level). In [-1, 1]; 0 with one
  // source or one record.
  double adjacent_layer_correlation = 0;
  double distant_layer_correlation = 0;
};
RoutingStats routing_stats(const RoutingTrace& trace);

}  // namespace mfabric::workload
