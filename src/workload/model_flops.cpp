// Model FLOPs of training by Megatron-LM's accounting (model_flops.h, docs/workload.md,
// "Model FLOPs").
#include "workload/model_flops.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mfabric::workload {

TokenFlops flops_per_token(const ModelSpec& m, int seq) {
  if (seq < 1) throw Error("", "seq", fmt::format("expected a positive integer, got {}", seq));
  // The weights one token's matmuls touch: the parameter counts of model.h, so that the two
  // never disagree on a shape (Megatron's projection terms are these counts: for MLA its "+ 1"
  // per low-rank projection is the latent norm the count holds too).
  const double layer_attention = static_cast<double>(m.attention_params_per_layer());
  const double moe_ffn = m.top_k * static_cast<double>(m.expert_params()) +
                         static_cast<double>(m.shared_expert_params());
  const double weights = m.layers * layer_attention +
                         m.dense_layers * static_cast<double>(m.dense_ffn_params()) +
                         m.moe_layers() * moe_ffn + static_cast<double>(m.hidden) * m.vocab;
  // Attention core per token and layer: Q K^T over the query/key width and P V over the value
  // width, each 2 FLOPs per multiply-add against seq / 2 keys on average (causal).
  const AttentionSpec& a = m.attention;
  const double half_square = seq / 2.0;
  const double core =
      a.kind == "mla"
          ? 2 * half_square * a.heads *
                (static_cast<double>(a.qk_nope_head_dim) + a.qk_rope_head_dim + a.v_head_dim)
          : 2 * 2 * half_square * a.heads * static_cast<double>(a.head_dim);
  return {2 * weights, m.layers * core};
}

double training_flops(const ModelSpec& model, int seq, double tokens) {
  return tokens * flops_per_token(model, seq).training();
}

}  // namespace mfabric::workload
