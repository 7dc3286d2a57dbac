#include "workload/gpu_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "workload/stage_params.h"
#include "workload/training_schedule.h"

namespace mfabric::workload {
namespace {

// Activation bytes one layer keeps for its backward, per micro-batch of `tokens` tokens on one
// GPU of a TP group of `tp` (sequence parallelism: what is not split by TP is split by
// sequence). Counted tensor by tensor as Korthikanti et al. ("Reducing Activation Recomputation
// in Large Transformer Models", MLSys 2023) count them, with flash attention (no seq x seq
// scores kept) and no dropout: for a dense GPT layer (4h FFN) this gives 32 bytes per token and
// hidden element against their 34 (their 2 are dropout masks). Routed experts: the token-expert
// pairs the GPU computes, k x tokens on average (a busier GPU keeps more: docs/workload.md).
// Selective recomputation (MemoryOptions::recompute) leaves out what it recomputes: the norms'
// outputs (a projection's or FFN's input of h elements), MLA's q, k and v (recomputed from the
// latents), and the routed experts' activation outputs. Under FP8 (MemoryOptions::fp8) a linear
// layer keeps the FP8 copy of its input its GEMM ran on (Transformer Engine does; DeepSeek-V3,
// section 3.3.3), e4m3 with a fp32 scale per 128 elements, and the routed experts' SwiGLU inputs
// are kept in FP8 (DeepSeek-V3, section 3.3.3); the rest stays bf16.
double layer_activation_bytes(const ModelSpec& m, int layer, double tokens, int tp, bool selective,
                              bool fp8) {
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
  // Bytes per element: a GEMM's input, and everything else.
  const double in = fp8 ? kFp8DispatchBytesPerElement : 2;
  const double b = 2;
  // The norm's input (the residual stream), its output (the projections' input), the latents
  // (the up-projections' input), q, k, v, and the attention output (the output projection's
  // input).
  const double norm_output = selective ? 0 : h;
  const double up_projected = selective && a.kind == "mla" ? 0 : q + k + v;
  double bytes = tokens / t * (b * h + in * (norm_output + latents + o) + b * up_projected);
  const double gated = m.gated_ffn ? 1 : 0;
  // An FFN of width f over n tokens keeps its input, the first GEMM's output (2f gated) and the
  // activation's output (the second GEMM's input); f split by TP. An FFN whose input is the
  // norm's output (dense, shared experts) keeps it only without selective recomputation; the
  // routed experts' input is the permuted copies, always kept.
  const auto ffn = [&](double n, double f, double input, double activation_output,
                       double activation_input_bytes) {
    return n * (in * input + activation_input_bytes * (1 + gated) * f / t + in * activation_output);
  };
  if (m.is_moe_layer(layer)) {
    bytes += b * tokens / t * h;          // the norm's input
    bytes += 4 * tokens / t * m.experts;  // router logits, fp32
    // Routed token copies; under FP8 DeepSeek-V3 caches their SwiGLU inputs in FP8 too.
    bytes += ffn(m.top_k * tokens, m.ffn_expert, h, selective ? 0 : m.ffn_expert / t, in);
    bytes += m.shared_experts * ffn(tokens, m.ffn_shared, norm_output / t, m.ffn_shared / t, b);
  } else {
    bytes += b * tokens / t * h + ffn(tokens, m.ffn_dense, norm_output / t, m.ffn_dense / t, b);
  }
  return bytes;
}

}  // namespace

MemoryOptions memory_options(const TrainingSpec& spec) {
  return MemoryOptions{.zero_stage = spec.distributed_optimizer ? 1 : 0,
                       .recompute = spec.recompute,
                       .fp8 = spec.precision == Precision::FP8};
}

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
  // What one micro-batch leaves on a GPU of stage `position` for its backward: every layer's
  // activations, or with full recomputation each layer's input; and its largest layer's (what a
  // full recompute holds at once).
  struct Kept {
    double per_micro_batch = 0, largest_layer = 0;
  };
  const auto kept_of = [&](int position) {
    Kept k;
    for (int l : layout.layers_of_stage(position)) {
      const double layer = layer_activation_bytes(
          m, l, tokens, p.tp, options.recompute == Recompute::Selective, options.fp8);
      k.per_micro_batch += layer;
      k.largest_layer = std::max(k.largest_layer, layer);
    }
    if (position == p.pp - 1) {
      // The final norm's input and the logits the loss keeps (fp32, vocab split by TP).
      k.per_micro_batch += 2 * tokens / tp * m.hidden + 4 * tokens / tp * m.vocab;
    }
    if (options.recompute == Recompute::Full) {
      k.per_micro_batch = layout.stage_layers(position) * 2 * tokens / tp * m.hidden;
    }
    return k;
  };
  const training::VirtualPipeline pipeline(spec.schedule, p.pp, p.vp);
  const double copies = pipeline.dual() ? 2 : 1;
  GpuMemory best;
  for (int s = 0; s < p.pp; ++s) {
    const int mirror = pipeline.mirror(s);
    const double dense = static_cast<double>(held_dense_params(m, layout, s, mirror)) / tp;
    const double expert =
        static_cast<double>(held_expert_params(m, layout, s, mirror)) / p.expert_tp();
    // ZeRO-1 shards the optimizer over the GPUs holding the same parameters: the dense ones over
    // the stage's dense DP x CP GPUs of a TP rank, the experts over their expert-DP replicas
    // (under DualPipe the mirror stage's too).
    const double dense_shards = options.zero_stage == 1 ? p.dense_dp() * p.cp * copies : 1;
    const double expert_shards = options.zero_stage == 1 ? p.expert_dp() * copies : 1;
    // 1F1B: stage s runs pp - s forwards before its first backward; GPipe every micro-batch;
    // interleaved (Megatron-LM): (pp - s - 1) x 2 + (vp - 1) x pp + 1 chunk forwards, each
    // 1/vp of the stage's layers; with the EP overlap two steps run at once, one step more.
    // DualPipe: the peak of its schedule's forwards in flight, each direction's micro-batches at
    // their position's size (PP + 1 on the first and last stages, the figure of DeepSeek-V3's
    // Table 2: a pair's forward runs before its backward frees).
    double kept = 0, activations = 0;
    const Kept own = kept_of(s);
    double largest_layer = own.largest_layer;
    if (pipeline.dual()) {
      const Kept kept_by[2] = {own, kept_of(mirror)};
      largest_layer = std::max(own.largest_layer, kept_by[1].largest_layer);
      int in_flight[2] = {0, 0};
      for (const training::PipelineStep& step : training::stage_schedule(
               spec.schedule, p.pp, s, micro_batches, 1, spec.overlap.ep_comm)) {
        in_flight[step.chunk] += step.forward ? 1 : -1;
        const double held =
            in_flight[0] * kept_by[0].per_micro_batch + in_flight[1] * kept_by[1].per_micro_batch;
        if (held > activations) {
          activations = held;
          kept = in_flight[0] + in_flight[1];
        }
      }
    } else {
      if (spec.schedule == PipelineSchedule::Interleaved) {
        int chunks = (p.pp - s - 1) * 2 + (p.vp - 1) * p.pp + 1;
        if (spec.overlap.ep_comm) ++chunks;
        kept = static_cast<double>(std::min(chunks, micro_batches * p.vp)) / p.vp;
      } else {
        int steps = spec.schedule == PipelineSchedule::GPipe ? micro_batches : p.pp - s;
        if (spec.overlap.ep_comm) ++steps;
        kept = std::min(steps, micro_batches);
      }
      activations = kept * own.per_micro_batch;
    }
    // Full recomputation: one layer recomputed at a time on top of the layers' inputs.
    if (options.recompute == Recompute::Full) activations += largest_layer;
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

void check_gpu_memory(const GpuMemory& m, const TrainingSpec& spec) {
  if (m.fits()) return;
  // What would lower the figure, in the order a user would try it.
  std::vector<std::string> remedies;
  if (!spec.distributed_optimizer) remedies.emplace_back("distributed_optimizer: true");
  if (spec.recompute != Recompute::Full) {
    remedies.emplace_back(spec.recompute == Recompute::None ? "recompute: selective or full"
                                                            : "recompute: full");
  }
  remedies.emplace_back("more pipeline stages or tensor parallelism, a smaller micro_batch");
  std::string joined;
  for (const std::string& r : remedies)
    joined += (joined.empty() ? "" : "; ") + r;
  throw Error("", "workload",
              fmt::format("the job does not fit the GPU's memory: {} (estimate, docs/workload.md "
                          "\"Memory\"); try {}, or run it anyway with --ignore-gpu-memory "
                          "(simulation.ignore_gpu_memory)",
                          memory_text(m), joined));
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
