// Model FLOPs of training, as Megatron-LM counts them (num_floating_point_operations in
// megatron/training/training.py): the FLOPs the model needs, whatever the run does on top
// (recomputed activations, padding, the router, norms and elementwise ops are not counted).
// What MFU divides by the GPU's peak. Formula and worked numbers: docs/workload.md, "Model FLOPs".
//
// Forward FLOPs of one token of a sequence of `seq` tokens (2 FLOPs per multiply-add):
//   2 x the weights its matmuls touch: every layer's attention projections (ModelSpec's
//       attention_params_per_layer: q, k, v, o, or MLA's low-rank projections with their latent
//       norms, as Megatron counts them), top_k routed experts and the shared experts of each MoE
//       layer, the FFN of each dense layer, and the LM head (hidden x vocab, unpadded);
//   + per layer the attention core, Q K^T and P V over half the seq x seq square (the causal
//       mask: Megatron's "only half of the mask is non-zero"): 2 x seq x heads x head_dim for
//       mha/gqa, seq x heads x (qk_nope + qk_rope + v) for mla.
// Training = 3 x forward (forward, and the backward's data and weight gradients).
#pragma once

#include "workload/model.h"

namespace mfabric::workload {

// Forward, backward data gradient, backward weight gradient: each GEMM three times.
inline constexpr double kTrainingFlopsPerForward = 3;

// One token's forward FLOPs, in the two parts the formula adds.
struct TokenFlops {
  double matmuls = 0;         // 2 x the weights the token's matmuls touch
  double attention_core = 0;  // scores and weighted sum, all layers
  double forward() const { return matmuls + attention_core; }
  double training() const { return kTrainingFlopsPerForward * forward(); }
};

// Throws mfabric::Error naming "seq" for seq < 1.
TokenFlops flops_per_token(const ModelSpec& model, int seq);
// Model FLOPs of training `tokens` tokens (sequences of `seq`): tokens x training FLOPs per token.
double training_flops(const ModelSpec& model, int seq, double tokens);

}  // namespace mfabric::workload
