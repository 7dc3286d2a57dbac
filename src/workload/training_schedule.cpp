#include "workload/training_schedule.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace mfabric::workload::training {

namespace {

std::vector<PipelineStep> dualpipe_schedule(int stages, int stage, int micro_batches,
                                            bool ep_overlap) {
  const int half = stages / 2;
  const int per_direction = micro_batches / 2;
  const int h = std::min(stage, stages - 1 - stage);
  // Phase 0 is the direction entering on this stage's side of the pipeline.
  const int swap = stage >= half ? 1 : 0;
  int next_forward[2] = {0, 0}, next_backward[2] = {0, 0};
  std::vector<PipelineStep> order;
  const auto add = [&](bool forward, int phase, bool merged) {
    const int direction = phase ^ swap;
    int& next = (forward ? next_forward : next_backward)[direction];
    order.push_back({forward, direction * per_direction + next++, direction, merged && ep_overlap});
  };
  const auto F = [&](int phase) { add(true, phase, false); };
  const auto B = [&](int phase) { add(false, phase, false); };
  // A backward the reference implementation overlaps with the forward before it.
  const auto merged_B = [&](int phase) { add(false, phase, true); };
  for (int i = 0; i < (half - h - 1) * 2; ++i)
    F(0);
  for (int i = 0; i < h + 1; ++i) {
    F(0);
    F(1);
  }
  for (int i = 0; i < half - h - 1; ++i) {
    B(1);
    F(1);
  }
  for (int i = 0; i < per_direction - stages + h + 1; ++i) {
    F(0);
    merged_B(1);
    F(1);
    merged_B(0);
  }
  for (int i = 0; i < half - h - 1; ++i) {
    B(1);
    F(1);
    merged_B(0);
  }
  for (int i = 0; i < h + 1; ++i) {
    B(1);
    B(0);
  }
  for (int i = 0; i < half - h - 1; ++i)
    B(0);
  return order;
}

}  // namespace

std::vector<PipelineStep> stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                         int micro_batches, int chunks, bool ep_overlap) {
  const int m = micro_batches;
  std::vector<PipelineStep> order;
  if (schedule == PipelineSchedule::DualPipe) {
    return dualpipe_schedule(stages, stage, m, ep_overlap);
  }
  if (schedule == PipelineSchedule::GPipe) {
    for (int mb = 0; mb < m; ++mb)
      order.push_back({true, mb, 0});
    for (int mb = 0; mb < m; ++mb)
      order.push_back({false, mb, 0});
    return order;
  }
  if (schedule == PipelineSchedule::Interleaved) {
    const int group = stages * chunks;
    const int total = m * chunks;
    const int warmup =
        m == stages
            ? total
            : std::min((stages - stage - 1) * 2 + (chunks - 1) * stages + (ep_overlap ? 1 : 0),
                       total);
    const auto step = [&](int k, bool forward, bool merged = false) {
      const int in_group = k % group;
      const int chunk = in_group / stages;
      return PipelineStep{forward, (k / group) * stages + k % stages,
                          forward ? chunk : chunks - 1 - chunk, merged};
    };
    for (int k = 0; k < warmup; ++k)
      order.push_back(step(k, true));
    for (int i = 0; i < total - warmup; ++i) {
      order.push_back(step(warmup + i, true));
      order.push_back(step(i, false, ep_overlap));
    }
    for (int k = total - warmup; k < total; ++k)
      order.push_back(step(k, false));
    return order;
  }
  // 1F1B: warm up with as many forwards as stages below this one (one more with the EP overlap),
  // then alternate, then drain.
  const int warmup = std::min(stages - stage - 1 + (ep_overlap ? 1 : 0), m);
  for (int mb = 0; mb < warmup; ++mb)
    order.push_back({true, mb, 0});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({true, warmup + i, 0});
    order.push_back({false, i, 0, ep_overlap});
  }
  for (int mb = m - warmup; mb < m; ++mb)
    order.push_back({false, mb, 0});
  return order;
}

void run_schedule(PipelineSchedule schedule, int stages, int micro_batches, int chunks,
                  bool ep_overlap,
                  const std::function<void(int stage, std::span<const PipelineStep> steps)>& add) {
  const auto n = static_cast<std::size_t>(stages);
  const VirtualPipeline pipeline(schedule, stages, chunks);
  const int virtual_stages = pipeline.virtual_stages();
  std::vector<std::vector<PipelineStep>> order;
  for (int s = 0; s < stages; ++s)
    order.push_back(stage_schedule(schedule, stages, s, micro_batches, chunks, ep_overlap));
  std::vector<std::size_t> pos(n, 0);
  // Per virtual stage and micro-batch: its forward (backward) has been added.
  std::vector<std::vector<char>> fwd_done(
      static_cast<std::size_t>(virtual_stages),
      std::vector<char>(static_cast<std::size_t>(micro_batches), 0));
  auto bwd_done = fwd_done;
  const auto ready = [&](int s, const PipelineStep& step) {
    const int v = pipeline.virtual_stage(s, step.chunk);
    const auto vi = static_cast<std::size_t>(v);
    const auto mbi = static_cast<std::size_t>(step.micro_batch);
    return step.forward ? (pipeline.first(v) || fwd_done[vi - 1][mbi])
                        : (pipeline.last(v) || bwd_done[vi + 1][mbi]);
  };
  const auto done = [&](int s, const PipelineStep& step) {
    const auto vi = static_cast<std::size_t>(pipeline.virtual_stage(s, step.chunk));
    (step.forward ? fwd_done : bwd_done)[vi][static_cast<std::size_t>(step.micro_batch)] = 1;
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < stages; ++s) {
      const auto si = static_cast<std::size_t>(s);
      auto& at = pos[si];
      const auto& steps = order[si];
      while (at < steps.size()) {
        // A step and the one merged with it, if any.
        const std::size_t take = at + 1 < steps.size() && steps[at + 1].with_previous ? 2 : 1;
        bool can = true;
        for (std::size_t k = at; k < at + take; ++k)
          can = can && ready(s, steps[k]);
        if (!can) break;
        add(s, std::span<const PipelineStep>(steps.data() + at, take));
        for (std::size_t k = at; k < at + take; ++k)
          done(s, steps[k]);
        at += take;
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
