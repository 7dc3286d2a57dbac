// The shape-aware kernel model: how long one op of a given shape takes on a GPU, forward and
// backward, from measured tables where a calibration has them and from the roofline where it does
// not (docs/calibration.md, "Measured kernels").
//
//   time = launches x launch overhead + work / (peak x efficiency(rows, dim))
//
// with work in FLOPs against the GPU's peak for GEMMs and attention, in bytes against its HBM
// bandwidth for the memory-bound ops (the MoE permutation, the optimizer step, element-wise ops).
// Backward = the data-gradient and weight-gradient GEMMs, each as many FLOPs as the forward (2x
// the forward's work; attention's backward 2.5x, FlashAttention's five GEMMs against two), at
// the backward table's efficiency: measurements give the two gradients' sum only, so one table
// serves both. The efficiencies are fractions of each GPU's own datasheet peak, so a table
// measured on one GPU carries over to another by the ratio of their datasheet figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "workload/compute.h"
#include "workload/kernel_curve.h"

namespace mfabric::workload {

enum class KernelOp {
  Expert,       // gated expert FFN, a loop of L local experts (two GEMMs and the activation each)
  Dense,        // one GEMM (projections, the router: in x out weights, tokens rows)
  DenseFp8,     // one GEMM with e4m3 inputs, against the GPU's FP8 peak
  Attention,    // the attention core (scores and weighted sum; projections are Dense)
  Permute,      // the MoE dispatch/combine permutation: top-k, sort by expert, gather, scatter back
  Optimizer,    // the fused Adam step
  Elementwise,  // any memory-bound pass (copies, norms, activations)
};

std::string_view to_string(KernelOp op);
// Throws mfabric::Error listing the op kinds.
KernelOp parse_kernel_op(std::string_view name);
const std::vector<KernelOp>& kernel_ops();
// Memory-bound kinds: work in bytes against HBM bandwidth.
bool is_memory_bound(KernelOp op);

// One op's shape; which fields count depends on the op (kernel_work says).
struct KernelShape {
  KernelOp op = KernelOp::Dense;
  std::int64_t hidden = 0;  // expert, permute: the model's hidden size; dense: in
  std::int64_t ffn = 0;     // expert: FFN width on this GPU; dense: out
  std::int64_t local_experts = 1;
  std::int64_t tokens = 0;  // expert: per expert; dense, permute: all (before routing)
  bool gated = true;
  std::int64_t heads = 0, kv_heads = 0, qk_head_dim = 0, v_head_dim = 0, seq = 0, batch = 0;
  bool causal = true;
  std::int64_t top_k = 0, experts = 0;
  std::int64_t params = 0;
  double bytes_per_param = kOptimizerBytesPerParam;
  double bytes = 0;  // elementwise: bytes read and written
  int dtype_bytes = 2;
};

// What an op does: its work per phase, its table coordinates and its launches.
struct KernelWork {
  double forward = 0;   // FLOPs, or bytes for memory-bound ops
  double backward = 0;  // likewise
  double rows = 0;
  double dim = 0;
  double launches = 1;
  double memory_bytes = 0;  // bytes a GEMM moves at least (the roofline's memory bound)
};

// Throws mfabric::Error naming the first field that is not positive (or too large: tokens and
// rows beyond 2^31).
KernelWork kernel_work(const KernelShape& shape);

// A measured op kind: launch overheads and efficiency curves per phase. An empty backward curve
// means the backward was not measured: it runs at the forward's efficiency and overhead.
struct KernelTable {
  Time launch_forward;
  Time launch_backward;
  KernelCurve forward;
  KernelCurve backward;
};

// The `kernels:` section of a calibration.
struct KernelCalibration {
  std::string measured_on;  // the GPU the tables come from
  std::string source;       // provenance: the measurement files
  std::map<KernelOp, KernelTable> tables;

  const KernelTable* find(KernelOp op) const;
};

struct KernelTime {
  Time forward;
  Time backward;
  double efficiency_forward = 0;  // the table's (or the roofline's) fraction of peak
  double efficiency_backward = 0;
  bool measured = false;  // from a measured table, not the roofline
  Time total() const { return forward + backward; }
};

class KernelModel {
 public:
  // `measured` may be null (or lack an op): that op falls back to the roofline with `roofline`'s
  // efficiencies, as ComputeModel computes it.
  KernelModel(const GpuSpec& gpu, const KernelCalibration* measured, const Efficiency& roofline);

  KernelTime time(const KernelShape& shape) const;
  // The peak `op` is measured against on this GPU (FLOP/s or bytes/s); throws for FP8 on a GPU
  // without an FP8 peak.
  double peak(KernelOp op) const;

 private:
  KernelTime roofline(KernelOp op, const KernelWork& w) const;

  GpuSpec gpu_;
  const KernelCalibration* measured_;
  Efficiency roofline_;
  // The fraction of HBM bandwidth the measured element-wise table reaches (1 without one): the
  // floor under every measured GEMM, read once.
  double memory_fraction_ = 1;
  // What a measured permutation table's efficiencies are fractions of on this GPU: the measured
  // GPU's HBM bandwidth scaled by this GPU's compute, not this GPU's bandwidth. The permutation
  // (a sort and indexed copies) runs far below HBM bandwidth and is bound by the SMs: measured on
  // an H100 it takes 1.02-1.06x the H200's time, where the HBM ratio would give 1.43x
  // (docs/validation.md, "Compute as measured").
  double permute_peak_ = 0;
};

}  // namespace mfabric::workload
