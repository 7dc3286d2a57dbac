// The training graph builder's parts on their own: the pipeline schedule and the task helpers
// every part adds through (training_schedule.h, training_tasks.h). The graphs they build
// together are tested in training_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "tiny_model.h"
#include "workload/training_schedule.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {
namespace {

std::vector<TaskId> deps_of(const TaskGraph& g, TaskId id) {
  const auto d = g.deps(id);
  return {d.begin(), d.end()};
}

PipelineStep F(int mb) {
  return {true, mb};
}
PipelineStep B(int mb) {
  return {false, mb};
}

TEST(StageSchedule, GPipeRunsEveryForwardThenEveryBackward) {
  EXPECT_EQ(stage_schedule(PipelineSchedule::GPipe, 4, 1, 3),
            (std::vector<PipelineStep>{F(0), F(1), F(2), B(0), B(1), B(2)}));
}

TEST(StageSchedule, OneFOneBWarmsUpWithAForwardPerStageAfterIt) {
  // Stage 0 of 4: three forwards, then one forward and one backward in turn, then the rest.
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 0, 4),
            (std::vector<PipelineStep>{F(0), F(1), F(2), F(3), B(0), B(1), B(2), B(3)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 2, 4),
            (std::vector<PipelineStep>{F(0), F(1), B(0), F(2), B(1), F(3), B(2), B(3)}));
  // The last stage alternates from the start.
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 3, 2),
            (std::vector<PipelineStep>{F(0), B(0), F(1), B(1)}));
  // Fewer micro-batches than the warm-up wants: only as many forwards as there are.
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 0, 2),
            (std::vector<PipelineStep>{F(0), F(1), B(0), B(1)}));
}

// Megatron-LM's interleaved 1F1B by hand: PP 2, VP 2, 4 micro-batches. Stage 0 warms up with
// (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 chunk forwards: micro-batches 0, 1 on chunk 0, then 0, 1 on
// chunk 1; backward steps visit chunk 1 first. Stage 1 warms up with 2.
TEST(StageSchedule, InterleavedFollowsMegatronsOrder) {
  const auto f = [](int mb, int chunk) { return PipelineStep{true, mb, chunk}; };
  const auto b = [](int mb, int chunk) { return PipelineStep{false, mb, chunk}; };
  EXPECT_EQ(stage_schedule(PipelineSchedule::Interleaved, 2, 0, 4, 2),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(0, 1), f(1, 1), f(2, 0), b(0, 1),
                                       f(3, 0), b(1, 1), f(2, 1), b(0, 0), f(3, 1), b(1, 0),
                                       b(2, 1), b(3, 1), b(2, 0), b(3, 0)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::Interleaved, 2, 1, 4, 2),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(0, 1), b(0, 1), f(1, 1), b(1, 1),
                                       f(2, 0), b(0, 0), f(3, 0), b(1, 0), f(2, 1), b(2, 1),
                                       f(3, 1), b(3, 1), b(2, 0), b(3, 0)}));
  // As many micro-batches as stages: all forwards first.
  const auto all = stage_schedule(PipelineSchedule::Interleaved, 2, 1, 2, 2);
  EXPECT_EQ(
      std::count_if(all.begin(), all.begin() + 4, [](const PipelineStep& s) { return s.forward; }),
      4);
}

