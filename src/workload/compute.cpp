// Compute model (FLOPs and roofline time per op) and measured-duration replay. Formulas and
// defaults: docs/workload.md, "Compute model".
#include "workload/compute.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/output_text.h"
#include "core/yaml_fields.h"
#include "workload/kernel_model.h"

namespace mfabric::workload {

// ---------------------------------------------------------------------------------------------
// GPUs

const std::vector<GpuSpec>& gpu_catalogue() {
  // Dense (no 2:4 sparsity) bf16 tensor-core peak, HBM bandwidth and HBM capacity of the SXM
  // parts, from the vendor data sheets. H800 is the export variant of H100: same compute and
  // memory, less NVLink (which the fabric, not this model, accounts for). Capacities as the data
  // sheets state them, in GB of 10^9 bytes (an "80GB" H100 shows 81,559 MiB, 85.5e9 bytes, in
  // nvidia-smi: the data sheet's figure is the lower, safer one).
  static const std::vector<GpuSpec> gpus = {
      {"A100", 312e12, 2.039e12, 0, 80e9},       // A100 SXM4 80GB (no FP8)
      {"H100", 989e12, 3.35e12, 1979e12, 80e9},  // H100 SXM5
      {"H800", 989e12, 3.35e12, 1979e12, 80e9},  // H800 SXM5
      {"H200", 989e12, 4.8e12, 1979e12, 141e9},  // H200 SXM (H100 compute, HBM3e)
      {"B200", 2250e12, 8e12, 4500e12, 180e9},   // B200 (HGX B200: 1,440 GB for 8)
  };
  return gpus;
}

const GpuSpec& find_gpu(const std::string& name) {
  std::string known;
  for (const GpuSpec& g : gpu_catalogue()) {
    if (ascii_lower(g.name) == ascii_lower(name)) return g;
    known += (known.empty() ? "" : ", ") + g.name;
  }
  // No field: the caller knows where the name came from (an option, a YAML key) and locates
  // the error with with_context.
  throw Error(fmt::format("unknown GPU {} (known: {})", quote_input(name), known));
}

// ---------------------------------------------------------------------------------------------
// ComputeModel

ComputeModel::ComputeModel(const ModelSpec& model, const GpuSpec& gpu, const Efficiency& eff,
                           const ComputeShape& shape, const KernelCalibration* kernels)
    : model_(model),
      gpu_(gpu),
      eff_(eff),
      shape_(shape),
      kernels_(kernels),
      kernel_model_(std::make_shared<const KernelModel>(gpu, kernels, eff)) {
  const auto positive = [](const char* field, int value) {
    if (value < 1)
      throw Error("", field, fmt::format("expected a positive integer, got {}", value));
  };
  positive("micro_batch", shape.micro_batch);
  positive("seq", shape.seq);
  positive("tp", shape.tp);
  positive("cp", shape.cp);
  // !(x > 0) also catches NaN.
  if (!(gpu.peak_bf16_flops > 0) || !std::isfinite(gpu.peak_bf16_flops)) {
    throw Error("", "gpu.peak_bf16_flops",
                fmt::format("expected a positive FLOP/s, got {}", gpu.peak_bf16_flops));
  }
  if (!(gpu.memory_bandwidth > 0) || !std::isfinite(gpu.memory_bandwidth)) {
    throw Error("", "gpu.memory_bandwidth",
                fmt::format("expected a positive bytes/s, got {}", gpu.memory_bandwidth));
  }
  const std::array<std::pair<const char*, double>, 3> effs{
      {{"efficiency.attention", eff.attention},
       {"efficiency.dense_gemm", eff.dense_gemm},
       {"efficiency.expert_gemm", eff.expert_gemm}}};
  for (const auto& [field, value] : effs) {
    if (!(value > 0 && value <= 1)) {
      throw Error("", field, fmt::format("expected a fraction of peak in (0, 1], got {}", value));
    }
  }
  if (model.hidden < 1 || model.layers < 1 || model.experts < 1) {
    throw Error("", "model",
                fmt::format("model '{}' has no shape (was it validated?)", model.name));
  }
}

namespace {

// Multiply-adds of a gated (SwiGLU) FFN: gate, up and down matrices; a plain FFN has 2.
double ffn_matrices(const ModelSpec& m) {
  return m.gated_ffn ? 3.0 : 2.0;
}

}  // namespace

double ComputeModel::attention_flops() const {
  const double t = static_cast<double>(tokens());  // tokens T (this CP rank's)
  const double seq = shape_.seq;
  const double h = model_.hidden;
  const AttentionSpec& a = model_.attention;
  const double heads = a.heads;
  if (a.kind == "mla") {
    const double nope = a.qk_nope_head_dim;
    const double rope = a.qk_rope_head_dim;
    const double v = a.v_head_dim;
    const double q_lora = a.q_lora_rank;
    const double kv_lora = a.kv_lora_rank;
    // q: down-projection h -> q_lora, up-projection q_lora -> heads x (nope + rope); without a
    // q_lora_rank a direct h -> heads x (nope + rope) projection.
    const double q = a.q_lora_rank > 0 ? t * (2 * h * q_lora + 2 * q_lora * heads * (nope + rope))
                                       : t * 2 * h * heads * (nope + rope);
    // kv: down-projection h -> kv_lora + shared rope key, up-projection kv_lora -> heads x
    // (nope key + value). Training materializes per-head keys and values (no weight absorption,
    // which only pays off for decoding).
    const double kv = t * (2 * h * (kv_lora + rope) + 2 * kv_lora * heads * (nope + v));
    const double o = 2 * t * heads * v * h;
    // Scores q.k over (nope + rope) dims, then the weighted sum of v-dim values; full square.
    const double scores = 2 * t * seq * heads * (nope + rope) + 2 * t * seq * heads * v;
    return q + kv + o + scores;
  }
  const double hd = a.head_dim;
  const double kv_heads = a.kv_heads;
  const double q = 2 * t * h * heads * hd;
  const double kv = 2 * (2 * t * h * kv_heads * hd);  // k and v
  const double o = 2 * t * heads * hd * h;
  // Q K^T and P V, 2 x T x seq x heads x hd each, over the full square (no causal halving:
  // FlashAttention's causal kernels do save about half, which the attention efficiency absorbs;
  // the model FLOPs of MFU count half, as Megatron-LM does: model_flops.h).
  const double scores = 4 * t * seq * heads * hd;
  return q + kv + o + scores;
}

double ComputeModel::router_flops() const {
  const double t = static_cast<double>(tokens());
  return 2 * t * model_.hidden * model_.experts;  // logits: T x hidden x experts
}

double ComputeModel::expert_flops(std::int64_t token_assignments) const {
  // Every token-expert assignment runs the token through one expert FFN.
  return static_cast<double>(token_assignments) * 2 * ffn_matrices(model_) * model_.hidden *
         model_.ffn_expert;
}

double ComputeModel::shared_expert_flops() const {
  const double t = static_cast<double>(tokens());
  return t * model_.shared_experts * 2 * ffn_matrices(model_) * model_.hidden * model_.ffn_shared;
}

double ComputeModel::dense_ffn_flops() const {
  const double t = static_cast<double>(tokens());
  return t * 2 * ffn_matrices(model_) * model_.hidden * model_.ffn_dense;
}

double ComputeModel::lm_head_flops() const {
  const double t = static_cast<double>(tokens());
  return 2 * t * model_.hidden * model_.vocab;
}

Time ComputeModel::roofline(double flops, double bytes, double efficiency, Phase phase,
                            int split) const {
  double factor = 1;
  switch (phase) {
    case Phase::Forward:
      break;
    case Phase::Backward:
      // Gradients with respect to inputs and to weights: two GEMMs of the forward's size each,
      // reading and writing about twice the bytes.
      factor = 2;
      break;
    case Phase::Update:
    case Phase::Other:
      throw Error(
          "", "phase",
          fmt::format("compute time is modelled for fwd and bwd, not {}", to_string(phase)));
  }
  const double tp = split > 0 ? split : shape_.tp;
  const double compute = flops / tp / (gpu_.peak_bf16_flops * efficiency);
  const double memory = bytes / tp / gpu_.memory_bandwidth;
  const double seconds = factor * std::max(compute, memory);
  // Time holds about 107 days in picoseconds; beyond that the shape is nonsense anyway.
  if (seconds >= Time::max().seconds()) return Time::max();
  return Time::from_seconds(seconds);
}

// Bytes moved by each op, for the memory side of the roofline: its weights, its input
// activations and its output activations, all of dtype_bytes per element. Intermediates that
// fused kernels keep on chip (attention scores, the FFN's hidden activations) are not counted.

Time ComputeModel::attention(Phase phase) const {
  if (kernels_) return measured_attention(phase);
  const double t = static_cast<double>(tokens());
  const double d = model_.dtype_bytes;
  const double bytes = static_cast<double>(model_.attention_params_per_layer()) * d +
                       2 * t * model_.hidden * d;  // hidden states in and out
  double flops = attention_flops();
  if (shape_.fp8) {
    // The projections' share at the FP8 peak, the core's in bf16.
    const double projections = 2 * t * static_cast<double>(model_.attention_params_per_layer());
    flops -= projections * (1 - 1 / fp8_speedup(model_.hidden, model_.hidden, tokens()));
  }
  return roofline(flops, bytes, eff_.attention, phase);
}

double ComputeModel::fp8_speedup(std::int64_t in, std::int64_t out, std::int64_t rows) const {
  if (!(gpu_.peak_fp8_flops > 0)) {
    throw Error("", "precision", fmt::format("{} has no FP8 tensor cores", gpu_.name));
  }
  if (!kernels_) return gpu_.peak_fp8_flops / gpu_.peak_bf16_flops;
  KernelShape s = dense_shape(std::max<std::int64_t>(1, in), std::max<std::int64_t>(1, out),
                              std::max<std::int64_t>(1, rows));
  const Time bf16 = kernel(s, Phase::Forward);
  s.op = KernelOp::DenseFp8;
  const Time fp8 = kernel(s, Phase::Forward);
  return fp8 > Time::zero() ? std::max(1.0, bf16.seconds() / fp8.seconds()) : 1.0;
}

Time ComputeModel::gemm(const KernelShape& s, Phase phase) const {
  if (!shape_.fp8) return kernel(s, phase);
  // A dense GEMM, or a grouped expert GEMM by its per-expert GEMM (hidden x ffn over its
  // tokens); the backward's GEMMs at the forward's speedup (only forwards were measured).
  const double speedup = fp8_speedup(s.hidden, s.ffn, s.tokens);
  return Time::from_seconds(kernel(s, phase).seconds() / speedup);
}

Time ComputeModel::router(Phase phase) const {
  if (kernels_) {
    KernelShape s = dense_shape(model_.hidden, model_.experts, tokens());
    return kernel(s, phase);
  }
  const double t = static_cast<double>(tokens());
  const double d = model_.dtype_bytes;
  const double bytes = static_cast<double>(model_.router_params()) * d +
                       t * model_.hidden * d      // hidden states in
                       + t * model_.experts * d;  // logits out
  return roofline(router_flops(), bytes, eff_.dense_gemm, phase);
}

Time ComputeModel::experts(std::int64_t token_assignments, int local_experts, Phase phase) const {
  if (token_assignments < 0) {
    throw Error("", "token_assignments",
                fmt::format("expected a count >= 0, got {}", token_assignments));
  }
  if (local_experts < 1 || local_experts > model_.experts) {
    throw Error("", "local_experts",
                fmt::format("expected 1..{} (the experts of {}), got {}", model_.experts,
                            model_.name, local_experts));
  }
  // No tokens: the grouped GEMM has no work, and experts without tokens are skipped without
  // reading their weights, so no time at all.
  if (token_assignments == 0) return roofline(0, 0, 1, phase);  // zero; validates phase
  if (kernels_) {
    // The experts of this GPU share its tokens evenly: the trace gives the rank's count, not the
    // split among its experts. At least one token each: an expert with work runs a launch.
    const std::int64_t per_expert =
        std::max<std::int64_t>(1, (token_assignments + local_experts / 2) / local_experts);
    KernelShape s = ffn_shape(model_.ffn_expert, local_experts, per_expert);
    s.ffn = std::max<std::int64_t>(1, model_.ffn_expert / shape_.expert_tp());
    return gemm(s, phase);
  }
  const double d = model_.dtype_bytes;
  const double n = static_cast<double>(token_assignments);
  const double bytes = static_cast<double>(local_experts) *
                           static_cast<double>(model_.expert_params()) * d  // every local expert
                       + 2 * n * model_.hidden * d;  // each assignment's token in and out
  const double speedup =
      shape_.fp8 ? fp8_speedup(model_.hidden, model_.ffn_expert, token_assignments) : 1.0;
  return roofline(expert_flops(token_assignments) / speedup, bytes, eff_.expert_gemm, phase,
                  shape_.expert_tp());
}

Time ComputeModel::all_tokens_ffn(std::int64_t params, double flops, Phase phase) const {
  if (params == 0) return roofline(0, 0, 1, phase);  // no such FFN: zero; validates phase
  const double t = static_cast<double>(tokens());
  const double d = model_.dtype_bytes;
  // Weights read once, every token's hidden state in and out.
  const double bytes = static_cast<double>(params) * d + 2 * t * model_.hidden * d;
  const double speedup = shape_.fp8 ? fp8_speedup(model_.hidden, model_.hidden, tokens()) : 1.0;
  return roofline(flops / speedup, bytes, eff_.dense_gemm, phase);
}

Time ComputeModel::shared_experts(Phase phase) const {
  if (kernels_ && model_.shared_experts > 0) {
    return gemm(ffn_shape(model_.ffn_shared, model_.shared_experts, tokens()), phase);
  }
  return all_tokens_ffn(model_.shared_experts == 0 ? 0 : model_.shared_expert_params(),
                        shared_expert_flops(), phase);
}

Time ComputeModel::dense_ffn(Phase phase) const {
  if (kernels_ && model_.ffn_dense > 0) {
    return gemm(ffn_shape(model_.ffn_dense, 1, tokens()), phase);
  }
  return all_tokens_ffn(model_.ffn_dense == 0 ? 0 : model_.dense_ffn_params(), dense_ffn_flops(),
                        phase);
}

Time ComputeModel::lm_head(Phase phase) const {
  if (kernels_) return kernel(dense_shape(model_.hidden, tp_share(model_.vocab), tokens()), phase);
  const double t = static_cast<double>(tokens());
  const double d = model_.dtype_bytes;
  const double bytes = static_cast<double>(model_.vocab) * model_.hidden * d  // weights
                       + t * model_.hidden * d                                // hidden in
                       + t * model_.vocab * d;                                // logits out
  return roofline(lm_head_flops(), bytes, eff_.dense_gemm, phase);
}

Time ComputeModel::permutation(Phase phase) const {
  KernelShape s;
  s.op = KernelOp::Permute;
  s.hidden = tp_share(model_.hidden);
  s.tokens = tokens();
  s.top_k = model_.top_k;
  s.experts = model_.experts;
  s.dtype_bytes = model_.dtype_bytes;
  return kernel(s, phase);
}

Time ComputeModel::kernel(const KernelShape& shape, Phase phase) const {
  const KernelTime t = kernel_model_->time(shape);
  switch (phase) {
    case Phase::Forward:
      return t.forward;
    case Phase::Backward:
      return t.backward;
    case Phase::Update:
    case Phase::Other:
      break;
  }
  throw Error("", "phase",
              fmt::format("compute time is modelled for fwd and bwd, not {}", to_string(phase)));
}

// Attention as measured kernels: the query, key/value and output projections (dense GEMMs of
// this TP rank's heads) and the causal attention core.
Time ComputeModel::measured_attention(Phase phase) const {
  const AttentionSpec& a = model_.attention;
  const std::int64_t t = tokens();
  const std::int64_t h = model_.hidden;
  const std::int64_t heads = tp_share(a.heads);
  KernelShape core;
  core.op = KernelOp::Attention;
  core.heads = heads;
  core.seq = shape_.seq;
  core.batch = shape_.micro_batch;
  core.causal = true;
  core.dtype_bytes = model_.dtype_bytes;
  Time total;
  if (a.kind == "mla") {
    const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    core.kv_heads = heads;
    core.qk_head_dim = qk;
    core.v_head_dim = a.v_head_dim;
    // Low-rank projections: down-projections replicated on the TP ranks, up-projections split.
    if (a.q_lora_rank > 0) {
      total += gemm(dense_shape(h, a.q_lora_rank, t), phase);
      total += gemm(dense_shape(a.q_lora_rank, heads * qk, t), phase);
    } else {
      total += gemm(dense_shape(h, heads * qk, t), phase);
    }
    total += gemm(dense_shape(h, a.kv_lora_rank + a.qk_rope_head_dim, t), phase);
    total +=
        gemm(dense_shape(a.kv_lora_rank, heads * (a.qk_nope_head_dim + a.v_head_dim), t), phase);
    total += gemm(dense_shape(heads * a.v_head_dim, h, t), phase);
  } else {
    core.kv_heads = std::max<std::int64_t>(1, tp_share(a.kv_heads));
    core.qk_head_dim = core.v_head_dim = a.head_dim;
    total += gemm(dense_shape(h, (heads + 2 * core.kv_heads) * a.head_dim, t), phase);
    total += gemm(dense_shape(heads * a.head_dim, h, t), phase);
  }
  // Under context parallelism each rank's queries meet every key: 1/CP of the causal square
  // (Megatron-Core balances the causal chunks over the ranks).
  const Time attention_core = kernel(core, phase);
  return total + Time::picoseconds(attention_core.ps() / std::max(1, shape_.cp));
}

std::int64_t ComputeModel::tokens() const {
  return static_cast<std::int64_t>(shape_.micro_batch) * shape_.seq / std::max(1, shape_.cp);
}

std::int64_t ComputeModel::tp_share(std::int64_t n) const {
  return std::max<std::int64_t>(1, n / shape_.tp);
}

KernelShape ComputeModel::dense_shape(std::int64_t in, std::int64_t out,
                                      std::int64_t tokens) const {
  KernelShape s;
  s.op = KernelOp::Dense;
  s.hidden = in;
  s.ffn = out;
  s.tokens = tokens;
  s.dtype_bytes = model_.dtype_bytes;
  return s;
}

// An FFN of `width` per expert (split among the TP ranks) as a loop of `count` experts with
// `tokens` each: routed and shared experts, a dense layer's FFN (one expert).
KernelShape ComputeModel::ffn_shape(std::int64_t width, std::int64_t count,
                                    std::int64_t tokens) const {
  KernelShape s;
  s.op = KernelOp::Expert;
  s.hidden = model_.hidden;
  s.ffn = tp_share(width);
  s.local_experts = count;
  s.tokens = tokens;
  s.gated = model_.gated_ffn;
  s.dtype_bytes = model_.dtype_bytes;
  return s;
}

Time ComputeModel::optimizer_step(std::int64_t params, double bytes_per_param,
                                  double efficiency) const {
  if (params < 0) {
    throw Error("", "params", fmt::format("expected a count >= 0, got {}", params));
  }
  if (!(efficiency > 0 && efficiency <= 1)) {
    throw Error("", "calibration.compute.optimizer",
                fmt::format("expected a fraction of HBM bandwidth in (0, 1], got {}", efficiency));
  }
  const double seconds =
      static_cast<double>(params) * bytes_per_param / (gpu_.memory_bandwidth * efficiency);
  if (seconds >= Time::max().seconds()) return Time::max();
  return Time::from_seconds(seconds);
}

// ---------------------------------------------------------------------------------------------
// ComputeReplay

namespace {

// The compute ops a replay file may time, in the order messages list them.
constexpr std::array<Op, 7> kReplayOps = {Op::Attention,     Op::Router,   Op::Permute, Op::Experts,
                                          Op::SharedExperts, Op::DenseFfn, Op::LmHead};

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

ComputeReplay ComputeReplay::load(const std::string& path) {
  std::istringstream in(read_text_file(path, "replay file", "a CSV of measured durations"));

  static constexpr std::array<const char*, 4> kColumns = {"op", "layer", "phase", "duration"};
  // Errors read "file:line: column: message", the file:line form editors jump to.
  const auto fail = [&path](int line, const std::string& column, const std::string& message) {
    return Error(fmt::format("{}:{}", path, line), column, message);
  };

  ComputeReplay replay;
  std::map<Key, int> first_line;  // for duplicate messages
  std::string raw;
  int line_no = 0;
  bool header = false;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string_view line = trim(raw);
    // Blank lines and # comments let a measurement file carry notes on where it came from.
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> cells = split(line);
    if (!header) {
      bool ok = cells.size() == kColumns.size();
      for (std::size_t i = 0; ok && i < cells.size(); ++i)
        ok = cells[i] == kColumns[i];
      if (!ok) {
        throw fail(line_no, "",
                   fmt::format("expected the header 'op,layer,phase,duration', got {}",
                               quote_input(line)));
      }
      header = true;
      continue;
    }
    if (cells.size() != kColumns.size()) {
      throw fail(line_no, "",
                 fmt::format("expected 4 columns (op,layer,phase,duration), got {}", cells.size()));
    }

    Key key{};
    bool found = false;
    std::string ops;
    for (Op op : kReplayOps) {
      if (cells[0] == to_string(op)) {
        key.op = op;
        found = true;
      }
      ops += (ops.empty() ? "" : ", ") + std::string(to_string(op));
    }
    if (!found) {
      throw fail(line_no, "op",
                 fmt::format("unknown op {} (valid: {})", quote_input(cells[0]), ops));
    }

    if (cells[1] == "*") {
      key.layer = -1;
    } else {
      const std::string_view text = cells[1];
      int layer = -1;
      auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), layer);
      if (err != std::errc() || ptr != text.data() + text.size() || text.empty() || layer < 0) {
        throw fail(line_no, "layer",
                   fmt::format("expected a layer index >= 0 or *, got {}", quote_input(text)));
      }
      key.layer = layer;
    }

