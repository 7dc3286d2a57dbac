// Size guards: the job-size estimate against built graphs, the refusal above the limit, and the
// order in which parallelism degrees are checked (each names the real problem first).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "workload/model.h"
#include "workload/parallelism.h"
#include "workload/training.h"

namespace mfabric::workload {
namespace {

TrainingSpec spec_for(const std::string& model, ParallelismSpec p, int micro_batches,
                      int iterations = 1) {
  TrainingSpec spec;
  spec.model = load_model(model);
  spec.parallelism = p;
  spec.gpus_per_server = 8;
  spec.micro_batch = 1;
  spec.seq = 512;
  spec.global_batch = micro_batches * p.dp;
  spec.iterations = iterations;
  spec.gpu = find_gpu("h800");
  return spec;
}

// Builds the graph and compares it with the estimate: the estimate is an upper bound within 60%
// of the real task count, and counts the all-to-all-v matrices exactly.
void expect_estimate_bounds(const TrainingSpec& spec) {
  const JobSize size = estimate_job_size(spec);
  const RoutingTrace trace = synthetic_trace_for(spec, SyntheticRouting{}, 1);
  const TaskGraph g = build_training_graph(spec, trace);
  const auto tasks = static_cast<std::int64_t>(g.size());
  SCOPED_TRACE(spec.model.name + " tp " + std::to_string(spec.parallelism.tp) + " pp " +
               std::to_string(spec.parallelism.pp) + " ep " + std::to_string(spec.parallelism.ep) +
               " dp " + std::to_string(spec.parallelism.dp));
  EXPECT_GE(size.tasks, tasks);
  EXPECT_LE(static_cast<double>(size.tasks), 1.6 * static_cast<double>(tasks));
  EXPECT_EQ(size.matrices, static_cast<std::int64_t>(g.matrix_count()));
  EXPECT_EQ(size.trace_bytes,
            routing_trace_bytes(trace.ep(), trace.experts(), trace.iterations(),
                                static_cast<int>(trace.layers().size()), trace.micro_batches()));
  // Above the measured peaks (79-82 bytes a task without spans, docs/workload.md).
  EXPECT_GT(size.memory_bytes, size.tasks * 82);
}

TEST(JobSize, EstimateBoundsTheBuiltGraph) {
  expect_estimate_bounds(spec_for("mixtral-8x7b", paper_parallelism(4, 4, 8, 1), 4));
  expect_estimate_bounds(spec_for("mixtral-8x7b", paper_parallelism(1, 1, 8, 2), 2, 2));
  expect_estimate_bounds(spec_for("mixtral-8x22b", paper_parallelism(8, 8, 8, 1), 8));
  expect_estimate_bounds(spec_for("qwen-moe", paper_parallelism(1, 2, 16, 1), 3));
  // Dense layers and shared experts.
  expect_estimate_bounds(spec_for("deepseek-r1", paper_parallelism(1, 4, 8, 1), 2));
  // Context parallelism's exchanges, and full recomputation's second forward.
  expect_estimate_bounds(spec_for("mixtral-8x7b", megatron_parallelism(2, 2, 8, 2, 1, 2), 2));
  TrainingSpec recomputed = spec_for("mixtral-8x7b", paper_parallelism(4, 4, 8, 1), 4);
  recomputed.recompute = Recompute::Full;
  expect_estimate_bounds(recomputed);
}

// A run that keeps no task spans is estimated lower, by the spans' bytes a task (measured, as the
// constants' comment says), and both estimates count the same tasks, matrices and trace.
TEST(JobSize, AJobWithoutTaskSpansIsEstimatedSmaller) {
  const TrainingSpec spec = spec_for("mixtral-8x7b", paper_parallelism(4, 4, 8, 1), 4);
  const JobSize with = estimate_job_size(spec, TaskSpans::Recorded);
  const JobSize without = estimate_job_size(spec, TaskSpans::NotRecorded);
  EXPECT_EQ(with.tasks, without.tasks);
  EXPECT_EQ(with.matrices, without.matrices);
  EXPECT_EQ(with.trace_bytes, without.trace_bytes);
  EXPECT_EQ(with.memory_bytes - without.memory_bytes, with.tasks * 90);
  EXPECT_GT(without.memory_bytes, without.tasks * 80);
  // The check uses the estimate it is given: a limit between the two refuses only the run that
  // keeps spans.
  const Bytes between((with.memory_bytes + without.memory_bytes) / 2);
  EXPECT_THROW(check_job_size(spec, between, "max_memory"), Error);
  EXPECT_NO_THROW(check_job_size(spec, between, "max_memory", "", TaskSpans::NotRecorded));
}

TEST(JobSize, RefusesAJobAboveTheLimitWithTheEstimateAndTheOption) {
  const TrainingSpec spec = spec_for("mixtral-8x7b", paper_parallelism(4, 4, 8, 1), 4);
  const JobSize size = estimate_job_size(spec);
  EXPECT_NO_THROW(check_job_size(spec, Bytes(size.memory_bytes), "max_memory"));
  try {
    check_job_size(spec, Bytes(size.memory_bytes - 1), "max_memory", "--max-memory");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "max_memory");
    EXPECT_NE(e.message().find("estimated"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("raise --max-memory"), std::string::npos) << e.what();
  }
}

TEST(JobSize, HostileShapesAreRefusedBeforeAnythingIsAllocated) {
  // 100 million sequences in micro-batches of 1 on 8 GPUs: 12.5 million micro-batches.
  TrainingSpec spec = spec_for("mixtral-8x7b", paper_parallelism(1, 1, 8, 1), 1);
  spec.global_batch = 100'000'000;
  try {
    check_job_size(spec, Bytes(kDefaultMaxJobMemory), "max_memory");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "global_batch") << e.what();
  }
  // Within the index range but far above memory: 10000 iterations of 32767 micro-batches.
  spec.global_batch = 32767;
  spec.iterations = kMaxIterations;
  EXPECT_THROW(check_job_size(spec, Bytes(kDefaultMaxJobMemory), "max_memory"), Error);
  // The trace size saturates instead of overflowing.
  EXPECT_GT(routing_trace_bytes(1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30), 0);
}

// Which field the error of resolve_parallelism names.
std::string field_of(int tp, int pp, int ep, std::optional<int> dp, int gpus,
                     const std::string& model) {
  try {
    resolve_parallelism(paper_parallelism(tp, pp, ep, 1), dp, gpus, load_model(model), 8);
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

TEST(ResolveParallelism, EachDegreeIsCheckedBeforeTheGpuCount) {
  // 128 GPUs are not a multiple of 3 x 4 x 8, but the real problem is tp 3 on 8-GPU servers.
  EXPECT_EQ(field_of(3, 4, 8, std::nullopt, 128, "mixtral-8x7b"), "tp");
  // ep 16 with Mixtral's 8 experts, on 32 GPUs.
  EXPECT_EQ(field_of(1, 1, 16, std::nullopt, 32, "mixtral-8x7b"), "ep");
  // pp 48 with 32 layers, on 32 GPUs.
  EXPECT_EQ(field_of(1, 48, 1, std::nullopt, 32, "mixtral-8x7b"), "pp");
  // Valid degrees that do not fit the GPUs.
  EXPECT_EQ(field_of(4, 4, 8, std::nullopt, 96, "mixtral-8x7b"), "gpus");
  EXPECT_EQ(field_of(4, 4, 8, 3, 128, "mixtral-8x7b"), "dp");
  EXPECT_EQ(field_of(1, 1, 8, std::nullopt, 0, "mixtral-8x7b"), "gpus");
  EXPECT_EQ(field_of(1, 1, 8, 0, 0, "mixtral-8x7b"), "dp");
  EXPECT_EQ(field_of(1, 1, 8, std::nullopt, -8, "mixtral-8x7b"), "gpus");
}

TEST(ResolveParallelism, DataParallelDegreeFromTheGpuCountOrGiven) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ParallelismSpec paper = paper_parallelism(4, 4, 8, 1);
  EXPECT_EQ(resolve_parallelism(paper, std::nullopt, 256, m, 8).dp, 2);
  EXPECT_EQ(resolve_parallelism(paper, 3, 0, m, 8).dp, 3);
  EXPECT_EQ(resolve_parallelism(paper, 2, 256, m, 8).gpus(), 256);
}

// Megatron-Core's folding, the example: tp 2, pp 8, ep 64, etp 1 on 1,024 GPUs is DP 64
// (1024 / (2 x 8)) and expert-DP 2 (2 x 64 / 64).
TEST(ResolveParallelism, MegatronFoldsTheExpertsOntoTheDenseLayersGpus) {
  const ModelSpec m = load_model("deepseek-r1");
  const ParallelismSpec p =
      resolve_parallelism(megatron_parallelism(2, 8, 64, 1), std::nullopt, 1024, m, 8);
  EXPECT_EQ(p.dp, 64);
  EXPECT_EQ(p.expert_tp(), 1);
  EXPECT_EQ(p.expert_dp(), 2);
  EXPECT_EQ(p.dense_dp(), 64);
  EXPECT_EQ(p.gpus(), 1024);
  EXPECT_EQ(p.ep_group_gpus(), 64);
  // The same degrees under the paper's convention are 2 x 8 x 64 = 1024 GPUs for one replica.
  const ParallelismSpec q =
      resolve_parallelism(paper_parallelism(2, 8, 64, 1), std::nullopt, 1024, m, 8);
  EXPECT_EQ(q.dp, 1);
  EXPECT_EQ(q.ep_group_gpus(), 128);
  EXPECT_EQ(q.dense_dp(), 64);
  EXPECT_EQ(q.expert_dp(), 1);
  // ETP 2: EP x ETP = 128 GPUs, one expert replica per 128 of the stage's 128.
  EXPECT_EQ(resolve_parallelism(megatron_parallelism(2, 8, 64, 1, 2), std::nullopt, 1024, m, 8)
                .expert_dp(),
            1);
}

std::string megatron_field(int tp, int pp, int ep, int etp, int cp, std::optional<int> dp, int gpus,
                           const std::string& model) {
  try {
    resolve_parallelism(megatron_parallelism(tp, pp, ep, 1, etp, cp), dp, gpus, load_model(model),
                        8);
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

TEST(ResolveParallelism, MegatronErrorsNameTheField) {
  EXPECT_EQ(megatron_field(2, 8, 64, 1, 1, std::nullopt, 1024, "deepseek-r1"), "");
  // EP x ETP must divide TP x CP x DP: 64 into 2 x 1 x 16 = 32 on 256 GPUs does not.
  EXPECT_EQ(megatron_field(2, 8, 64, 1, 1, std::nullopt, 256, "deepseek-r1"), "gpus");
  EXPECT_EQ(megatron_field(2, 8, 64, 1, 1, 16, 0, "deepseek-r1"), "dp");
  EXPECT_EQ(megatron_field(2, 8, 64, 2, 1, 32, 0, "deepseek-r1"), "dp");
  // EP x ETP = 2 x 3 GPUs neither fill servers of 8 nor share one evenly.
  EXPECT_EQ(megatron_field(1, 1, 2, 3, 1, std::nullopt, 48, "mixtral-8x7b"), "etp");
  EXPECT_EQ(megatron_field(2, 8, 64, -1, 1, std::nullopt, 1024, "deepseek-r1"), "etp");
  EXPECT_EQ(megatron_field(2, 8, 64, 1, 0, std::nullopt, 1024, "deepseek-r1"), "cp");
  EXPECT_EQ(megatron_field(2, 8, 64, 1, 2, std::nullopt, 1024, "deepseek-r1"), "");
  // The paper's convention has no ETP of its own nor CP.
  ParallelismSpec paper = paper_parallelism(2, 8, 8, 1);
  paper.etp = 1;
  EXPECT_THROW(resolve_parallelism(paper, std::nullopt, 128, load_model("mixtral-8x7b"), 8), Error);
  paper.etp = 0;
  paper.cp = 2;
  try {
    resolve_parallelism(paper, std::nullopt, 256, load_model("mixtral-8x7b"), 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cp");
  }
}

}  // namespace
}  // namespace mfabric::workload
