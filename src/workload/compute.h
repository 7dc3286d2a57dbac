// Compute model: FLOPs per layer and op, and their time on a GPU.
//
// Forward FLOPs per micro-batch of T = micro_batch x seq tokens (2 FLOPs per multiply-add):
//  attention  projections (q, k, v, o; MLA's low-rank projections) + scores and weighted sum
//             (4 x T x seq x heads x head_dim, full square: no causal saving, which the
//             attention efficiency absorbs; model_flops.h counts half, as MFU does)
//  router     2 x T x hidden x experts
//  experts    per token-expert assignment: 2 x m x hidden x ffn_expert, m = 3 (gated) or 2
//  shared     T x shared_experts x 2 x m x hidden x ffn_shared
//  dense FFN  T x 2 x m x hidden x ffn_dense
//  LM head    2 x T x hidden x vocab (last stage)
// Backward = 2 x forward. Everything divided among TP ranks.
// Time = max(FLOPs / (peak x efficiency[op class]), bytes moved / memory bandwidth): a roofline
// where bytes moved are the op's weights plus inputs and outputs (what skinny expert GEMMs with
// few tokens are bound by).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/units.h"
#include "workload/model.h"
#include "workload/task_graph.h"

namespace mfabric::workload {

struct GpuSpec {
  std::string name;
  double peak_bf16_flops = 0;   // dense bf16 FLOP/s
  double memory_bandwidth = 0;  // bytes/s (HBM)
  double peak_fp8_flops = 0;    // dense FP8 (e4m3) FLOP/s; 0: no FP8 tensor cores
  double hbm_bytes = 0;         // HBM capacity (bytes); 0: not known (no memory check)
};

// A100, H100, H800, H200, B200 (SXM, dense bf16).
const std::vector<GpuSpec>& gpu_catalogue();
// Throws mfabric::Error listing the known GPUs.
const GpuSpec& find_gpu(const std::string& name);

// Fraction of peak FLOP/s each op class reaches (documented defaults in docs/workload.md).
struct Efficiency {
  double attention = 0.45;
  double dense_gemm = 0.6;   // projections, dense FFN, shared experts, LM head, router
  double expert_gemm = 0.5;  // routed experts (grouped GEMM)
};

// Bytes an Adam step with mixed precision moves per parameter (Megatron-LM's optimizer without
// sharding): reads the fp32 master weight, fp32 gradient and both fp32 moments (16 bytes), writes
// the master weight and the moments (12) and the bf16 weight (2).
inline constexpr double kOptimizerBytesPerParam = 30;

struct ComputeShape {
  int micro_batch = 8;
  int seq = 4096;
  int tp = 1;
  // The GPUs each routed expert is split over (expert tensor parallelism); 0: tp, as the paper's
  // convention splits them.
  int etp = 0;
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // FP8 GEMMs (workload.precision: fp8): the attention projections, the routed, shared and dense
  // FFNs run at the measured FP8 speed of their shape; the attention core, router, LM head,
  // permutation and optimizer stay in bf16 (as DeepSeek-V3 and Transformer Engine run them).
  bool fp8 = false;
  // Context parallelism: each GPU holds micro_batch x seq / cp of the tokens (every op's tokens),
  // its queries attending to the whole sequence's keys (1/cp of the attention core).
  int cp = 1;
};

struct KernelCalibration;
struct KernelShape;
class KernelModel;

class ComputeModel {
 public:
  // With `kernels` (a calibration's measured tables, kernel_model.h; kept by the caller), each op
  // is timed as the kernel model's ops of its shape: projections and the router as dense GEMMs,
  // the attention core, FFNs as expert loops, the permutation; the roofline with `eff` otherwise.
  ComputeModel(const ModelSpec& model, const GpuSpec& gpu, const Efficiency& eff,
               const ComputeShape& shape, const KernelCalibration* kernels = nullptr);

  // Forward FLOPs per micro-batch for the whole TP group (not yet divided by TP).
  double attention_flops() const;
  double router_flops() const;
  double expert_flops(std::int64_t token_assignments) const;
  double shared_expert_flops() const;
  double dense_ffn_flops() const;
  double lm_head_flops() const;

  // Time on one GPU (TP share) for the phase (backward = 2x forward).
  Time attention(Phase phase) const;
  Time router(Phase phase) const;
  // token_assignments: token-expert pairs this GPU's TP group computes (all its local experts).
  Time experts(std::int64_t token_assignments, int local_experts, Phase phase) const;
  Time shared_experts(Phase phase) const;
  Time dense_ffn(Phase phase) const;
  Time lm_head(Phase phase) const;
  // The MoE layer's token permutation around the experts (top-k, sort by expert, gather, and the
  // weighted scatter back), all of it: this GPU's tokens, its TP slice of each (the slice the
  // all-to-all carries).
  Time permutation(Phase phase) const;
  // The optimizer step over `params` parameters held by this GPU (its TP share already taken),
  // kOptimizerBytesPerParam each, at `efficiency` of HBM bandwidth (memory-bound).
  Time optimizer_step(std::int64_t params, double bytes_per_param, double efficiency) const;

  const ModelSpec& model() const { return model_; }
  const GpuSpec& gpu() const { return gpu_; }
  const ComputeShape& shape() const { return shape_; }

 private:
  // How much faster an FP8 GEMM of `in` x `out` over `tokens` rows runs than bf16, from the
  // kernel tables (their DenseFp8 and Dense fits) or, without measurements, the GPU's peak ratio;
  // at least 1.
  double fp8_speedup(std::int64_t in, std::int64_t out, std::int64_t tokens) const;
  // A GEMM kernel's time, in FP8 when the shape says so.
  Time gemm(const KernelShape& s, Phase phase) const;
  // Over `split` GPUs (0: TP).
  Time roofline(double flops, double bytes, double efficiency, Phase phase, int split = 0) const;
  // An FFN every token of the micro-batch passes through (shared experts, dense FFN).
  Time all_tokens_ffn(std::int64_t params, double flops, Phase phase) const;

  // The kernel model's time of `shape` in `phase` (kernels_ set).
  Time kernel(const KernelShape& shape, Phase phase) const;
  Time measured_attention(Phase phase) const;
  std::int64_t tokens() const;  // of the micro-batch
  std::int64_t tp_share(std::int64_t n) const;
  KernelShape dense_shape(std::int64_t in, std::int64_t out, std::int64_t tokens) const;
  KernelShape ffn_shape(std::int64_t width, std::int64_t count, std::int64_t tokens) const;

  ModelSpec model_;
  GpuSpec gpu_;
  Efficiency eff_;
  ComputeShape shape_;
  const KernelCalibration* kernels_ = nullptr;
  // Built once (a kernel lookup per task of a large job adds up); shared, so that the model copies.
  std::shared_ptr<const KernelModel> kernel_model_;
};

// Measured durations replacing the model's: CSV with a header line
//   op,layer,phase,duration
//   attention,*,fwd,1.2ms
//   experts,3,bwd,4ms
// op is an Op name (attention, router, experts, shared-experts, dense-ffn, lm-head), layer a
// global layer index or *, phase fwd or bwd, duration a time with unit. A specific layer wins over
// *. Throws mfabric::Error naming the file, line and field.
class ComputeReplay {
 public:
  static ComputeReplay load(const std::string& path);
  // The measured duration, or nullptr-like absence.
  const Time* find(Op op, int layer, Phase phase) const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Key {
    Op op;
    int layer;  // -1 = any
    Phase phase;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, Time> entries_;
};

}  // namespace mfabric::workload
