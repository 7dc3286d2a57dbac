#include "workload/training_schedule.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace mfabric::workload::training {

std::vector<PipelineStep> stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                         int micro_batches) {
  const int m = micro_batches;
  std::vector<PipelineStep> order;
  if (schedule == PipelineSchedule::GPipe) {
    for (int mb = 0; mb < m; ++mb)
      order.push_back({true, mb});
    for (int mb = 0; mb < m; ++mb)
      order.push_back({false, mb});
    return order;
  }
  // 1F1B: warm up with as many forwards as stages below this one, then alternate, then drain.
  const int warmup = std::min(stages - stage - 1, m);
  for (int mb = 0; mb < warmup; ++mb)
    order.push_back({true, mb});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({true, warmup + i});
    order.push_back({false, i});
  }
  for (int mb = m - warmup; mb < m; ++mb)
    order.push_back({false, mb});
  return order;
}

void run_schedule(PipelineSchedule schedule, int stages, int micro_batches,
                  const std::function<void(int stage, PipelineStep step)>& add) {
  const auto n = static_cast<std::size_t>(stages);
  std::vector<std::vector<PipelineStep>> order;
  for (int s = 0; s < stages; ++s)
    order.push_back(stage_schedule(schedule, stages, s, micro_batches));
  std::vector<std::size_t> pos(n, 0);
  std::vector<std::vector<char>> fwd_done(
      n, std::vector<char>(static_cast<std::size_t>(micro_batches), 0));
  auto bwd_done = fwd_done;
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < stages; ++s) {
      const auto si = static_cast<std::size_t>(s);
      auto& at = pos[si];
      const auto& steps = order[si];
      while (at < steps.size()) {
        const PipelineStep step = steps[at];
        const auto mbi = static_cast<std::size_t>(step.micro_batch);
        const bool ready = step.forward ? (s == 0 || fwd_done[si - 1][mbi])
                                        : (s == stages - 1 || bwd_done[si + 1][mbi]);
        if (!ready) break;
        add(s, step);
        (step.forward ? fwd_done : bwd_done)[si][mbi] = 1;
        ++at;
        progress = true;
      }
    }
  }
  for (std::size_t s = 0; s < n; ++s) {
    if (pos[s] != order[s].size()) {
      throw std::logic_error("build_training_graph: pipeline schedule deadlocked");
    }
  }
}

}  // namespace mfabric::workload::training