    if (cells[2] == "fwd") {
      key.phase = Phase::Forward;
    } else if (cells[2] == "bwd") {
      key.phase = Phase::Backward;
    } else {
      throw fail(line_no, "phase",
                 fmt::format("expected fwd or bwd, got {}", quote_input(cells[2])));
    }

    Time duration;
    try {
      duration = parse_time(cells[3]);
    } catch (const Error& e) {
      throw fail(line_no, "duration", e.message());  // parse_time's message quotes the text
    }

    const auto [it, inserted] = first_line.emplace(key, line_no);
    if (!inserted) {
      throw fail(line_no, "",
                 fmt::format("{} layer {} {} is already given on line {}", cells[0], cells[1],
                             cells[2], it->second));
    }
    replay.entries_.emplace(key, duration);
  }
  if (in.bad()) throw Error(path, "", "cannot read the replay file");
  if (!header) {
    throw Error(path, "", "empty; expected the header 'op,layer,phase,duration' and rows");
  }
  return replay;
}

const Time* ComputeReplay::find(Op op, int layer, Phase phase) const {
  // A measurement for this very layer wins over one for every layer.
  auto it = entries_.find(Key{op, layer, phase});
  if (it != entries_.end()) return &it->second;
  it = entries_.find(Key{op, -1, phase});
  return it != entries_.end() ? &it->second : nullptr;
}

}  // namespace mfabric::workload
