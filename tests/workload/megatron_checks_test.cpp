// What Megatron-Core refuses of the EP overlap: its TransformerConfig's assertions, each case
// set up by hand.
#include "workload/megatron_checks.h"

#include <gtest/gtest.h>

#include <string>

#include "workload/model.h"
#include "workload/parallelism.h"

namespace mfabric::workload {
namespace {

TrainingSpec overlapped(int pp, int ep, PipelineSchedule schedule) {
  TrainingSpec spec;
  spec.model = load_model("mixtral-8x7b");
  spec.parallelism = megatron_parallelism(1, pp, ep, 8);
  spec.schedule = schedule;
  spec.overlap.ep_comm = true;
  return spec;
}

bool mentions(const std::vector<std::string>& sentences, const std::string& word) {
  for (const std::string& s : sentences) {
    if (s.find(word) != std::string::npos) return true;
  }
  return false;
}

TEST(MegatronRefusals, NoneWithoutTheEpOverlap) {
  TrainingSpec spec = overlapped(4, 1, PipelineSchedule::OneFOneB);
  spec.recompute = Recompute::Full;
  spec.overlap.ep_comm = false;
  EXPECT_TRUE(megatron_refusals(spec).empty());
}

TEST(MegatronRefusals, TheOverlapWithPipelineStagesNeedsTheInterleavedSchedule) {
  const auto plain = megatron_refusals(overlapped(4, 8, PipelineSchedule::OneFOneB));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_TRUE(mentions(plain, "interleaved")) << plain[0];
  EXPECT_TRUE(mentions(plain, "PP 4")) << plain[0];
  EXPECT_EQ(megatron_refusals(overlapped(4, 8, PipelineSchedule::GPipe)).size(), 1u);
  TrainingSpec interleaved = overlapped(4, 8, PipelineSchedule::Interleaved);
  interleaved.parallelism.vp = 2;
  EXPECT_TRUE(megatron_refusals(interleaved).empty());
  // One stage: Megatron-Core's combined 1F1B without pipelining.
  EXPECT_TRUE(megatron_refusals(overlapped(1, 8, PipelineSchedule::OneFOneB)).empty());
}

TEST(MegatronRefusals, TheOverlapNeedsExpertParallelismAndNoFullRecomputation) {
  const auto no_ep = megatron_refusals(overlapped(1, 1, PipelineSchedule::OneFOneB));
  ASSERT_EQ(no_ep.size(), 1u);
  EXPECT_TRUE(mentions(no_ep, "EP 1")) << no_ep[0];
  TrainingSpec full = overlapped(1, 8, PipelineSchedule::OneFOneB);
  full.recompute = Recompute::Full;
  const auto recomputed = megatron_refusals(full);
  ASSERT_EQ(recomputed.size(), 1u);
  EXPECT_TRUE(mentions(recomputed, "full recomputation")) << recomputed[0];
  full.recompute = Recompute::Selective;
  EXPECT_TRUE(megatron_refusals(full).empty());
  // All three at once, in a fixed order.
  TrainingSpec all = overlapped(2, 1, PipelineSchedule::OneFOneB);
  all.recompute = Recompute::Full;
  const auto three = megatron_refusals(all);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_TRUE(mentions({three[0]}, "interleaved"));
  EXPECT_TRUE(mentions({three[1]}, "EP 1"));
  EXPECT_TRUE(mentions({three[2]}, "full recomputation"));
}

TEST(MegatronRefusals, DualPipeIsDeepSeeksScheduleNotMegatrons) {
  TrainingSpec spec = overlapped(4, 8, PipelineSchedule::DualPipe);
  spec.recompute = Recompute::Full;
  EXPECT_TRUE(megatron_refusals(spec).empty());
}

}  // namespace
}  // namespace mfabric::workload