// With the EP overlap (Megatron-Core's combined 1F1B) the steady phase's forward and backward run
// merged (`M`: with_previous) and the warm-up has one forward more, so that no pair is one
// micro-batch's forward and backward: PP 4, 6 micro-batches; stage 0 warms up with 4, the last
// stage with 1 (without the overlap its first pair would be F(0) B(0)). GPipe has no pairs.
TEST(StageSchedule, EpOverlapMergesTheSteadyPairsAfterOneMoreWarmUpForward) {
  const auto M = [](int mb) { return PipelineStep{false, mb, 0, true}; };
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 0, 6, 1, true),
            (std::vector<PipelineStep>{F(0), F(1), F(2), F(3), F(4), M(0), F(5), M(1), B(2), B(3),
                                       B(4), B(5)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 4, 3, 6, 1, true),
            (std::vector<PipelineStep>{F(0), F(1), M(0), F(2), M(1), F(3), M(2), F(4), M(3), F(5),
                                       M(4), B(5)}));
  // PP 1 (Megatron's no-pipelining case): the first forward alone, then pairs.
  EXPECT_EQ(stage_schedule(PipelineSchedule::OneFOneB, 1, 0, 3, 1, true),
            (std::vector<PipelineStep>{F(0), F(1), M(0), F(2), M(1), B(2)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::GPipe, 4, 1, 2, 1, true),
            (std::vector<PipelineStep>{F(0), F(1), B(0), B(1)}));
  // Interleaved, PP 2, VP 2, 4 micro-batches: stage 1 (the last) warms up with 2 + 1 chunk
  // forwards, so its first pair is micro-batch 1's forward on chunk 1 with 0's backward there.
  const auto f = [](int mb, int chunk) { return PipelineStep{true, mb, chunk}; };
  const auto b = [](int mb, int chunk) { return PipelineStep{false, mb, chunk}; };
  const auto m = [](int mb, int chunk) { return PipelineStep{false, mb, chunk, true}; };
  EXPECT_EQ(stage_schedule(PipelineSchedule::Interleaved, 2, 1, 4, 2, true),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(0, 1), f(1, 1), m(0, 1), f(2, 0),
                                       m(1, 1), f(3, 0), m(0, 0), f(2, 1), m(1, 0), f(3, 1),
                                       m(2, 1), b(3, 1), b(2, 0), b(3, 0)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::Interleaved, 2, 0, 4, 2, true),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(0, 1), f(1, 1), f(2, 0), f(3, 0),
                                       m(0, 1), f(2, 1), m(1, 1), f(3, 1), m(0, 0), b(1, 0),
                                       b(2, 1), b(3, 1), b(2, 0), b(3, 0)}));
}

// Every step once, after the step of the neighbouring virtual stage it needs, for each schedule.
TEST(RunSchedule, InterleavedAddsEveryChunkStepAfterItsNeighbours) {
  for (const bool ep_overlap : {false, true}) {
    const int stages = 4, m = 8, chunks = 3, virtual_stages = stages * chunks;
    std::map<std::pair<int, int>, int> forward_at, backward_at;  // (virtual stage, mb) -> position
    int position = 0;
    run_schedule(
        PipelineSchedule::Interleaved, stages, m, chunks, ep_overlap,
        [&](int s, std::span<const PipelineStep> steps) {
          for (const PipelineStep& step : steps) {
            auto& at = step.forward ? forward_at : backward_at;
            const int v = step.chunk * stages + s;
            EXPECT_TRUE(at.emplace(std::make_pair(v, step.micro_batch), position++).second);
          }
        });
    EXPECT_EQ(position, 2 * virtual_stages * m);
    for (int v = 0; v < virtual_stages; ++v) {
      for (int mb = 0; mb < m; ++mb) {
        if (v > 0) {
          EXPECT_LT(forward_at.at({v - 1, mb}), forward_at.at({v, mb}));
        }
        if (v < virtual_stages - 1) {
          EXPECT_LT(backward_at.at({v + 1, mb}), backward_at.at({v, mb}));
        }
        EXPECT_LT(forward_at.at({v, mb}), backward_at.at({v, mb}));
      }
    }
  }
}

TEST(RunSchedule, AddsEveryStepOnceAfterTheNeighbouringStepsItNeeds) {
  for (const bool ep_overlap : {false, true})
    for (PipelineSchedule schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe}) {
      const int stages = 4, m = 5;
      std::map<std::pair<int, int>, int> forward_at, backward_at;  // (stage, mb) -> position
      std::vector<std::vector<PipelineStep>> per_stage(stages);
      int position = 0;
      run_schedule(
          schedule, stages, m, 1, ep_overlap, [&](int s, std::span<const PipelineStep> steps) {
            for (const PipelineStep& step : steps) {
              auto& at = step.forward ? forward_at : backward_at;
              EXPECT_TRUE(at.emplace(std::make_pair(s, step.micro_batch), position++).second);
              per_stage[static_cast<std::size_t>(s)].push_back(step);
            }
          });
      EXPECT_EQ(position, 2 * stages * m);
      for (int s = 0; s < stages; ++s) {
        EXPECT_EQ(per_stage[static_cast<std::size_t>(s)],
                  stage_schedule(schedule, stages, s, m, 1, ep_overlap));
        for (int mb = 0; mb < m; ++mb) {
          if (s > 0) {
            EXPECT_LT(forward_at.at({s - 1, mb}), forward_at.at({s, mb}));
          }
          if (s < stages - 1) {
            EXPECT_LT(backward_at.at({s + 1, mb}), backward_at.at({s, mb}));
          }
        }
      }
    }
}

