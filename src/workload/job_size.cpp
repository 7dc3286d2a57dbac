// How big a training job's task graph will be before it is built (training.h, JobSize): tasks,
// all-to-all matrices, routing trace and memory, estimated from the spec alone so that a job too
// big for the machine is refused with one clear line instead of running out of memory.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "workload/training.h"

namespace mfabric::workload {

std::int64_t routing_trace_bytes(int ep, int experts, int iterations, int layers,
                                 int micro_batches) {
  // Doubles: the product of five ints can pass int64 for hostile input.
  const double bytes = 4.0 * ep * experts * iterations * layers * micro_batches;
  return bytes >= 9e18 ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(bytes);
}

JobSize estimate_job_size(const TrainingSpec& spec, TaskSpans spans) {
  const ParallelismSpec& p = spec.parallelism;
  const double moe = spec.model.moe_layers();
  const double dense = spec.model.dense_layers;
  const double layers = spec.model.layers;
  const double m = static_cast<double>(spec.global_batch) /
                   std::max(1.0, static_cast<double>(spec.micro_batch) * p.dp);
  // Per micro-batch index, over a whole stage of S GPUs (training.cpp's loops): compute on
  // every GPU (forward and backward: attention, router, the permutation's two halves, experts,
  // shared experts per MoE layer; attention and FFN per dense layer; the LM head), TP all-reduces
  // per TP group (four per layer), CP exchanges per CP group (three per layer), EP all-to-alls
  // per EP group (four per MoE layer), PP sends per GPU; per iteration the gradient reductions
  // and optimizer steps, fewer than two per GPU. Full recomputation runs every layer's forward
  // twice: half as much again of the layers' tasks.
  const double S = p.stage_gpus();
  const double edp = p.expert_dp();
  const double per_gpu =
      2.0 * (moe * (5 + (spec.model.shared_experts > 0 ? 1 : 0)) + dense * 2 + 1);
  const double recompute = spec.recompute == Recompute::Full ? 1.5 : 1.0;
  const double per_micro_batch =
      recompute * (S * per_gpu + (p.tp > 1 ? S / p.tp * 4.0 * layers : 0.0) +
                   (p.cp > 1 ? S / p.cp * 3.0 * layers : 0.0) + S / p.ep * 4.0 * moe) +
      S * 2.0 * (p.pp - 1);
  const double per_iteration = m * per_micro_batch + 2.0 * p.pp * S;
  const double tasks = spec.iterations * per_iteration;
  const double matrices = spec.iterations * 2.0 * moe * m * edp;
  const double trace = static_cast<double>(
      routing_trace_bytes(p.ep, spec.model.experts, spec.iterations, spec.model.moe_layers(),
                          static_cast<int>(std::min(m * edp, 2e9))));
  // Bytes per task: the Task (24), its dependency rows (about 13), the engine's state (20) and
  // successor rows (about 13), and the network's transfers while they run; recorded spans and
  // what the outputs keep of them add about 80. Measured whole-process peaks per task
  // (docs/workload.md, "Job size"): 79-82 bytes without spans on the scale study's 1,024- to
  // 16,384-server points, 162 with them (simulate --out, 1,024 servers); the constants keep a
  // tenth above. Per matrix: ep x ep int64 plus the vector.
  const double per_task = spans == TaskSpans::Recorded ? 180.0 : 90.0;
  const double memory = tasks * per_task + matrices * (8.0 * p.ep * p.ep + 32.0) + trace;
  const auto clamp = [](double v) {
    return v >= 9e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(v);
  };
  return JobSize{clamp(tasks), clamp(matrices), clamp(trace), clamp(memory)};
}

void check_job_size(const TrainingSpec& spec, Bytes limit, const std::string& option,
                    const std::string& how_to_raise, TaskSpans spans) {
  spec.micro_batches();  // validates the batch split first
  const JobSize size = estimate_job_size(spec, spans);
  if (size.tasks >= std::numeric_limits<std::int32_t>::max()) {
    throw Error("", "",
                fmt::format("the job has an estimated {:.3g} tasks, more than mfabric's "
                            "task graph indexes (2^31); use fewer iterations or "
                            "micro-batches",
                            static_cast<double>(size.tasks)));
  }
  if (size.memory_bytes > limit.count()) {
    throw Error("", option,
                fmt::format("the job needs an estimated {:.3g} tasks and {} of memory ({} of it "
                            "the routing trace), more than the limit of {}; raise {} to run it "
                            "anyway, or use fewer iterations, micro-batches or GPUs",
                            static_cast<double>(size.tasks), to_string(Bytes(size.memory_bytes)),
                            to_string(Bytes(size.trace_bytes)), to_string(limit),
                            how_to_raise.empty() ? option : how_to_raise));
  }
}

}  // namespace mfabric::workload
