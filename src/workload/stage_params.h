// The parameters a pipeline stage's GPUs hold: what their gradients reduce, their optimizer step
// reads and their HBM keeps (the whole TP group's: a GPU holds its 1/TP share).
#pragma once

#include <cstdint>

#include "workload/model.h"
#include "workload/parallelism.h"

namespace mfabric::workload {

// One layer's dense parameters: attention, and the router and shared experts of a MoE layer or
// the FFN of a dense one.
std::int64_t layer_dense_params(const ModelSpec& m, int layer);
// One layer's routed experts local to one EP rank (experts / ep of them); 0 in a dense layer.
std::int64_t layer_expert_params(const ModelSpec& m, int ep, int layer);
// The input embedding on the first stage, the (untied) output head on the last.
std::int64_t stage_embedding_params(const ModelSpec& m, int pp, int stage);
// A stage's dense parameters (its layers' and embeddings') and its local experts'.
std::int64_t stage_dense_params(const ModelSpec& m, const RankLayout& layout, int stage);
std::int64_t stage_expert_params(const ModelSpec& m, const RankLayout& layout, int stage);
// What a GPU of `stage` holds when it also runs stage `mirror`'s layers (DualPipe's second copy,
// VirtualPipeline::mirror; mirror == stage: its own only).
std::int64_t held_dense_params(const ModelSpec& m, const RankLayout& layout, int stage, int mirror);
std::int64_t held_expert_params(const ModelSpec& m, const RankLayout& layout, int stage,
                                int mirror);

}  // namespace mfabric::workload