// DualPipe as DeepSeek's reference implementation orders it, by hand from its eight steps (the
// header's rules): PP 4, 8 micro-batches, 0-3 entering at stage 0 (direction 0), 4-7 at stage 3.
// Stage 0 (h = 0): 2 forwards of 0; a pair of forwards; a backward and a forward of 1; one main
// step F0 B1 F1 B0; a B1 F1 B0; a B1 B0; a B0. Stage 1 (h = 1): two pairs of forwards, two main
// steps, two B1 B0.
TEST(StageSchedule, DualPipeFollowsDeepSeeksOrder) {
  const auto f = [](int mb, int d) { return PipelineStep{true, mb, d}; };
  const auto b = [](int mb, int d) { return PipelineStep{false, mb, d}; };
  EXPECT_EQ(stage_schedule(PipelineSchedule::DualPipe, 4, 0, 8),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(2, 0), f(4, 1), b(4, 1), f(5, 1),
                                       f(3, 0), b(5, 1), f(6, 1), b(0, 0), b(6, 1), f(7, 1),
                                       b(1, 0), b(7, 1), b(2, 0), b(3, 0)}));
  EXPECT_EQ(stage_schedule(PipelineSchedule::DualPipe, 4, 1, 8),
            (std::vector<PipelineStep>{f(0, 0), f(4, 1), f(1, 0), f(5, 1), f(2, 0), b(4, 1),
                                       f(6, 1), b(0, 0), f(3, 0), b(5, 1), f(7, 1), b(1, 0),
                                       b(6, 1), b(2, 0), b(7, 1), b(3, 0)}));
  // The second half mirrors the first, the directions swapped: stage 3 runs stage 0's order
  // with direction 1 as its phase 0.
  const auto mirrored = stage_schedule(PipelineSchedule::DualPipe, 4, 3, 8);
  const auto first = stage_schedule(PipelineSchedule::DualPipe, 4, 0, 8);
  ASSERT_EQ(mirrored.size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(mirrored[i].forward, first[i].forward);
    EXPECT_EQ(mirrored[i].chunk, 1 - first[i].chunk);
    EXPECT_EQ(mirrored[i].micro_batch, (first[i].micro_batch + 4) % 8);
  }
  // With the EP overlap, the same order with the pairs the reference implementation overlaps
  // merged: step 4's F0 B1 and F1 B0, step 5's F1 B0; step 3's B1 F1 and step 6 run alone.
  const auto m = [](int mb, int d) { return PipelineStep{false, mb, d, true}; };
  EXPECT_EQ(stage_schedule(PipelineSchedule::DualPipe, 4, 0, 8, 1, true),
            (std::vector<PipelineStep>{f(0, 0), f(1, 0), f(2, 0), f(4, 1), b(4, 1), f(5, 1),
                                       f(3, 0), m(5, 1), f(6, 1), m(0, 0), b(6, 1), f(7, 1),
                                       m(1, 0), b(7, 1), b(2, 0), b(3, 0)}));
}

// Every step of both directions once, after the neighbouring virtual stage's it needs: direction
// 0 runs position p on stage p, direction 1 on stage PP - 1 - p.
TEST(RunSchedule, DualPipeRunsBothDirectionsWithoutDeadlock) {
  for (const auto& shape :
       {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 10}, std::pair{8, 20}, std::pair{16, 32}}) {
    // Plain variables: a lambda below uses them (clang does not capture structured bindings).
    const int stages = shape.first, m = shape.second;
    const VirtualPipeline pipeline(PipelineSchedule::DualPipe, stages, 1);
    std::map<std::pair<int, int>, int> forward_at, backward_at;  // (virtual stage, mb) -> position
    int position = 0;
    run_schedule(
        PipelineSchedule::DualPipe, stages, m, 1, true,
        [&](int s, std::span<const PipelineStep> steps) {
          for (const PipelineStep& step : steps) {
            EXPECT_EQ(step.chunk, step.micro_batch < m / 2 ? 0 : 1);
            const int v = pipeline.virtual_stage(s, step.chunk);
            EXPECT_EQ(pipeline.stage_of(v), s);
            auto& at = step.forward ? forward_at : backward_at;
            EXPECT_TRUE(at.emplace(std::make_pair(v, step.micro_batch), position++).second);
          }
        });
    ASSERT_EQ(position, 2 * stages * m) << stages << " stages";
    for (const auto& [key, at] : forward_at) {
      const auto [v, mb] = key;
      if (!pipeline.first(v)) {
        EXPECT_LT(forward_at.at({v - 1, mb}), at);
      }
      if (!pipeline.last(v)) {
        EXPECT_LT(backward_at.at({v + 1, mb}), backward_at.at({v, mb}));
      }
      EXPECT_LT(at, backward_at.at({v, mb}));
    }
  }
}

