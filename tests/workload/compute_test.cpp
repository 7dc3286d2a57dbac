#include "workload/compute.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <string>

#include "core/error.h"

namespace mfabric::workload {
namespace {

const std::string kData = MFABRIC_TEST_DATA_DIR;

// Round numbers so that expected times can be worked out by hand: 1 TFLOP/s at 50% efficiency,
// 100 GB/s.
const GpuSpec kFakeGpu{"fake", 1e12, 1e11};
const Efficiency kHalf{0.5, 0.5, 0.5};

ComputeShape shape(int micro_batch, int seq, int tp) {
  ComputeShape s;
  s.micro_batch = micro_batch;
  s.seq = seq;
  s.tp = tp;
  return s;
}

// data/model_tiny.yaml: hidden 64, gqa 4 heads / 2 kv heads of 16, 4 experts of FFN 128, top-2,
// vocab 100. With micro-batch 2 and seq 8: T = 16 tokens.
ModelSpec tiny() {
  return load_model(kData + "/model_tiny.yaml");
}

TEST(Gpu, CatalogueAndLookup) {
  ASSERT_EQ(gpu_catalogue().size(), 5u);
  EXPECT_DOUBLE_EQ(find_gpu("A100").peak_bf16_flops, 312e12);
  EXPECT_DOUBLE_EQ(find_gpu("A100").memory_bandwidth, 2.039e12);
  EXPECT_DOUBLE_EQ(find_gpu("h100").peak_bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(find_gpu("H800").memory_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(find_gpu("H200").memory_bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(find_gpu("b200").peak_bf16_flops, 2250e12);
  EXPECT_EQ(find_gpu("b200").name, "B200");
  try {
    find_gpu("V100");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("unknown GPU 'V100' (known: A100, H100, H800, H200, B200)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ComputeFlops, TinyModelByHand) {
  const ComputeModel c(tiny(), kFakeGpu, kHalf, shape(2, 8, 1));
  // q: 2 x 16 x 64 x 4 x 16 = 131072; k + v: 2 x (2 x 16 x 64 x 2 x 16) = 131072;
  // o: 2 x 16 x 4 x 16 x 64 = 131072; scores: 4 x 16 x 8 x 4 x 16 = 32768.
  EXPECT_DOUBLE_EQ(c.attention_flops(), 425984);
  EXPECT_DOUBLE_EQ(c.router_flops(), 2 * 16 * 64 * 4);
  EXPECT_DOUBLE_EQ(c.expert_flops(10), 10 * 2 * 3 * 64 * 128);
  EXPECT_DOUBLE_EQ(c.expert_flops(0), 0);
  EXPECT_DOUBLE_EQ(c.shared_expert_flops(), 0);
  EXPECT_DOUBLE_EQ(c.dense_ffn_flops(), 0);
  EXPECT_DOUBLE_EQ(c.lm_head_flops(), 2 * 16 * 64 * 100);
  // FLOPs are per TP group: TP does not change them.
  EXPECT_DOUBLE_EQ(ComputeModel(tiny(), kFakeGpu, kHalf, shape(2, 8, 4)).attention_flops(), 425984);
}

TEST(ComputeFlops, SharedDenseAndPlainFfn) {
  ModelSpec m = tiny();
  m.shared_experts = 2;
  m.ffn_shared = 32;
  m.dense_layers = 1;
  m.ffn_dense = 256;
  const ComputeModel c(m, kFakeGpu, kHalf, shape(2, 8, 1));
  EXPECT_DOUBLE_EQ(c.shared_expert_flops(), 16.0 * 2 * 2 * 3 * 64 * 32);
  EXPECT_DOUBLE_EQ(c.dense_ffn_flops(), 16.0 * 2 * 3 * 64 * 256);
  m.gated_ffn = false;
  const ComputeModel plain(m, kFakeGpu, kHalf, shape(2, 8, 1));
  EXPECT_DOUBLE_EQ(plain.dense_ffn_flops(), 16.0 * 2 * 2 * 64 * 256);
  EXPECT_DOUBLE_EQ(plain.expert_flops(1), 2.0 * 2 * 64 * 128);
}

TEST(ComputeFlops, MlaByHand) {
  const ModelSpec m = parse_model(R"(name: tiny-mla
layers: 2
hidden: 32
attention: {kind: mla, heads: 2, q_lora_rank: 8, kv_lora_rank: 4, qk_nope_head_dim: 4,
            qk_rope_head_dim: 2, v_head_dim: 4}
ffn_expert: 16
experts: 2
top_k: 1
vocab: 10
)",
                                  "tiny-mla");
  const ComputeModel c(m, kFakeGpu, kHalf, shape(2, 8, 1));
  // T = 16. q: 16 x (2 x 32 x 8 + 2 x 8 x 2 x 6) = 11264; kv: 16 x (2 x 32 x 6 + 2 x 4 x 2 x 8)
  // = 8192; o: 2 x 16 x 2 x 4 x 32 = 8192; scores: 2 x 16 x 8 x 2 x 6 + 2 x 16 x 8 x 2 x 4 = 5120.
  EXPECT_DOUBLE_EQ(c.attention_flops(), 11264 + 8192 + 8192 + 5120);
  // Parameters: q 32 x 8 + 8 + 8 x 2 x 6; kv 32 x 6 + 4 + 4 x 2 x 8; o 2 x 4 x 32.
  EXPECT_EQ(m.attention_params_per_layer(), 256 + 8 + 96 + 192 + 4 + 64 + 256);
}

TEST(ComputeTime, RooflineByHand) {
  const ComputeModel c(tiny(), kFakeGpu, kHalf, shape(2, 8, 1));
  // Attention: 425984 FLOPs / (1e12 x 0.5) = 851968 ps; bytes (12288 params + 2 x 16 x 64
  // activations) x 2 = 28672 B / 1e11 = 286720 ps: compute-bound.
  EXPECT_EQ(c.attention(Phase::Forward).ps(), 851968);
  // Router: 8192 FLOPs -> 16384 ps; bytes (256 + 1024 + 64) x 2 = 2688 -> 26880 ps: memory.
  EXPECT_EQ(c.router(Phase::Forward).ps(), 26880);
  // LM head: 204800 FLOPs -> 409600 ps; bytes (6400 + 1024 + 1600) x 2 = 18048 -> 180480 ps.
  EXPECT_EQ(c.lm_head(Phase::Forward).ps(), 409600);
  EXPECT_EQ(c.shared_experts(Phase::Forward), Time::zero());
  EXPECT_EQ(c.dense_ffn(Phase::Backward), Time::zero());
}

TEST(ComputeTime, BackwardIsTwiceForward) {
  for (const char* name : {"mixtral-8x7b", "deepseek-r1"}) {
    const ComputeModel c(load_model(name), find_gpu("H800"), Efficiency{}, shape(8, 4096, 2));
    const auto twice = [](Time fwd, Time bwd) {
      EXPECT_NEAR(static_cast<double>(bwd.ps()), 2.0 * static_cast<double>(fwd.ps()), 1.0);
    };
    twice(c.attention(Phase::Forward), c.attention(Phase::Backward));
    twice(c.router(Phase::Forward), c.router(Phase::Backward));
    twice(c.experts(65536, 2, Phase::Forward), c.experts(65536, 2, Phase::Backward));
    twice(c.experts(16, 2, Phase::Forward), c.experts(16, 2, Phase::Backward));  // memory-bound
    twice(c.shared_experts(Phase::Forward), c.shared_experts(Phase::Backward));
    twice(c.dense_ffn(Phase::Forward), c.dense_ffn(Phase::Backward));
    twice(c.lm_head(Phase::Forward), c.lm_head(Phase::Backward));
  }
}

TEST(ComputeTime, TensorParallelismHalvesTime) {
  const ModelSpec m = load_model("mixtral-8x22b");
  const ComputeModel one(m, find_gpu("H800"), Efficiency{}, shape(8, 4096, 1));
  const ComputeModel two(m, find_gpu("H800"), Efficiency{}, shape(8, 4096, 2));
  const auto half = [](Time a, Time b) {
    EXPECT_NEAR(static_cast<double>(b.ps()), static_cast<double>(a.ps()) / 2, 1.0);
  };
  half(one.attention(Phase::Forward), two.attention(Phase::Forward));
  half(one.experts(65536, 1, Phase::Backward), two.experts(65536, 1, Phase::Backward));
  half(one.experts(8, 1, Phase::Forward), two.experts(8, 1, Phase::Forward));  // memory-bound too
  half(one.lm_head(Phase::Forward), two.lm_head(Phase::Forward));
}

TEST(ComputeTime, FewTokensAreMemoryBound) {
  const ComputeModel c(tiny(), kFakeGpu, kHalf, shape(2, 8, 1));
  // 1 assignment over 4 local experts: 12288 FLOPs -> 98304 ps of compute, but the weights of 4
  // experts (4 x 24576 x 2 B) plus 256 B of activations take 1968640 ps to read.
  EXPECT_EQ(c.experts(1, 4, Phase::Forward).ps(), 1968640);
  // 10000 assignments: 491.52 MFLOP -> 983040000 ps, above the 27566080 ps of memory traffic.
  EXPECT_EQ(c.experts(10000, 4, Phase::Forward).ps(), 983040000);
  EXPECT_EQ(c.experts(0, 4, Phase::Forward), Time::zero());

  // On a real model the switch happens where the expert GEMM's arithmetic intensity (about one
  // FLOP per weight byte per token: 2 x 3hf x n FLOPs over 3hf x 2 bytes) crosses the GPU's
  // ridge point, 989e12 x 0.5 / 3.35e12 = 148 FLOP/byte on an H800: about 150 tokens per expert.
  const ModelSpec m = load_model("mixtral-8x22b");
  const GpuSpec& h800 = find_gpu("H800");
  const ComputeModel real(m, h800, Efficiency{}, shape(8, 4096, 8));
  const auto weight_seconds = [&](int tokens) {
    return (static_cast<double>(m.expert_params()) + 2.0 * tokens * m.hidden) * 2 / 8 /
           h800.memory_bandwidth;
  };
  const auto flop_seconds = [&](int tokens) {
    return real.expert_flops(tokens) / 8 / (h800.peak_bf16_flops * 0.5);
  };
  for (int tokens : {1, 16, 140}) {
    EXPECT_NEAR(real.experts(tokens, 1, Phase::Forward).seconds(), weight_seconds(tokens), 1e-11)
        << tokens;
    EXPECT_GT(weight_seconds(tokens), flop_seconds(tokens));
  }
  for (int tokens : {160, 65536}) {
    EXPECT_NEAR(real.experts(tokens, 1, Phase::Forward).seconds(), flop_seconds(tokens), 1e-11)
        << tokens;
    EXPECT_GT(flop_seconds(tokens), weight_seconds(tokens));
  }
}

TEST(ComputeValidation, BadShapesAndArguments) {
  const auto field = [](const std::function<void()>& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.field();
    }
    return "(none)";
  };
  const ModelSpec m = tiny();
  EXPECT_EQ(field([&] { ComputeModel(m, kFakeGpu, kHalf, shape(0, 8, 1)); }), "micro_batch");
  EXPECT_EQ(field([&] { ComputeModel(m, kFakeGpu, kHalf, shape(2, -1, 1)); }), "seq");
  EXPECT_EQ(field([&] { ComputeModel(m, kFakeGpu, kHalf, shape(2, 8, 0)); }), "tp");
  EXPECT_EQ(field([&] {
              ComputeModel(m, GpuSpec{"x", 0, 1}, kHalf, shape(2, 8, 1));
            }),
            "gpu.peak_bf16_flops");
  EXPECT_EQ(field([&] {
              ComputeModel(m, GpuSpec{"x", 1, -1}, kHalf, shape(2, 8, 1));
            }),
            "gpu.memory_bandwidth");
  EXPECT_EQ(field([&] {
              ComputeModel(m, kFakeGpu, Efficiency{0.5, 1.5, 0.5}, shape(2, 8, 1));
            }),
            "efficiency.dense_gemm");
  EXPECT_EQ(field([&] {
              ComputeModel(m, kFakeGpu, Efficiency{0.5, 0.5, 0}, shape(2, 8, 1));
            }),
            "efficiency.expert_gemm");
  const ComputeModel c(m, kFakeGpu, kHalf, shape(2, 8, 1));
  EXPECT_EQ(field([&] { c.experts(-1, 1, Phase::Forward); }), "token_assignments");
  EXPECT_EQ(field([&] { c.experts(10, 0, Phase::Forward); }), "local_experts");
  EXPECT_EQ(field([&] { c.experts(10, 5, Phase::Forward); }), "local_experts");
  EXPECT_EQ(field([&] { c.attention(Phase::Update); }), "phase");
  EXPECT_EQ(field([&] { c.experts(0, 1, Phase::Other); }), "phase");
}

TEST(Replay, LoadsAndFindsSpecificBeforeAnyLayer) {
  const ComputeReplay r = ComputeReplay::load(kData + "/replay_ok.csv");
  EXPECT_EQ(r.size(), 5u);
  ASSERT_NE(r.find(Op::Attention, 7, Phase::Forward), nullptr);
  EXPECT_EQ(*r.find(Op::Attention, 7, Phase::Forward), Time::microseconds(1200));
  EXPECT_EQ(*r.find(Op::Attention, 0, Phase::Backward), Time::microseconds(2400));
  EXPECT_EQ(*r.find(Op::Experts, 3, Phase::Backward), Time::milliseconds(4));
  EXPECT_EQ(*r.find(Op::Experts, 3, Phase::Forward), Time::microseconds(1500));  // trimmed
  EXPECT_EQ(r.find(Op::Experts, 2, Phase::Forward), nullptr);
  EXPECT_EQ(*r.find(Op::LmHead, 60, Phase::Forward), Time::microseconds(10));
  EXPECT_EQ(r.find(Op::LmHead, 60, Phase::Backward), nullptr);
  EXPECT_EQ(r.find(Op::Router, 0, Phase::Forward), nullptr);

  const ComputeReplay crlf = ComputeReplay::load(kData + "/replay_crlf.csv");
  ASSERT_EQ(crlf.size(), 1u);
  EXPECT_EQ(*crlf.find(Op::Router, 0, Phase::Forward), Time::microseconds(5));
}

Error replay_error(const std::string& file) {
  try {
    ComputeReplay::load(kData + "/" + file);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << file;
  return Error("no error");
}

TEST(Replay, ErrorsNameFileLineAndColumn) {
  const Error op = replay_error("replay_bad_op.csv");
  EXPECT_EQ(op.source(), kData + "/replay_bad_op.csv:3");
  EXPECT_EQ(op.field(), "op");
  EXPECT_NE(op.message().find("unknown op 'expert' (valid: attention, router, permute, experts, "
                              "shared-experts, dense-ffn, lm-head)"),
            std::string::npos)
      << op.what();

  const Error duration = replay_error("replay_bad_duration.csv");
  EXPECT_EQ(duration.source(), kData + "/replay_bad_duration.csv:3");
  EXPECT_EQ(duration.field(), "duration");

  const Error dup = replay_error("replay_duplicate.csv");
  EXPECT_EQ(dup.source(), kData + "/replay_duplicate.csv:4");
  EXPECT_NE(dup.message().find("already given on line 2"), std::string::npos) << dup.what();

  EXPECT_EQ(replay_error("replay_bad_header.csv").source(), kData + "/replay_bad_header.csv:1");
  EXPECT_EQ(replay_error("replay_bad_layer.csv").field(), "layer");
  EXPECT_EQ(replay_error("replay_bad_phase.csv").field(), "phase");
  EXPECT_EQ(replay_error("replay_columns.csv").source(), kData + "/replay_columns.csv:2");
  EXPECT_EQ(replay_error("replay_empty.csv").source(), kData + "/replay_empty.csv");
  EXPECT_EQ(replay_error("replay_missing.csv").source(), kData + "/replay_missing.csv");
}

// Per-layer compute of the paper's models on H800 with the default efficiencies (the table in
// docs/workload.md): micro-batch 8 x seq 4096, uniform routing, so each EP rank's local experts
// receive ep x T x top_k x local_experts / experts = T x top_k token assignments.
TEST(ComputeTable, PaperModelsOnH800) {
  struct Row {
    const char* model;
    int tp;
    int ep;
  };
  const Row rows[] = {{"mixtral-8x22b", 8, 8},
                      {"mixtral-8x7b", 4, 8},
                      {"qwen-moe", 1, 16},
                      {"llama-moe-6.7b", 1, 16},
                      {"deepseek-r1", 1, 64}};
  std::printf("%-16s %3s %3s %6s %10s %11s %10s %10s %12s\n", "model", "tp", "ep", "local",
              "assign", "attn fwd", "router fwd", "exp fwd", "layer f+b");
  for (const Row& row : rows) {
    const ModelSpec m = load_model(row.model);
    const ComputeModel c(m, find_gpu("H800"), Efficiency{}, shape(8, 4096, row.tp));
    const int local = m.experts / row.ep;
    const std::int64_t t = 8 * 4096;
    const std::int64_t assignments = std::int64_t{row.ep} * t * m.top_k * local / m.experts;
    EXPECT_EQ(assignments, t * m.top_k);
    const auto layer = [&](Phase p) {
      return c.attention(p) + c.router(p) + c.experts(assignments, local, p) + c.shared_experts(p);
    };
    const Time full = layer(Phase::Forward) + layer(Phase::Backward);
    EXPECT_GT(full, c.attention(Phase::Forward) * 3);
    std::printf("%-16s %3d %3d %6d %10lld %11s %10s %10s %12s\n", row.model, row.tp, row.ep, local,
                static_cast<long long>(assignments), to_string(c.attention(Phase::Forward)).c_str(),
                to_string(c.router(Phase::Forward)).c_str(),
                to_string(c.experts(assignments, local, Phase::Forward)).c_str(),
                to_string(full).c_str());
    if (m.shared_experts > 0 || m.dense_layers > 0) {
      std::printf(
          "%-16s   shared fwd %s; dense layer f+b %s\n", "",
          to_string(c.shared_experts(Phase::Forward)).c_str(),
          to_string((c.attention(Phase::Forward) + c.dense_ffn(Phase::Forward)) * 3).c_str());
    }
  }
}

}  // namespace
}  // namespace mfabric::workload
