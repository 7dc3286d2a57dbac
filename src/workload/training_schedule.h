// The pipeline schedule of the training job (1F1B, GPipe, interleaved 1F1B or DualPipe): the
// virtual stages a micro-batch passes through and where they run, the order of forwards and
// backwards on each stage's compute stream, and the order in which the builder adds them so that
// every step comes after the steps of neighbouring stages it needs. Internal to the builder.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "workload/training.h"

namespace mfabric::workload::training {

// The virtual stages of a schedule. Interleaved (and, with one chunk, 1F1B and GPipe): virtual
// stage v = chunk x stages + stage runs on stage v mod stages, every micro-batch from v = 0 to the
// last, with the layers of layout chunk v (RankLayout::chunk_first_layer). DualPipe: two
// directions (chunk 0 and 1), virtual stage v = direction x stages + position; direction 0 runs
// position p on stage p, direction 1 on stage stages - 1 - p (half the micro-batches: those from
// micro_batches / 2 on); both with the layers of layout chunk p, so each stage holds two positions'
// layers (DeepSeek-V3's two copies of the parameters).
class VirtualPipeline {
 public:
  VirtualPipeline(PipelineSchedule schedule, int stages, int chunks)
      : dual_(schedule == PipelineSchedule::DualPipe),
        stages_(stages),
        chunks_(dual_ ? 2 : chunks) {}

  int virtual_stages() const { return stages_ * chunks_; }
  int virtual_stage(int stage, int chunk) const {
    return chunk * stages_ + (dual_ && chunk == 1 ? stages_ - 1 - stage : stage);
  }
  int stage_of(int v) const {
    const int position = v % stages_;
    return dual_ && v >= stages_ ? stages_ - 1 - position : position;
  }
  // Where a micro-batch enters (its first virtual stage) and leaves (the loss).
  bool first(int v) const { return dual_ ? v % stages_ == 0 : v == 0; }
  bool last(int v) const { return dual_ ? v % stages_ == stages_ - 1 : v == virtual_stages() - 1; }
  // The layout chunk whose layers virtual stage v runs.
  int layer_chunk(int v) const { return dual_ ? v % stages_ : v; }
  // The stage holding the other copy of stage s's parameters under DualPipe (s itself otherwise).
  int mirror(int stage) const { return dual_ ? stages_ - 1 - stage : stage; }
  bool dual() const { return dual_; }

 private:
  bool dual_;
  int stages_;
  int chunks_;
};

// One forward or backward of one micro-batch on one model chunk of a stage (chunk 0 but under the
// interleaved schedule, whose chunk's virtual stage is chunk x stages + stage, and DualPipe, whose
// chunk is the micro-batch's direction).
struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  // With the EP overlap (stage_schedule's ep_overlap): this step runs merged with the step before
  // it, the two as one (Megatron-Core's combined 1F1B, DualPipe's overlapped forward-backward
  // chunks): it starts when that step starts, and the step after both waits for both.
  bool with_previous = false;
  bool operator==(const PipelineStep&) const = default;
};

// The order of `stage`'s steps (of `stages`, `chunks` model chunks each) over `micro_batches`:
// GPipe all forwards then all backwards; 1F1B as many forwards as stages after this one (the
// warm-up), then a forward and a backward in turn, then the remaining backwards; interleaved as
// Megatron-LM: (stages - stage - 1) x 2 + (chunks - 1) x stages chunk forwards of warm-up (all of
// them when micro_batches == stages), forward step k on chunk (k mod (stages x chunks)) / stages
// and micro-batch (k / (stages x chunks)) x stages + k mod stages, backward step k on the chunks
// in reverse, then alternating and draining as 1F1B. Interleaved needs micro_batches to be a
// multiple of stages (TrainingSpec::micro_batches checks it). DualPipe as DeepSeek's reference
// implementation orders it (deepseek-ai/DualPipe, its eight steps), with each backward's weight
// gradient computed with it (no zero-bubble split): on stage s, h = min(s, stages - 1 - s) and
// phase 0 the direction entering on s's side, (stages / 2 - h - 1) x 2 forwards of phase 0; h + 1
// pairs of forwards of 0 and 1; stages / 2 - h - 1 of a backward of 1 and a forward of 1;
// micro_batches / 2 - stages + h + 1 of a forward of 0, a backward of 1, a forward of 1 and a
// backward of 0 (the pairs DualPipe overlaps); stages / 2 - h - 1 of a backward of 1, a forward
// of 1 and a backward of 0; h + 1 of backwards of 1 and 0; stages / 2 - h - 1 backwards of 0.
// Needs an even stages and an even micro_batches >= 2 x stages (TrainingSpec::micro_batches).
// With ep_overlap (overlap.ep_comm) the steady phase's forward-backward pairs run merged
// (PipelineStep::with_previous): 1F1B and interleaved then warm up with one forward more, as
// Megatron-Core's combined 1F1B does (schedules.py), so that a pair's forward and backward are of
// different micro-batches (on the last stage they would be the same one); DualPipe merges the
// pairs its reference implementation overlaps (step 4's two, step 5's forward of 1 and backward of
// 0) and keeps its order. GPipe has no pairs: its steps run one after another.
std::vector<PipelineStep> stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                         int micro_batches, int chunks = 1,
                                         bool ep_overlap = false);

// Calls add(stage, steps) for every step of every stage, each stage's in its schedule order:
// `steps` is one step, or with ep_overlap a forward and the backward merged with it
// (PipelineStep::with_previous), added together once both can be. Stages advance in turn; a step
// is added once the step it needs from a neighbouring virtual stage has been (a forward after the
// previous virtual stage's forward of its micro-batch, a backward after the next one's backward),
// which orders the whole iteration topologically. Throws std::logic_error if the schedule
// deadlocks (none does).
void run_schedule(PipelineSchedule schedule, int stages, int micro_batches, int chunks,
                  bool ep_overlap,
                  const std::function<void(int stage, std::span<const PipelineStep> steps)>& add);

}  // namespace mfabric::workload::training
