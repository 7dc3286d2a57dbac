#include "sim/policies/paper_sim.h"

#include <algorithm>

namespace mfabric::sim {

void PaperSimPolicy::compute_started(PolicyContext& ctx, int region, const workload::Task& task) {
  if (task.kind != workload::TaskKind::Compute || task.phase != workload::Phase::Backward) return;
  // The LM head's backward comes before the top layer's; an attention's backward before the
  // layer below it.
  const bool head = task.op == workload::Op::LmHead;
  if (!head && task.op != workload::Op::Attention) return;
  const std::vector<int>& layers = ctx.stage_layers(region);  // ascending
  const auto above = head ? std::upper_bound(layers.begin(), layers.end(), task.layer)
                          : std::lower_bound(layers.begin(), layers.end(), task.layer);
  if (above == layers.begin()) return;  // no MoE layer below in this region
  workload::Task next = task;
  next.layer = static_cast<decltype(next.layer)>(*std::prev(above));
  const std::int64_t key = plan_key(next, /*backward=*/true);
  if (ctx.dispatches(region, key) == nullptr) return;
  ctx.recalibrate(region, key);
}

}  // namespace mfabric::sim
