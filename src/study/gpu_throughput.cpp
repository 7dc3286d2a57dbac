// Tokens/s, model TFLOP/s and MFU per GPU (gpu_throughput.h).
#include "study/gpu_throughput.h"

#include <cmath>

#include "study/compare.h"
#include "workload/compute.h"
#include "workload/model_flops.h"

namespace mfabric::study {

std::optional<GpuThroughput> gpu_throughput(const config::Experiment& e, int gpus,
                                            double iteration_s) {
  if (!e.model || gpus < 1 || !(iteration_s > 0) || !std::isfinite(iteration_s)) {
    return std::nullopt;
  }
  const config::TrainingJob& w = *e.model;
  const workload::ModelSpec model = workload::load_model(w.model);
  const double tokens_per_s = tokens_per_iteration(e) / iteration_s;
  const double flops_per_s = workload::training_flops(model, w.seq, tokens_per_s);
  GpuThroughput t;
  t.tokens_per_s_per_gpu = tokens_per_s / gpus;
  t.model_tflops_per_gpu = flops_per_s / gpus / 1e12;
  t.mfu = flops_per_s / gpus / workload::find_gpu(e.gpu).peak_bf16_flops;
  return t;
}

}  // namespace mfabric::study
