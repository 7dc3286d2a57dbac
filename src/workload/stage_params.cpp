#include "workload/stage_params.h"

namespace mfabric::workload {

std::int64_t layer_dense_params(const ModelSpec& m, int layer) {
  return m.attention_params_per_layer() + (m.is_moe_layer(layer)
                                               ? m.router_params() + m.shared_expert_params()
                                               : m.dense_ffn_params());
}

std::int64_t layer_expert_params(const ModelSpec& m, int ep, int layer) {
  return m.is_moe_layer(layer) ? std::int64_t{m.experts / ep} * m.expert_params() : 0;
}

std::int64_t stage_embedding_params(const ModelSpec& m, int pp, int stage) {
  const std::int64_t embedding = static_cast<std::int64_t>(m.vocab) * m.hidden;
  return (stage == 0 ? embedding : 0) + (stage == pp - 1 ? embedding : 0);
}

std::int64_t stage_dense_params(const ModelSpec& m, const RankLayout& layout, int stage) {
  std::int64_t params = stage_embedding_params(m, layout.spec().pp, stage);
  for (int l : layout.layers_of_stage(stage))
    params += layer_dense_params(m, l);
  return params;
}

std::int64_t stage_expert_params(const ModelSpec& m, const RankLayout& layout, int stage) {
  std::int64_t params = 0;
  for (int l : layout.layers_of_stage(stage))
    params += layer_expert_params(m, layout.spec().ep, l);
  return params;
}

std::int64_t held_dense_params(const ModelSpec& m, const RankLayout& layout, int stage,
                               int mirror) {
  return stage_dense_params(m, layout, stage) +
         (mirror != stage ? stage_dense_params(m, layout, mirror) : 0);
}

std::int64_t held_expert_params(const ModelSpec& m, const RankLayout& layout, int stage,
                                int mirror) {
  return stage_expert_params(m, layout, stage) +
         (mirror != stage ? stage_expert_params(m, layout, mirror) : 0);
}

}  // namespace mfabric::workload
