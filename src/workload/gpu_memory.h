// What a training job keeps in each GPU's HBM, by Megatron-LM's bookkeeping (docs/workload.md,
// "Memory"): the weights, gradients and optimizer states of the parameters the GPU holds, the
// activations its pipeline stage keeps for the backward, and the all-to-all buffers. An
// estimate from the job's shape, for the stage whose GPUs need the most.
#pragma once

#include <string>
#include <vector>

#include "core/units.h"
#include "workload/training.h"

namespace mfabric::workload {

struct MemoryOptions {
  // 0: every data-parallel rank keeps the whole optimizer state; 1: the distributed optimizer
  // (ZeRO-1: Megatron-LM's --use-distributed-optimizer) shards it over the data-parallel ranks
  // holding the same parameters.
  int zero_stage = 0;
  // Activation recomputation (training.h, Recompute). Full: a layer keeps only its input for
  // the backward, which recomputes the rest one layer at a time; selective: the norms' outputs,
  // the routed experts' activation outputs and MLA's up-projected q, k, v are not kept.
  Recompute recompute = Recompute::None;
  // FP8 GEMMs (Precision::FP8): linear layers keep their inputs in FP8.
  bool fp8 = false;
};

// The options a job runs with: ZeRO-1 under the distributed optimizer, its recomputation.
MemoryOptions memory_options(const TrainingSpec& spec);

// Bytes per parameter (mixed precision, Adam): the bf16 weight, its fp32 main gradient
// (Megatron-LM accumulates gradients in fp32 for bf16 training), and the fp32 master weight and
// two moments.
inline constexpr double kWeightBytesPerParam = 2;
inline constexpr double kGradientBytesPerParam = 4;
inline constexpr double kOptimizerStateBytesPerParam = 12;

struct GpuMemory {
  int stage = 0;  // the pipeline stage whose GPUs need the most
  // Micro-batches whose activations the stage holds at once (in whole-stage units: under the
  // interleaved schedule a chunk's activations are 1/VP of one).
  double micro_batches_kept = 0;
  Bytes weights, gradients, optimizer, activations, buffers;
  Bytes capacity;  // the GPU's HBM; zero: not known
  Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
  // Within the GPU's HBM (true where the capacity is not known).
  bool fits() const { return capacity.count() == 0 || total() <= capacity; }
};

// The estimate for the stage whose GPUs need the most (ties: the first). Throws mfabric::Error
// for a zero_stage other than 0 or 1.
GpuMemory gpu_memory(const TrainingSpec& spec, const MemoryOptions& options = {});

// Throws mfabric::Error naming "workload" when `m` does not fit the GPU's HBM: the breakdown
// (memory_text) and what would make it fit.
void check_gpu_memory(const GpuMemory& m, const TrainingSpec& spec);

// One line: "62.1 GB of 80 GB on stage 0's GPUs: weights 4.2 GB, gradients ..., activations of
// 8 micro-batches 41.0 GB, ...".
std::string memory_text(const GpuMemory& m);

}  // namespace mfabric::workload
