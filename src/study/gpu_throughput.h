// What a training run gets out of each GPU (docs/cli.md, "mfabric simulate"): tokens/s, model
// TFLOP/s by Megatron-LM's accounting (workload/model_flops.h) and MFU, the model FLOP/s over
// the GPU's dense bf16 peak as Megatron reports it. Shared by simulate, compare and sweep.
#pragma once

#include <optional>

#include "config/experiment.h"

namespace mfabric::study {

struct GpuThroughput {
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // 1e12 model FLOP/s
  // Model FLOP/s per GPU / peak_bf16_flops: below 1, unless measured durations (a replay)
  // are faster than the peak allows.
  double mfu = 0;
};

// The figures of `e`'s training job over `gpus` GPUs at `iteration_s` per iteration:
// tokens_per_iteration(e) x (1, model FLOPs per token) / iteration_s / gpus. nullopt for a
// workload without a model (micro-benchmark, Chakra trace, connection matrix) and for a run
// without GPUs or time. mfabric::Error for a model or GPU that cannot be loaded.
std::optional<GpuThroughput> gpu_throughput(const config::Experiment& e, int gpus,
                                            double iteration_s);

}  // namespace mfabric::study