class TrainingTasksTest : public ::testing::Test {
 protected:
  ParallelismSpec p_ = paper_parallelism(2, 2, 2, 1);
  ModelSpec model_ = testing::tiny_model();
  RankLayout layout_{p_, model_, 4};
};

TEST_F(TrainingTasksTest, ComputeChainsToTheGpusPreviousComputeAndItsPendingDependencies) {
  TrainingTasks tasks(p_, layout_);
  const TaskId a = tasks.compute(0, -1, Op::Attention, Phase::Forward, 0, 0, Time::microseconds(1));
  EXPECT_TRUE(deps_of(tasks.graph(), a).empty());
  const TaskId other = tasks.compute(1, -1, Op::Attention, Phase::Forward, 0, 0, Time::zero());
  tasks.pending(0).push_back(other);
  tasks.pending(0).push_back(a);  // repeated: kept once
  const TaskId b = tasks.compute(0, a, Op::Router, Phase::Forward, 0, 0, Time::zero());
  EXPECT_EQ(deps_of(tasks.graph(), b), (std::vector<TaskId>{a, other}));
  EXPECT_TRUE(tasks.pending(0).empty());  // handed over once
  EXPECT_EQ(tasks.last_compute(0), b);
  EXPECT_EQ(tasks.graph().task(b).gpu(), 0);
  EXPECT_EQ(tasks.graph().task(b).op, Op::Router);
}

TEST_F(TrainingTasksTest, TasksAreStampedWithTheirIteration) {
  TrainingTasks tasks(p_, layout_);
  tasks.set_iteration(3);
  const TaskId t = tasks.p2p(0, 4, Op::PpActivation, Phase::Forward, 2, Bytes(64), -1);
  const Task& task = tasks.graph().task(t);
  EXPECT_EQ(task.iteration, 3);
  EXPECT_EQ(task.micro_batch, 2);
  EXPECT_EQ(task.layer, -1);
  EXPECT_EQ(task.kind, TaskKind::P2P);
  EXPECT_EQ(task.traffic, Traffic::PP);
  EXPECT_EQ(task.peer(), 4);
}

TEST_F(TrainingTasksTest, WhatDependsOnAPipelinedComputeDependsOnItsAllReduceToo) {
  TrainingTasks tasks(p_, layout_);
  const TaskId x = tasks.compute(0, -1, Op::Attention, Phase::Forward, 0, 0, Time::zero());
  const TaskId ar = tasks.collective(CollectiveKind::AllReduce, Op::TpAllReduce, Traffic::TP,
                                     Phase::Forward, 0, 0, {0, 1}, Bytes(64), -1, {});
  tasks.pipeline_with(x, ar);
  std::vector<TaskId> deps;
  tasks.also_overlapped(x, deps);
  EXPECT_EQ(deps, (std::vector<TaskId>{ar}));
  const TaskId sent = tasks.p2p(0, 4, Op::PpActivation, Phase::Forward, 0, Bytes(64), x);
  EXPECT_EQ(deps_of(tasks.graph(), sent), (std::vector<TaskId>{x, ar}));
  deps.clear();
  tasks.also_overlapped(ar, deps);  // an all-reduce stands for nothing else
  tasks.also_overlapped(-1, deps);
  EXPECT_TRUE(deps.empty());
}

TEST_F(TrainingTasksTest, AStagesGpusAreVisitedOnceEachByLocalIndex) {
  TrainingTasks tasks(p_, layout_);
  EXPECT_EQ(tasks.stage_gpus(), 4);
  std::vector<int> seen(4, -1);
  tasks.each_gpu(1, [&](int g, std::size_t i, int ep) {
    ASSERT_LT(i, seen.size());
    EXPECT_EQ(seen[i], -1);
    seen[i] = g;
    EXPECT_EQ(layout_.coord(g).pp, 1);
    EXPECT_EQ(layout_.expert_coord(g).ep, ep);
    EXPECT_EQ(static_cast<int>(i), layout_.local(g));
  });
  for (int g : seen)
    EXPECT_GE(g, 0);
}

}  // namespace
}  // namespace mfabric::workload::training
