// The per-GPU memory estimate (workload/gpu_memory.h): every figure worked out by hand from the
// tiny model's shape, in the comments above it.
#include "workload/gpu_memory.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "workload/stage_params.h"
#include "workload/tiny_model.h"

namespace mfabric::workload {
namespace {

// The tiny model (tests/workload/tiny_model.h): 4 layers, hidden 64, MHA of 4 heads of 16, the
// first layer dense (gated FFN 128), the others MoE of 4 gated experts of 32, top-2, vocab 1000.
// TP 1, PP 2, EP 2, DP 1, micro-batch 1 x seq 16, 4 micro-batches, 1F1B.
TrainingSpec tiny_job() {
  return testing::tiny_job(paper_parallelism(1, 2, 2, 1), 4, 1, 16, 4);
}

// Parameters: attention 4 x 64 x 64 = 16,384 per layer; router 64 x 4 = 256; dense FFN
// 3 x 64 x 128 = 24,576; an expert 3 x 64 x 32 = 6,144, two local experts per EP rank 12,288;
// embedding and head 1000 x 64 = 64,000 each.
// Stage 0 (layers 0 and 1): dense 64,000 + 40,960 + 16,640 = 121,600, experts 12,288: 133,888
// parameters, weights x 2 = 267,776 bytes, gradients x 4 = 535,552, optimizer x 12 = 1,606,656.
// Activations (T = 16 tokens, bytes): attention 2 x 16 x (2 x 64 + 4 x 64) = 12,288; the dense
// layer's FFN part 2 x 16 x 64 + 2 x 16 x (64 + 2 x 128 + 128) = 2,048 + 14,336; a MoE layer's
// 2,048 (norm) + 4 x 16 x 4 = 256 (router logits) + 2 x 32 x (64 + 2 x 32 + 32) = 10,240 (32
// token copies): layer 0 28,672, a MoE layer 24,832; stage 0 53,504 per micro-batch, 2 kept
// (1F1B, PP 2): 107,008. All-to-all buffers 4 x 2 x 2 x 16 x 64 = 16,384. Total 2,533,376.
// Stage 1 (layers 2, 3 and the head): 121,856 parameters (243,712 + 487,424 + 1,462,272),
// activations 49,664 + 2 x 16 x 64 + 4 x 16 x 1000 = 115,712 for its 1 micro-batch, 2,325,504
// in all: stage 0 needs the most.
TEST(GpuMemory, TinyJobByHand) {
  const GpuMemory g = gpu_memory(tiny_job());
  EXPECT_EQ(g.stage, 0);
  EXPECT_EQ(g.micro_batches_kept, 2);
  EXPECT_EQ(g.weights.count(), 267'776);
  EXPECT_EQ(g.gradients.count(), 535'552);
  EXPECT_EQ(g.optimizer.count(), 1'606'656);
  EXPECT_EQ(g.activations.count(), 107'008);
  EXPECT_EQ(g.buffers.count(), 16'384);
  EXPECT_EQ(g.total().count(), 2'533'376);
  EXPECT_EQ(g.capacity.count(), 80'000'000'000);
  EXPECT_TRUE(g.fits());
}

// ZeRO-1 shards the stage's dense optimizer states over its EP x DP = 2 ranks, the experts' over
// DP = 1: (121,600 / 2 + 12,288) x 12 = 877,056. Full recomputation keeps each layer's input
// (2 micro-batches x 2 layers x 2,048) and one layer at a time (the dense one, 28,672): 36,864.
// GPipe keeps all 4 micro-batches: stage 1 then needs the most, 243,712 + 487,424 + 1,462,272
// + 4 x 115,712 + 16,384 = 2,672,640.
TEST(GpuMemory, DistributedOptimizerRecomputationAndGPipe) {
  const GpuMemory zero = gpu_memory(tiny_job(), {.zero_stage = 1});
  EXPECT_EQ(zero.optimizer.count(), 877'056);
  const GpuMemory recompute = gpu_memory(tiny_job(), {.recompute = Recompute::Full});
  EXPECT_EQ(recompute.activations.count(), 36'864);
  TrainingSpec gpipe = tiny_job();
  gpipe.schedule = PipelineSchedule::GPipe;
  const GpuMemory g = gpu_memory(gpipe);
  EXPECT_EQ(g.stage, 1);
  EXPECT_EQ(g.micro_batches_kept, 4);
  EXPECT_EQ(g.total().count(), 2'672'640);
  EXPECT_THROW(gpu_memory(tiny_job(), {.zero_stage = 3}), Error);
}

// Against Korthikanti et al. (MLSys 2023), Table 2: a GPT layer keeps 34 s b h bytes without
// parallelism, of which 5 a s / h go with flash attention and 2 are dropout masks (none here):
// 32 per token and hidden element. A GPT with a plain 4h FFN, hidden 64, 16 tokens, two dense
// layers and a MoE one (a model needs one) over PP 3: stage 0 holds layer 0 alone for the 3
// micro-batches 1F1B keeps there, 3 x 32 x 16 x 64 bytes. It needs the most: 113,152 parameters
// (embedding 64,000, attention 16,384, FFN 2 x 64 x 256) x 18 bytes, its activations and the
// all-to-all buffers 4 x 2 x 16 x 64 against the last stage's 88,704 parameters and 1 micro-batch.
TEST(GpuMemory, DenseLayerMatchesKorthikantiWithoutDropout) {
  TrainingSpec spec = tiny_job();
  spec.model = parse_model(
      "name: gpt\nlayers: 3\nhidden: 64\nattention: {kind: mha, heads: 4}\nffn_dense: 256\n"
      "ffn_expert: 32\nexperts: 2\ntop_k: 1\ndense_layers: 2\nvocab: 1000\ngated_ffn: false\n",
      "gpt.yaml");
  spec.parallelism = paper_parallelism(1, 3, 1, 1);
  const GpuMemory g = gpu_memory(spec);
  ASSERT_EQ(g.stage, 0);
  EXPECT_EQ(g.micro_batches_kept, 3);
  EXPECT_EQ(g.activations.count(), 3 * 32 * 16 * 64);
  EXPECT_EQ(g.weights.count() + g.gradients.count() + g.optimizer.count(), 113'152 * 18);
  // Selective recomputation drops the two norms' outputs (the QKV projection's and the FFN's
  // input, h each): 32 - 2 x 2 = 28 bytes per token and hidden element (no MLA, no experts
  // on this stage).
  const GpuMemory selective = gpu_memory(spec, {.recompute = Recompute::Selective});
  EXPECT_EQ(selective.activations.count(), 3 * 28 * 16 * 64);
  // Under FP8 the GEMMs' inputs (the norms' outputs, the attention output, the FFN activation's
  // output: h + h + h + 4h) are kept as e4m3 with a fp32 scale per 128, 1.03125 bytes; the
  // residual, q, k, v and the first FFN GEMM's output (h + 3h + h + 4h) stay bf16:
  // 2 x 9 + 1.03125 x 7 = 25.21875 bytes per token and hidden element.
  const GpuMemory fp8 = gpu_memory(spec, {.fp8 = true});
  EXPECT_EQ(fp8.activations.count(), 3 * 16 * 64 * 25.21875);
}

// On a MoE layer selective recomputation also drops each routed copy's activation output (f / TP
// elements) and, under MLA, the up-projected q, k and v. By hand per micro-batch of n tokens: a
// MoE layer saves the attention norm's output 2 n h / TP and 2 top_k n f / TP; a dense layer
// both norms' outputs, 2 x 2 n h / TP.
TEST(GpuMemory, SelectiveRecomputationDropsMoeActivationOutputs) {
  const TrainingSpec spec = tiny_job();
  const GpuMemory all = gpu_memory(spec);
  const GpuMemory selective = gpu_memory(spec, {.recompute = Recompute::Selective});
  const double n = static_cast<double>(spec.tokens_per_micro_batch());
  const double t = spec.parallelism.tp;
  const ModelSpec& m = spec.model;
  ASSERT_EQ(all.stage, selective.stage);
  ASSERT_EQ(m.shared_experts, 0);
  double saved = 0;
  const RankLayout layout(spec.parallelism, m, spec.gpus_per_server);
  for (int l : layout.layers_of_stage(all.stage)) {
    saved += m.is_moe_layer(l) ? 2 * n * m.hidden / t + 2 * m.top_k * n * m.ffn_expert / t
                               : 2 * 2 * n * m.hidden / t;
  }
  ASSERT_GT(saved, 0);
  EXPECT_DOUBLE_EQ(static_cast<double>(all.activations.count() - selective.activations.count()),
                   all.micro_batches_kept * saved);
}

// A job over the GPU's HBM is refused with the breakdown and the way to run it anyway.
TEST(GpuMemory, CheckRefusesAJobOverTheGpusMemory) {
  TrainingSpec spec = tiny_job();
  EXPECT_NO_THROW(check_gpu_memory(gpu_memory(spec), spec));
  spec.gpu.hbm_bytes = 1e6;
  const GpuMemory g = gpu_memory(spec);
  ASSERT_FALSE(g.fits());
  try {
    check_gpu_memory(g, spec);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "workload");
    const std::string what = e.what();
    EXPECT_NE(what.find(memory_text(g)), std::string::npos) << what;
    EXPECT_NE(what.find("--ignore-gpu-memory"), std::string::npos) << what;
    EXPECT_NE(what.find("recompute: selective or full"), std::string::npos) << what;
  }
}

// DualPipe (PP 2, 4 micro-batches): each stage holds both stages' parameters, and at its peak
// three micro-batches' activations, PP + 1 (DeepSeek-V3, Table 2): stage 0 has run the forwards
// of 0 and 2 (one each way), then 1 before its first backward: 2 x 53,504 (its own layers) +
// 115,712 (stage 1's layers and the loss, for micro-batch 2) = 222,720 bytes.
TEST(GpuMemory, DualPipeHoldsBothStagesParametersAndPpPlusOneMicroBatches) {
  TrainingSpec spec = tiny_job();
  spec.schedule = PipelineSchedule::DualPipe;
  spec.overlap.ep_comm = true;
  const GpuMemory g = gpu_memory(spec);
  EXPECT_EQ(g.stage, 0);
  EXPECT_EQ(g.micro_batches_kept, 3);
  EXPECT_EQ(g.activations.count(), 222'720);
  const RankLayout layout(spec.parallelism, spec.model, spec.gpus_per_server);
  std::int64_t both = 0;
  for (int s : {0, 1})
    both += stage_dense_params(spec.model, layout, s) + stage_expert_params(spec.model, layout, s);
  EXPECT_EQ(g.weights.count(), both * 2);
  EXPECT_EQ(g.gradients.count(), both * 4);
  EXPECT_EQ(g.optimizer.count(), both * 12);
}

TEST(GpuMemory, TextNamesEveryPart) {
  const std::string text = memory_text(gpu_memory(tiny_job()));
  EXPECT_EQ(text,
            "0.0 GB of 80.0 GB on stage 0's GPUs: weights 0.0 GB, gradients 0.0 GB, optimizer "
            "states 0.0 GB, activations of 2 micro-batches 0.0 GB, all-to-all buffers 0.0 GB");
}

}  // namespace
}  // namespace mfabric::workload
