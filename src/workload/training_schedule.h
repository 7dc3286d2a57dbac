// The pipeline schedule of the training job (1F1B, GPipe or interleaved 1F1B): the order of
// forwards and backwards on each stage's compute stream, and the order in which the builder adds
// them so that every step comes after the steps of neighbouring stages it needs. Internal to the
// builder.
#pragma once

#include <functional>
#include <vector>

#include "workload/training.h"

namespace mfabric::workload::training {

// One forward or backward of one micro-batch on one model chunk of a stage (chunk 0 but under the
// interleaved schedule; the chunk's virtual stage is chunk x stages + stage).
struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  bool operator==(const PipelineStep&) const = default;
};

// The order of `stage`'s steps (of `stages`, `chunks` model chunks each) over `micro_batches`:
// GPipe all forwards then all backwards; 1F1B as many forwards as stages after this one (the
// warm-up), then a forward and a backward in turn, then the remaining backwards; interleaved as
// Megatron-LM: (stages - stage - 1) x 2 + (chunks - 1) x stages chunk forwards of warm-up (all of
// them when micro_batches == stages), forward step k on chunk (k mod (stages x chunks)) / stages
// and micro-batch (k / (stages x chunks)) x stages + k mod stages, backward step k on the chunks
// in reverse, then alternating and draining as 1F1B. Interleaved needs micro_batches to be a
// multiple of stages (TrainingSpec::micro_batches checks it).
std::vector<PipelineStep> stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                         int micro_batches, int chunks = 1);

// Calls add(stage, step) for every step of every stage, each stage's in its schedule order.
// Stages advance in turn; a step is added once the step it needs from a neighbouring virtual
// stage has been (a forward after the previous virtual stage's forward of its micro-batch, a
// backward after the next one's backward), which orders the whole iteration topologically.
// Throws std::logic_error if the schedule deadlocks (none of the three does).
void run_schedule(PipelineSchedule schedule, int stages, int micro_batches, int chunks,
                  const std::function<void(int stage, PipelineStep step)>& add);

}  // namespace mfabric::workload::training
