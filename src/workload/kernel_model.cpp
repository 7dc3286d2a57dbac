// The shape-aware kernel model (kernel_model.h): op kinds, their work, and their time.
#include "workload/kernel_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::workload {

namespace {

constexpr std::array<std::pair<KernelOp, std::string_view>, 7> kKernelOpNames{{
    {KernelOp::Expert, "expert"},
    {KernelOp::Dense, "dense"},
    {KernelOp::DenseFp8, "dense-fp8"},
    {KernelOp::Attention, "attention"},
    {KernelOp::Permute, "permute"},
    {KernelOp::Optimizer, "optimizer"},
    {KernelOp::Elementwise, "elementwise"},
}};

// Tokens and rows stay below 2^31: the frameworks index them with 32-bit integers, and larger
// figures are typos (a byte count given as tokens).
constexpr std::int64_t kMaxRows = std::int64_t{1} << 31;

void require_positive(const char* field, std::int64_t value) {
  if (value < 1) throw Error("", field, fmt::format("expected a positive integer, got {}", value));
}

void require_rows(const char* field, std::int64_t value) {
  require_positive(field, value);
  if (value >= kMaxRows) {
    throw Error("", field, fmt::format("expected fewer than 2^31, got {}", value));
  }
}

// A Time from seconds, saturating where the shape is nonsense anyway (about 107 days).
Time seconds_to_time(double seconds) {
  if (seconds >= Time::max().seconds()) return Time::max();
  return Time::from_seconds(seconds);
}

}  // namespace

std::string_view to_string(KernelOp op) {
  for (const auto& [o, name] : kKernelOpNames)
    if (o == op) return name;
  return "?";
}

const std::vector<KernelOp>& kernel_ops() {
  static const std::vector<KernelOp> ops = [] {
    std::vector<KernelOp> v;
    for (const auto& [o, name] : kKernelOpNames)
      v.push_back(o);
    return v;
  }();
  return ops;
}

