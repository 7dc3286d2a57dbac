#include "workload/megatron_checks.h"

#include <fmt/format.h>

namespace mfabric::workload {

std::vector<std::string> megatron_refusals(const TrainingSpec& spec) {
  std::vector<std::string> out;
  // Megatron-Core's TransformerConfig.__post_init__ asserts these when
  // overlap_moe_expert_parallel_comm is set; DualPipe is DeepSeek's schedule, not Megatron's.
  if (!spec.overlap.ep_comm || spec.schedule == PipelineSchedule::DualPipe) return out;
  const ParallelismSpec& p = spec.parallelism;
  if (p.pp > 1 && spec.schedule != PipelineSchedule::Interleaved) {
    out.push_back(fmt::format(
        "Megatron-Core runs the EP overlap (overlap.ep_comm) with PP > 1 only under the "
        "interleaved schedule (vp > 1); this {} run with PP {} merges the steady phase's pairs "
        "as its combined 1F1B would",
        to_string(spec.schedule), p.pp));
  }
  if (p.ep == 1) {
    out.push_back(
        "Megatron-Core refuses the EP overlap (overlap.ep_comm) without expert parallelism "
        "(EP 1): there is no all-to-all to hide");
  }
  if (spec.recompute == Recompute::Full) {
    out.push_back(
        "Megatron-Core refuses the EP overlap (overlap.ep_comm) with full recomputation; "
        "selective recomputation is allowed");
  }
  return out;
}

}  // namespace mfabric::workload
