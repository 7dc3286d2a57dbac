// The pipeline schedule of the training job (1F1B or GPipe): the order of forwards and backwards
// on each stage's compute stream, and the order in which the builder adds them so that every
// step comes after the steps of neighbouring stages it needs. Internal to the builder.
#pragma once

#include <functional>
#include <vector>

#include "workload/training.h"

namespace mfabric::workload::training {

// One forward or backward of one micro-batch on one stage.
struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;
  bool operator==(const PipelineStep&) const = default;
};

// The order of `stage`'s steps (of `stages`) over `micro_batches`: GPipe all forwards then all
// backwards; 1F1B as many forwards as stages after this one (the warm-up), then a forward and a
// backward in turn, then the remaining backwards.
std::vector<PipelineStep> stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                         int micro_batches);

// Calls add(stage, step) for every step of every stage, each stage's in its schedule order.
// Stages advance in turn; a step is added once the step it needs from a neighbouring stage has
// been (a forward after the previous stage's forward of its micro-batch, a backward after the
// next stage's backward), which orders the whole iteration topologically. Throws
// std::logic_error if the schedule deadlocks (1F1B and GPipe never do).
void run_schedule(PipelineSchedule schedule, int stages, int micro_batches,
                  const std::function<void(int stage, PipelineStep step)>& add);

}  // namespace mfabric::workload::training
