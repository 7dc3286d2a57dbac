// MoE model architectures. The zoo ships as YAML files in data/models/ (compiled into the binary,
// so mfabric runs from anywhere); a user's YAML file in the same format works wherever a model
// name does. Format: docs/workload.md, "Model files".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mfabric::workload {

struct AttentionSpec {
  std::string kind = "gqa";  // "mha", "gqa" (grouped-query) or "mla" (DeepSeek latent attention)
  int heads = 0;
  int kv_heads = 0;  // gqa: key/value heads; mha and mla: = heads
  int head_dim = 0;  // per head; default hidden / heads; mla: qk_nope + qk_rope (derived)
  // mla only (DeepSeek-V2/V3): low-rank query/key-value projections.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

// A model's default training job, from a public recipe or report (the model file's `recipe`,
// docs/workload.md, "Recipes"); what a job that names the model and no degrees runs.
struct Recipe {
  std::string source;  // where the figures come from (a citation)
  std::string gpu;     // the GPU it was published for, "" if none
  int gpus = 0;        // the GPUs it was published for, 0 if none
  std::string convention = "megatron";
  int tp = 1, pp = 1, vp = 1, ep = 1, etp = 1, cp = 1;
  int micro_batch = 1;
  int global_batch = 0;
  int seq = 4096;
  std::string precision = "bf16";       // "bf16" or "fp8"
  bool distributed_optimizer = false;   // ZeRO-1 (Megatron-LM's --use-distributed-optimizer)
  std::string dispatcher = "alltoall";  // "alltoall" or "deepep" (workload/training.h)
  std::string recompute = "none";       // "none", "selective" or "full" (workload/training.h)
  std::string schedule = "1f1b";        // "1f1b", "interleaved" or "dualpipe"
  // Megatron-LM's pipeline split (workload/parallelism.h, PipelineSplit).
  int first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_in_split = false, loss_in_split = false;
  // "forced" when the recipe's published figures come from force-balanced routing, "" otherwise.
  std::string routing_balance;
  // Tokens go to experts on at most this many nodes (DeepSeek-V3's M = 4); 0: no limit.
  int max_nodes_per_token = 0;
};

struct ModelSpec {
  std::string name;
  std::string description;
  // Other names it answers to ("deepseek-v3" for deepseek-r1: the same architecture).
  std::vector<std::string> aliases;
  std::optional<Recipe> recipe;
  int layers = 0;
  int hidden = 0;
  AttentionSpec attention;
  int ffn_dense = 0;       // FFN width of dense layers (0 if every layer is MoE)
  int ffn_expert = 0;      // FFN width of one routed expert
  int experts = 0;         // routed experts per MoE layer
  int top_k = 0;           // routed experts per token
  int shared_experts = 0;  // always-active experts per MoE layer
  int ffn_shared = 0;      // FFN width of one shared expert (default ffn_expert)
  int dense_layers = 0;    // the first dense_layers layers are dense, the rest MoE
  int vocab = 0;
  int dtype_bytes = 2;    // bytes per activation / parameter element (bf16)
  bool gated_ffn = true;  // SwiGLU (3 matrices) vs plain (2 matrices)

  bool is_moe_layer(int layer) const { return layer >= dense_layers; }
  int moe_layers() const { return layers - dense_layers; }

  // Parameter counts (elements), for gradient all-reduces and the summary.
  std::int64_t attention_params_per_layer() const;
  std::int64_t expert_params() const;         // one routed expert
  std::int64_t shared_expert_params() const;  // all shared experts of one layer
  std::int64_t dense_ffn_params() const;      // the FFN of one dense layer
  std::int64_t router_params() const;         // one MoE layer's gate
  std::int64_t total_params() const;          // including embeddings and head
};

// Names of the shipped models, in zoo order.
std::vector<std::string> model_names();
// A shipped model by name, or a YAML file when `name_or_path` names an existing file (or ends
// in .yaml/.yml). Throws mfabric::Error naming the model/file, field and expectation.
ModelSpec load_model(const std::string& name_or_path);
// Parses and validates one model from YAML text; `source` names it in errors.
ModelSpec parse_model(const std::string& yaml_text, const std::string& source);

}  // namespace mfabric::workload
