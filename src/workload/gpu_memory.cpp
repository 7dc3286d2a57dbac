#include "workload/gpu_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "workload/stage_params.h"

namespace mfabric::workload {
namespace {

// Activation bytes one layer keeps for its backward, per micro-batch of `tokens` tokens on one
// GPU of a TP group of `tp` (sequence parallelism: what is not split by TP is split by
// sequence). Counted tensor by tensor as Korthikanti et al. ("Reducing Activation Recomputation
// in Large Transformer Models", MLSys 2023) count them, with flash attention (no seq x seq
// scores kept) and no dropout: for a dense GPT layer (4h FFN) this gives 32 bytes per token and
// hidden element against their 34 (their 2 are dropout masks). Routed experts: the token-expert
// pairs the GPU computes, k x tokens on average (a busier GPU keeps more: docs/workload.md).
double layer_activation_bytes(const ModelSpec& m, int layer, double tokens, int tp) {
  const double h = m.hidden;
  const double t = tp;
  const AttentionSpec& a = m.attention;
  // Query, key, value and attention-output widths (elements per token).
  double q = 0, k = 0, v = 0, o = 0, latents = 0;
  if (a.kind == "mla") {
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    q = k = a.heads * qk;
    v = o = static_cast<double>(a.heads) * a.v_head_dim;
    latents = a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim;
  } else {
    q = o = static_cast<double>(a.heads) * a.head_dim;
    k = v = static_cast<double>(a.kv_heads) * a.head_dim;
  }
  // bf16 elements: the norm's input and the projections' input (2 x h), the latents, q, k, v,
  // and the attention output (the output projection's input).
  double bytes = 2 * tokens / t * (2 * h + latents + q + k + v + o);
  const double gated = m.gated_ffn ? 1 : 0;
  // An FFN of width f over n tokens keeps its input, the first GEMM's output (2f gated) and the
  // activation's output (the second GEMM's input); f split by TP.
  const auto ffn = [&](double n, double f, bool input_split) {
    return 2 * n * ((input_split ? h / t : h) + (1 + gated) * f / t + f / t);
  };
  if (m.is_moe_layer(layer)) {
    bytes += 2 * tokens / t * h;                                  // the norm's input
    bytes += 4 * tokens / t * m.experts;                          // router logits, fp32
    bytes += ffn(m.top_k * tokens, m.ffn_expert, false);          // routed token copies
    bytes += m.shared_experts * ffn(tokens, m.ffn_shared, true);  // shared experts
  } else {
    bytes += 2 * tokens / t * h + ffn(tokens, m.ffn_dense, true);
  }
  return bytes;
}

}  // namespace

GpuMemory gpu_memory(const TrainingSpec& spec, const MemoryOptions& options) {
  if (options.zero_stage != 0 && options.zero_stage != 1) {
    throw Error("", "zero_stage", fmt::format("expected 0 or 1, got {}", options.zero_stage));
  }
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const RankLayout layout(p, m, spec.gpus_per_server);
  const int micro_batches = spec.micro_batches();
  // The tokens of a TP group: the micro-batch's share of its CP rank.
  const double tokens = static_cast<double>(spec.tokens_per_micro_batch()) / p.cp;
  const double tp = p.tp;
  GpuMemory best;
  for (int s = 0; s < p.pp; ++s) {
    const double dense = static_cast<double>(stage_dense_params(m, layout, s)) / tp;
    const double expert = static_cast<double>(stage_expert_params(m, layout, s)) / p.expert_tp();
    // ZeRO-1 shards the optimizer over the GPUs holding the same parameters: the dense ones over
    // the stage's dense DP x CP GPUs of a TP rank, the experts over their expert-DP replicas.
    const double dense_shards = options.zero_stage == 1 ? p.dense_dp() * p.cp : 1;
    const double expert_shards = options.zero_stage == 1 ? p.expert_dp() : 1;
    // 1F1B: stage s runs pp - s forwards before its first backward; GPipe every micro-batch;
    // interleaved (Megatron-LM): (pp - s - 1) x 2 + (vp - 1) x pp + 1 chunk forwards, each
    // 1/vp of the stage's layers; with the EP overlap two steps run at once, one step more.
    double kept = 0;
    if (spec.schedule == PipelineSchedule::Interleaved) {
      int chunks = (p.pp - s - 1) * 2 + (p.vp - 1) * p.pp + 1;
      if (spec.overlap.ep_comm) ++chunks;
      kept = static_cast<double>(std::min(chunks, micro_batches * p.vp)) / p.vp;
    } else {
      int steps = spec.schedule == PipelineSchedule::GPipe ? micro_batches : p.pp - s;
      if (spec.overlap.ep_comm) ++steps;
      kept = std::min(steps, micro_batches);
    }
    double per_micro_batch = 0, largest_layer = 0;
    for (int l : layout.layers_of_stage(s)) {
      const double layer = layer_activation_bytes(m, l, tokens, p.tp);
      per_micro_batch += layer;
      largest_layer = std::max(largest_layer, layer);
    }
    if (s == p.pp - 1) {
      // The final norm's input and the logits the loss keeps (fp32, vocab split by TP).
      per_micro_batch += 2 * tokens / tp * m.hidden + 4 * tokens / tp * m.vocab;
    }
    double activations = kept * per_micro_batch;
    if (options.recompute) {
      // Each layer's input per micro-batch kept, and one layer recomputed at a time.
      activations = kept * layout.stage_layers(s) * 2 * tokens / tp * m.hidden + largest_layer;
    }
    // The all-to-all's send and receive buffers of one MoE layer's dispatch and combine (the
    // GPU's share of k x tokens rows: its tokens under sequence parallelism, or its TP share of
    // every token's hidden state under the paper's convention; the same bytes).
    const double buffers = m.moe_layers() > 0 ? 4 * 2 * m.top_k * tokens * m.hidden / tp : 0;
    GpuMemory g;
    g.stage = s;
    g.micro_batches_kept = kept;
    const auto bytes = [](double b) { return Bytes(static_cast<std::int64_t>(b)); };
    g.weights = bytes((dense + expert) * kWeightBytesPerParam);
    g.gradients = bytes((dense + expert) * kGradientBytesPerParam);
    g.optimizer =
        bytes((dense / dense_shards + expert / expert_shards) * kOptimizerStateBytesPerParam);
    g.activations = bytes(activations);
    g.buffers = bytes(buffers);
    g.capacity = bytes(spec.gpu.hbm_bytes);
    if (s == 0 || g.total() > best.total()) best = g;
  }
  return best;
}

std::string memory_text(const GpuMemory& g) {
  const auto gb = [](Bytes b) {
    return fmt::format("{:.1f} GB", static_cast<double>(b.count()) / 1e9);
  };
  const std::string of = g.capacity.count() > 0 ? fmt::format(" of {}", gb(g.capacity))
                                                : std::string(" (HBM not known)");
  return fmt::format(
      "{}{} on stage {}'s GPUs: weights {}, gradients {}, optimizer states {}, activations of {:g} "
      "micro-batch{} {}, all-to-all buffers {}",
      gb(g.total()), of, g.stage, gb(g.weights), gb(g.gradients), gb(g.optimizer),
      g.micro_batches_kept, g.micro_batches_kept == 1 ? "" : "es", gb(g.activations),
      gb(g.buffers));
}

}  // namespace mfabric::workload
