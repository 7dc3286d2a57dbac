// Model FLOPs by Megatron-LM's accounting (workload/model_flops.h): each expectation worked out
// by hand from the model's published shape, in the comment above it.
#include "workload/model_flops.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "workload/model.h"
#include "workload/tiny_model.h"

namespace mfabric::workload {
namespace {

// Mixtral 8x7B (config.json of mistralai/Mixtral-8x7B-v0.1): 32 layers, hidden 4096, GQA with
// 32 query heads and 8 key/value heads of 128, 8 experts of SwiGLU FFN 14336, top-2, vocab
// 32000. Per token and layer:
//   attention  q and o 4096 x 4096 each, k and v 4096 x 1024 each  = 41,943,040 weights
//   experts    2 x 3 x 4096 x 14336                                 = 352,321,536 weights
// 32 layers: 32 x 394,264,576 = 12,616,466,432; LM head 4096 x 32000 = 131,072,000;
// in all 12,747,538,432 weights (the published 12.9B active counts the embedding and the
// router too), forward matmuls 2 x that = 25,495,076,864 FLOPs.
// Attention core at seq 4096: Q K^T and P V, 2 FLOPs per multiply-add over half the square,
// 2 x 2 x 4096 / 2 x 32 x 128 = 33,554,432 per layer, 1,073,741,824 over 32 layers.
// Forward 26,568,818,688; training 3 x that = 79,706,456,064 FLOPs per token.
TEST(ModelFlops, Mixtral8x7bPerTokenByHand) {
  const TokenFlops f = flops_per_token(load_model("mixtral-8x7b"), 4096);
  EXPECT_DOUBLE_EQ(f.matmuls, 25'495'076'864.0);
  EXPECT_DOUBLE_EQ(f.attention_core, 1'073'741'824.0);
  EXPECT_DOUBLE_EQ(f.forward(), 26'568'818'688.0);
  EXPECT_DOUBLE_EQ(f.training(), 79'706'456'064.0);
}

// Mixtral 8x22B (config.json of mistralai/Mixtral-8x22B-v0.1), GQA 48 heads over 8 key/value
// heads of 128: 56 layers, hidden 6144, 8 experts of FFN 16384, top-2, vocab 32768.
//   attention  2 x 6144 x 6144 + 2 x 6144 x 1024 = 88,080,384 weights per layer
//   experts    2 x 3 x 6144 x 16384             = 603,979,776 weights per layer
// 56 x 692,060,160 + 6144 x 32768 = 38,755,368,960 + 201,326,592 = 38,956,695,552 weights
// (published: 39B active), matmuls 77,913,391,104. Core at seq 4096: 2 x 4096 x 48 x 128 =
// 50,331,648 per layer, 2,818,572,288 in all. Forward 80,731,963,392.
TEST(ModelFlops, GqaModelByHand) {
  const TokenFlops f = flops_per_token(load_model("mixtral-8x22b"), 4096);
  EXPECT_DOUBLE_EQ(f.matmuls, 77'913'391'104.0);
  EXPECT_DOUBLE_EQ(f.attention_core, 2'818'572'288.0);
  EXPECT_DOUBLE_EQ(f.forward(), 80'731'963'392.0);
}

// DeepSeek-R1 (the DeepSeek-V3 architecture): 61 layers, hidden 7168, MLA with 128 heads,
// q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128; the first 3 layers dense (FFN
// 18432), the other 58 with 8 of 256 routed experts and 1 shared expert, all of FFN 2048;
// vocab 129280. Weights a token's matmuls touch, as Megatron's MLA terms count them:
//   q   1536 x (7168 + 128 x (128 + 64) + 1)           = 48,760,320 (down, norm, up)
//   kv  512 x (7168 + 128 x (128 + 128) + 1) + 7168 x 64 = 20,906,496 (down, norm, up, rope key)
//   o   128 x 128 x 7168                               = 117,440,512
//   attention 187,107,328 per layer, x 61 = 11,413,547,008
//   dense FFN 3 x 7168 x 18432 = 396,361,728, x 3 = 1,189,085,184
//   MoE FFN (8 + 1) x 3 x 7168 x 2048 = 396,361,728, x 58 = 22,988,980,224
//   LM head 7168 x 129280 = 926,679,040
// In all 36,518,291,456 (the published 37B active counts the embedding too), matmuls
// 73,036,582,912. Core at seq 4096, causal half: 4096 / 2 x 128 x (2 x (128 + 64) + 2 x 128) =
// 167,772,160 per layer, 10,234,101,760 over 61. Forward 83,270,684,672; training
// 249,812,054,016.
TEST(ModelFlops, MlaModelByHand) {
  const TokenFlops f = flops_per_token(load_model("deepseek-r1"), 4096);
  EXPECT_DOUBLE_EQ(f.matmuls, 73'036'582'912.0);
  EXPECT_DOUBLE_EQ(f.attention_core, 10'234'101'760.0);
  EXPECT_DOUBLE_EQ(f.training(), 249'812'054'016.0);
}

// The tiny model (tiny_model.h): 4 layers, hidden 64, MHA 4 heads of 16, the first layer dense
// (FFN 128), the others 2 of 4 experts of FFN 32, vocab 1000.
//   attention 4 x 64 x 64 = 16,384 per layer, x 4 = 65,536
//   gated: dense 3 x 64 x 128 = 24,576; MoE 2 x 3 x 64 x 32 = 12,288, x 3 = 36,864
//   plain: dense 2 x 64 x 128 = 16,384; MoE 2 x 2 x 64 x 32 = 8,192, x 3 = 24,576
//   LM head 64 x 1000 = 64,000
// Gated 190,976 weights, matmuls 381,952; plain 170,496, matmuls 340,992. Core at seq 100:
// 2 x 100 x 4 x 16 = 12,800 per layer, 51,200 over 4.
TEST(ModelFlops, MhaDenseLayersAndPlainFfnByHand) {
  const ModelSpec gated = testing::tiny_model();
  EXPECT_DOUBLE_EQ(flops_per_token(gated, 100).matmuls, 381'952.0);
  EXPECT_DOUBLE_EQ(flops_per_token(gated, 100).attention_core, 51'200.0);
  const ModelSpec plain =
      parse_model(std::string(testing::kTinyModelYaml) + "gated_ffn: false\n", "plain.yaml");
  EXPECT_DOUBLE_EQ(flops_per_token(plain, 100).matmuls, 340'992.0);
  EXPECT_DOUBLE_EQ(flops_per_token(plain, 100).attention_core, 51'200.0);
}

// Training is 3 x forward (no recomputation counted); the core grows with the sequence, the
// matmuls do not; training_flops is tokens x the per-token training FLOPs.
TEST(ModelFlops, TrainingIsThreeForwardsAndScalesWithTokens) {
  for (const std::string& name : model_names()) {
    const ModelSpec m = load_model(name);
    const TokenFlops f = flops_per_token(m, 4096);
    EXPECT_DOUBLE_EQ(f.training(), 3 * f.forward()) << name;
    const TokenFlops longer = flops_per_token(m, 8192);
    EXPECT_DOUBLE_EQ(longer.matmuls, f.matmuls) << name;
    EXPECT_DOUBLE_EQ(longer.attention_core, 2 * f.attention_core) << name;
    EXPECT_DOUBLE_EQ(training_flops(m, 4096, 1000), 1000 * f.training()) << name;
  }
  EXPECT_THROW(flops_per_token(testing::tiny_model(), 0), Error);
}

}  // namespace
}  // namespace mfabric::workload
