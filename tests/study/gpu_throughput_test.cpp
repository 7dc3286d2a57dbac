// Tokens/s, model TFLOP/s and MFU per GPU (study/gpu_throughput.h), from the job's shape and
// the iteration time by formula.
#include "study/gpu_throughput.h"

#include <gtest/gtest.h>

namespace mfabric::study {
namespace {

config::Experiment mixtral_job() {
  config::Experiment e;
  e.gpu = "h800";
  config::TrainingJob w;
  w.model = "mixtral-8x7b";
  w.tp = 4;
  w.pp = 4;
  w.ep = 8;
  w.micro_batch = 8;
  w.global_batch = 128;
  w.seq = 4096;
  w.convention = "paper";
  e.model = w;
  return e;
}

// 128 sequences x EP 8 x 4096 tokens = 4,194,304 tokens per iteration (each EP rank runs its
// own micro-batches, docs/workload.md); over 10 s and 128 GPUs 3,276.8 tokens/s per GPU. At
// 79,706,456,064 training FLOPs per token (Mixtral 8x7B at seq 4096, worked out in
// tests/workload/model_flops_test.cpp) that is 261.18 TFLOP/s per GPU, of the H800's dense
// bf16 989 TFLOP/s.
TEST(GpuThroughput, TokensFlopsAndMfuPerGpu) {
  const std::optional<GpuThroughput> t = gpu_throughput(mixtral_job(), 128, 10.0);
  ASSERT_TRUE(t);
  const double tokens_per_s_per_gpu = 128.0 * 8 * 4096 / 10 / 128;
  EXPECT_DOUBLE_EQ(t->tokens_per_s_per_gpu, tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(t->model_tflops_per_gpu, tokens_per_s_per_gpu * 79'706'456'064.0 / 1e12);
  EXPECT_DOUBLE_EQ(t->mfu, t->model_tflops_per_gpu * 1e12 / 989e12);
  EXPECT_NEAR(t->mfu, 0.2641, 1e-4);
}

// Under Megatron's convention the global batch is the job's: 128 x 4096 tokens per iteration,
// an eighth of the paper's reading of the same degrees.
TEST(GpuThroughput, MegatronCountsTheGlobalBatchOnce) {
  config::Experiment e = mixtral_job();
  e.model->convention = "megatron";
  const std::optional<GpuThroughput> t = gpu_throughput(e, 128, 10.0);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->tokens_per_s_per_gpu, 128.0 * 4096 / 10 / 128);
}

// Without a model (a micro-benchmark) or without time or GPUs there are no such figures.
TEST(GpuThroughput, NoneWithoutAModelTimeOrGpus) {
  config::Experiment micro = mixtral_job();
  micro.model.reset();
  EXPECT_FALSE(gpu_throughput(micro, 128, 10.0));
  EXPECT_FALSE(gpu_throughput(mixtral_job(), 0, 10.0));
  EXPECT_FALSE(gpu_throughput(mixtral_job(), 128, 0.0));
}

}  // namespace
}  // namespace mfabric::study
