// How busy a run keeps its GPUs and why they idle (study/gpu_busy.h), on hand-made graphs and
// run results.
#include "study/gpu_busy.h"

#include <gtest/gtest.h>

namespace mfabric::study {
namespace {

// Mixtral 8x7B on 2 GPUs: PP 2 (TP 1, EP 1, DP 1), 4 micro-batches of 1 per iteration.
config::Experiment two_stage_job() {
  config::Experiment e;
  e.cluster.gpus_per_server = 8;
  config::TrainingJob w;
  w.model = "mixtral-8x7b";
  w.pp = 2;
  w.micro_batch = 1;
  w.global_batch = 4;
  w.seq = 16;
  e.model = w;
  return e;
}

// Compute tasks of `seconds` each on `gpu`.
void add_compute(workload::TaskGraph& g, int gpu, std::initializer_list<std::int64_t> seconds) {
  for (const std::int64_t s : seconds) {
    workload::Task t;
    t.set_gpu(gpu);
    t.set_duration(Time::milliseconds(1000 * s));
    g.add(t);
  }
}

sim::RunResult run_of(std::initializer_list<std::int64_t> iteration_s, std::int64_t exposed_ms) {
  sim::RunResult r;
  for (const std::int64_t s : iteration_s)
    r.iteration_times.push_back(Time::milliseconds(1000 * s));
  r.exposed_comm = Time::milliseconds(exposed_ms);
  return r;
}

// Stage 0 computes 6 s and stage 1 2 s of two 4 s iterations: 75% and 25%, 50% on average. The
// bubble of 2 stages over 4 micro-batches is 1 / 5; 0.5 s of communication per iteration is
// 12.5% of it and a quarter of the idle half; the rest, 50 - 20 - 12.5 = 17.5%, is waiting for
// the other GPUs.
TEST(GpuBusy, PerGpuAndStageAndWhyTheyIdle) {
  workload::TaskGraph g(2);
  add_compute(g, 0, {2, 3, 1});
  add_compute(g, 1, {1, 1});
  const std::optional<GpuBusy> b = gpu_busy(two_stage_job(), g, run_of({4, 4}, 500), {});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->busy_fraction, 0.5);
  EXPECT_EQ(b->busiest.stage, 0);
  EXPECT_DOUBLE_EQ(b->busiest.busy_fraction, 0.75);
  EXPECT_EQ(b->least_busy.stage, 1);
  EXPECT_DOUBLE_EQ(b->least_busy.busy_fraction, 0.25);
  EXPECT_EQ(b->stages, 2);
  EXPECT_EQ(b->micro_batches, 4);
  EXPECT_DOUBLE_EQ(b->bubble_fraction, 0.2);
  EXPECT_DOUBLE_EQ(b->comm_wait_fraction, 0.125);
  EXPECT_DOUBLE_EQ(b->idle_comm_share, 0.25);
  EXPECT_NEAR(b->other_wait_fraction, 0.175, 1e-12);
  // Busy half the time: no warning.
  EXPECT_FALSE(idle_warning(*b));
}

// A rank on a spare: its compute is on the spare's GPU, and counts for its own stage.
TEST(GpuBusy, ARankOnASpareKeepsItsStage) {
  workload::TaskGraph g(2);
  add_compute(g, 0, {1});
  add_compute(g, 1, {3});
  const std::vector<std::int32_t> gpu_of = {0, 5};
  g.move_gpus(gpu_of, 8);
  const std::optional<GpuBusy> b =
      gpu_busy(two_stage_job(), g, run_of({4}, 0), {sim::SpareMove{0, 1, 5}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->busiest.stage, 1);
  EXPECT_DOUBLE_EQ(b->busiest.busy_fraction, 0.75);
  EXPECT_DOUBLE_EQ(b->busy_fraction, 0.5);
}

// Below half busy the warning names each reason of 1% or more, the first as a share of the
// iteration.
TEST(GpuBusy, WarningSaysWhy) {
  GpuBusy b;
  b.busy_fraction = 0.14;
  b.stages = 16;
  b.micro_batches = 8;
  b.bubble_fraction = 15.0 / 23;
  b.comm_wait_fraction = 0.15;
  b.other_wait_fraction = 0.06;
  EXPECT_EQ(idle_warning(b).value_or(""),
            "GPUs compute 14% of the iteration: pipeline bubbles (8 micro-batches for 16 stages: "
            "65% of the iteration), waiting for communication (15%) and waiting for other GPUs "
            "(6%)");
  b.stages = 1;
  b.bubble_fraction = 0;
  b.other_wait_fraction = 0.001;
  EXPECT_EQ(idle_warning(b).value_or(""),
            "GPUs compute 14% of the iteration: waiting for communication (15% of the iteration)");
}

// A micro-benchmark (no model) and a run without time have no such figures.
TEST(GpuBusy, NoneWithoutAModelOrTime) {
  workload::TaskGraph g(2);
  config::Experiment micro = two_stage_job();
  micro.model.reset();
  EXPECT_FALSE(gpu_busy(micro, g, run_of({4}, 0), {}));
  EXPECT_FALSE(gpu_busy(two_stage_job(), g, run_of({}, 0), {}));
}

}  // namespace
}  // namespace mfabric::study