KernelOp parse_kernel_op(std::string_view name) {
  std::string known;
  for (const auto& [o, n] : kKernelOpNames) {
    if (n == name) return o;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw Error("", "op", fmt::format("unknown op kind {} (known: {})", quote_input(name), known));
}

bool is_memory_bound(KernelOp op) {
  return op == KernelOp::Permute || op == KernelOp::Optimizer || op == KernelOp::Elementwise;
}

KernelWork kernel_work(const KernelShape& s) {
  KernelWork w;
  const double d = s.dtype_bytes;
  switch (s.op) {
    case KernelOp::Expert: {
      require_positive("hidden", s.hidden);
      require_positive("ffn", s.ffn);
      require_positive("local_experts", s.local_experts);
      require_rows("tokens", s.tokens);
      require_rows("tokens", s.tokens * s.local_experts);
      const double matrices = s.gated ? 3 : 2;
      const double weights = matrices * static_cast<double>(s.hidden) * static_cast<double>(s.ffn);
      const double all_tokens =
          static_cast<double>(s.tokens) * static_cast<double>(s.local_experts);
      w.forward = 2 * weights * all_tokens;
      w.backward = 2 * w.forward;
      w.rows = static_cast<double>(s.tokens);
      w.dim = static_cast<double>(s.hidden) * static_cast<double>(s.ffn);
      w.launches = static_cast<double>(s.local_experts);
      w.memory_bytes = static_cast<double>(s.local_experts) * weights * d +
                       2 * all_tokens * static_cast<double>(s.hidden) * d;
      return w;
    }
    case KernelOp::Dense:
    case KernelOp::DenseFp8: {
      require_positive("in", s.hidden);
      require_positive("out", s.ffn);
      require_rows("tokens", s.tokens);
      const double in = static_cast<double>(s.hidden);
      const double out = static_cast<double>(s.ffn);
      const double t = static_cast<double>(s.tokens);
      w.forward = 2 * in * out * t;
      w.backward = 2 * w.forward;
      w.rows = t;
      w.dim = in * out;
      w.memory_bytes = in * out * d + t * (in + out) * d;
      return w;
    }
    case KernelOp::Attention: {
      require_positive("heads", s.heads);
      require_positive("kv_heads", s.kv_heads);
      require_positive("head_dim", s.qk_head_dim);
      require_positive("v_head_dim", s.v_head_dim);
      require_positive("seq", s.seq);
      require_positive("batch", s.batch);
      require_rows("batch x heads x seq", s.batch * s.heads * s.seq);
      if (s.kv_heads > s.heads) {
        throw Error(
            "", "kv_heads",
            fmt::format("expected at most the {} query heads, got {}", s.heads, s.kv_heads));
      }
      const double b = static_cast<double>(s.batch);
      const double h = static_cast<double>(s.heads);
      const double seq = static_cast<double>(s.seq);
      const double dims = static_cast<double>(s.qk_head_dim + s.v_head_dim);
      // Q K^T (2 b H S^2 dqk) and P V (2 b H S^2 dv) over the full square; a causal mask computes
      // half of it: b H S^2 (dqk + dv), the reference measurements' count.
      w.forward = b * h * seq * seq * dims * (s.causal ? 1 : 2);
      w.backward = 2.5 * w.forward;
      w.rows = b * h * seq;
      w.dim = dims;
      const double kv = static_cast<double>(s.kv_heads);
      w.memory_bytes =
          b * seq *
          (h * static_cast<double>(s.qk_head_dim) + kv * static_cast<double>(s.qk_head_dim) +
           kv * static_cast<double>(s.v_head_dim) + h * static_cast<double>(s.v_head_dim)) *
          d;
      return w;
    }
    case KernelOp::Permute: {
      require_positive("hidden", s.hidden);
      require_rows("tokens", s.tokens);
      require_positive("top_k", s.top_k);
      require_positive("experts", s.experts);
      if (s.top_k > s.experts) {
        throw Error("", "top_k",
                    fmt::format("expected at most the {} experts, got {}", s.experts, s.top_k));
      }
      require_rows("tokens x top_k", s.tokens * s.top_k);
      // Four passes over the routed copies: gather into expert order and its write, the weighted
      // scatter back and its read (the measured kernels' sequence; sorting moves indices only).
      const double routed = static_cast<double>(s.tokens) * static_cast<double>(s.top_k);
      w.forward = 4 * routed * static_cast<double>(s.hidden) * d;
      w.backward = w.forward;  // the gradient goes back through the same gather and scatter
      w.rows = routed;
      w.dim = static_cast<double>(s.hidden);
      return w;
    }
    case KernelOp::Optimizer: {
      require_positive("params", s.params);
      if (!(s.bytes_per_param > 0)) {
        throw Error("", "bytes_per_param",
                    fmt::format("expected a positive size, got {}", s.bytes_per_param));
      }
      w.forward = static_cast<double>(s.params) * s.bytes_per_param;
      w.rows = static_cast<double>(s.params);
      w.dim = 1;
      return w;
    }
    case KernelOp::Elementwise: {
      if (!(s.bytes > 0) || !std::isfinite(s.bytes)) {
        throw Error("", "bytes", fmt::format("expected a positive size, got {}", s.bytes));
      }
      w.forward = s.bytes;
      w.backward = s.bytes;
      w.rows = s.bytes;
      w.dim = 1;
      return w;
    }
  }
  throw Error("", "op", "unknown op kind");
}

const KernelTable* KernelCalibration::find(KernelOp op) const {
  const auto it = tables.find(op);
  return it == tables.end() ? nullptr : &it->second;
}

KernelModel::KernelModel(const GpuSpec& gpu, const KernelCalibration* measured,
                         const Efficiency& roofline)
    : gpu_(gpu), measured_(measured), roofline_(roofline) {
  if (const KernelTable* copy = measured_ ? measured_->find(KernelOp::Elementwise) : nullptr) {
    memory_fraction_ = copy->forward.mean_efficiency();
  }
  permute_peak_ = gpu_.memory_bandwidth;
  if (measured_ && measured_->find(KernelOp::Permute) && !measured_->measured_on.empty() &&
      measured_->measured_on != gpu_.name) {
    const GpuSpec& on = find_gpu(measured_->measured_on);
    permute_peak_ = on.memory_bandwidth * (gpu_.peak_bf16_flops / on.peak_bf16_flops);
  }
}

double KernelModel::peak(KernelOp op) const {
  if (op == KernelOp::Permute) return permute_peak_;
  if (is_memory_bound(op)) return gpu_.memory_bandwidth;
  if (op == KernelOp::DenseFp8) {
    if (!(gpu_.peak_fp8_flops > 0)) {
      throw Error("", "gpu", fmt::format("{} has no FP8 tensor cores", gpu_.name));
    }
    return gpu_.peak_fp8_flops;
  }
  return gpu_.peak_bf16_flops;
}

KernelTime KernelModel::roofline(KernelOp op, const KernelWork& w) const {
  KernelTime t;
  if (is_memory_bound(op)) {
    // At full HBM bandwidth: what a model without measurements can promise.
    t.forward = seconds_to_time(w.forward / peak(op));
    t.backward = seconds_to_time(w.backward / peak(op));
    t.efficiency_forward = t.efficiency_backward = 1;
    return t;
  }
  const double e = op == KernelOp::Expert      ? roofline_.expert_gemm
                   : op == KernelOp::Attention ? roofline_.attention
                                               : roofline_.dense_gemm;
  // The backward moves about twice the forward's bytes, as ComputeModel counts.
  const double memory = w.memory_bytes / gpu_.memory_bandwidth;
  t.forward = seconds_to_time(std::max(w.forward / (peak(op) * e), memory));
  t.backward = seconds_to_time(std::max(w.backward / (peak(op) * e), 2 * memory));
  t.efficiency_forward = t.efficiency_backward = e;
  return t;
}

KernelTime KernelModel::time(const KernelShape& shape) const {
  const KernelWork w = kernel_work(shape);
  const KernelTable* table = measured_ ? measured_->find(shape.op) : nullptr;
  if (!table) return roofline(shape.op, w);
  KernelTime t;
  t.measured = true;
  const double p = peak(shape.op);
  // No GEMM beats its bytes at the bandwidth measured element-wise passes reach (a router GEMM
  // with 8 outputs reads its whole input for little arithmetic).
  const double memory =
      is_memory_bound(shape.op) ? 0 : w.memory_bytes / (gpu_.memory_bandwidth * memory_fraction_);
  t.efficiency_forward = table->forward.efficiency(w.rows, w.dim);
  t.forward = seconds_to_time(w.launches * table->launch_forward.seconds() +
                              std::max(w.forward / (p * t.efficiency_forward), memory));
  const bool own = !table->backward.empty();
  t.efficiency_backward = own ? table->backward.efficiency(w.rows, w.dim) : t.efficiency_forward;
  const Time launch = own ? table->launch_backward : table->launch_forward;
  t.backward = w.backward > 0
                   ? seconds_to_time(w.launches * launch.seconds() +
                                     std::max(w.backward / (p * t.efficiency_backward), 2 * memory))
                   : Time::zero();
  return t;
}

}  // namespace mfabric::workload
