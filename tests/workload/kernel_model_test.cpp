// The kernel model: each op's work by formula, measured-table times worked by hand, the roofline
// fallback against ComputeModel, and bad shapes.
#include "workload/kernel_model.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "workload/compute.h"
#include "workload/model.h"

namespace mfabric::workload {
namespace {

KernelShape expert_shape(std::int64_t h, std::int64_t f, std::int64_t local, std::int64_t tokens) {
  KernelShape s;
  s.op = KernelOp::Expert;
  s.hidden = h;
  s.ffn = f;
  s.local_experts = local;
  s.tokens = tokens;
  return s;
}

// A table with one forward point {rows, dim, efficiency} and no backward of its own.
void add_forward_table(KernelCalibration& k, KernelOp op, const KernelPoint& point) {
  KernelTable t;
  t.forward = KernelCurve({point});
  k.tables.emplace(op, t);
}

TEST(KernelWork, ExpertIsSixHfFlopsPerTokenForward) {
  // The measurements' own count: 6 h f per token for a gated FFN, backward twice that.
  const KernelWork w = kernel_work(expert_shape(4096, 14336, 2, 512));
  EXPECT_DOUBLE_EQ(w.forward, 6.0 * 4096 * 14336 * 512 * 2);
  EXPECT_DOUBLE_EQ(w.backward, 2 * w.forward);
  EXPECT_DOUBLE_EQ(w.rows, 512);
  EXPECT_DOUBLE_EQ(w.dim, 4096.0 * 14336);
  EXPECT_DOUBLE_EQ(w.launches, 2);
}

TEST(KernelWork, CausalAttentionCountsHalfTheSquare) {
  KernelShape s;
  s.op = KernelOp::Attention;
  s.heads = 8;
  s.kv_heads = 2;
  s.qk_head_dim = s.v_head_dim = 128;
  s.seq = 4096;
  s.batch = 8;
  s.causal = true;
  // 2 b H S^2 d (the reference measurements' count for d = dqk = dv).
  EXPECT_DOUBLE_EQ(kernel_work(s).forward, 2.0 * 8 * 8 * 4096.0 * 4096 * 128);
  EXPECT_DOUBLE_EQ(kernel_work(s).backward, 2.5 * kernel_work(s).forward);
  s.causal = false;
  EXPECT_DOUBLE_EQ(kernel_work(s).forward, 4.0 * 8 * 8 * 4096.0 * 4096 * 128);
}

TEST(KernelWork, PermuteIsFourPassesOverTheRoutedCopies) {
  KernelShape s;
  s.op = KernelOp::Permute;
  s.hidden = 4096;
  s.tokens = 32768;
  s.top_k = 2;
  s.experts = 8;
  // The figure: four passes at 4.8 TB/s take about 0.5 ms.
  const KernelWork w = kernel_work(s);
  EXPECT_DOUBLE_EQ(w.forward, 4.0 * 32768 * 2 * 4096 * 2);
  EXPECT_NEAR(w.forward / 4.8e12, 0.447e-3, 0.001e-3);
}

TEST(KernelWork, RefusesShapesThatCannotBe) {
  EXPECT_THROW(kernel_work(expert_shape(0, 1, 1, 1)), Error);
  EXPECT_THROW(kernel_work(expert_shape(1, 1, 1, -5)), Error);
  EXPECT_THROW(kernel_work(expert_shape(1, 1, 1, std::int64_t{1} << 31)), Error);
  // Tokens of all local experts together beyond 2^31.
  EXPECT_THROW(kernel_work(expert_shape(1, 1, 4, std::int64_t{1} << 30)), Error);
  KernelShape a;
  a.op = KernelOp::Attention;
  a.heads = 2;
  a.kv_heads = 4;
  a.qk_head_dim = a.v_head_dim = 64;
  a.seq = a.batch = 1;
  try {
    kernel_work(a);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "kv_heads");
  }
  KernelShape p;
  p.op = KernelOp::Permute;
  p.hidden = p.tokens = 8;
  p.top_k = 3;
  p.experts = 2;
  EXPECT_THROW(kernel_work(p), Error);
}

TEST(KernelOpNames, RoundTrip) {
  for (KernelOp op : kernel_ops())
    EXPECT_EQ(parse_kernel_op(to_string(op)), op);
  EXPECT_THROW(parse_kernel_op("matmul"), Error);
}

// One point, one launch: time = launch + work / (peak x efficiency), by hand.
TEST(KernelModel, MeasuredTimeIsLaunchesPlusWorkAtTheTablesEfficiency) {
  KernelCalibration k;
  KernelTable t;
  t.launch_forward = Time::microseconds(30);
  t.launch_backward = Time::microseconds(200);
  t.forward = KernelCurve({{512, 4096.0 * 14336, 0.6}});
  t.backward = KernelCurve({{512, 4096.0 * 14336, 0.4}});
  k.tables.emplace(KernelOp::Expert, t);
  const GpuSpec& h200 = find_gpu("H200");
  const KernelModel m(h200, &k, Efficiency{});
  const KernelTime time = m.time(expert_shape(4096, 14336, 4, 512));
  const double work = 6.0 * 4096 * 14336 * 512 * 4;
  EXPECT_NEAR(time.forward.seconds(), 4 * 30e-6 + work / (989e12 * 0.6), 1e-9);
  EXPECT_NEAR(time.backward.seconds(), 4 * 200e-6 + 2 * work / (989e12 * 0.4), 1e-9);
  EXPECT_DOUBLE_EQ(time.efficiency_forward, 0.6);
  EXPECT_TRUE(time.measured);
  // The same fractions on an H800: same peak, same time (compute ratio 1).
  EXPECT_EQ(KernelModel(find_gpu("H800"), &k, Efficiency{})
                .time(expert_shape(4096, 14336, 4, 512))
                .forward,
            time.forward);
}

TEST(KernelModel, APermutationCarriesOverByComputeACopyByBandwidth) {
  // Tables measured on an H200. On an H100 (same bf16 peak, 3.35 TB/s against 4.8) the
  // permutation keeps its time (it is bound by the SMs, as measured on both GPUs) and the copy
  // takes 4.8 / 3.35 as long; on an A100 (312 TFLOP/s) the permutation takes 989 / 312 as long.
  KernelCalibration k;
  k.measured_on = "H200";
  add_forward_table(k, KernelOp::Permute, {65536, 4096, 0.2});
  add_forward_table(k, KernelOp::Elementwise, {1e9, 1, 0.9});
  KernelShape p;
  p.op = KernelOp::Permute;
  p.hidden = 4096;
  p.tokens = 32768;
  p.top_k = 2;
  p.experts = 8;
  KernelShape c;
  c.op = KernelOp::Elementwise;
  c.bytes = std::int64_t{1} << 31;
  const auto forward_s = [&](const char* gpu, const KernelShape& s) {
    return KernelModel(find_gpu(gpu), &k, Efficiency{}).time(s).forward.seconds();
  };
  const double h200 = forward_s("H200", p);
  EXPECT_NEAR(h200, kernel_work(p).forward / (4.8e12 * 0.2), 1e-9);
  EXPECT_NEAR(forward_s("H100", p), h200, 1e-9);
  EXPECT_NEAR(forward_s("A100", p), h200 * 989e12 / 312e12, 1e-9);
  EXPECT_NEAR(forward_s("H100", c) / forward_s("H200", c), 4.8 / 3.35, 1e-6);
  // Without a measured table the permutation is at the GPU's own full bandwidth.
  EXPECT_NEAR(KernelModel(find_gpu("H100"), nullptr, Efficiency{}).time(p).forward.seconds(),
              kernel_work(p).forward / 3.35e12, 1e-9);
}

TEST(KernelModel, AGemmIsNeverFasterThanItsBytes) {
  // A router-like GEMM (8 outputs): its input read at the copy's bandwidth floors its time.
  KernelCalibration k;
  add_forward_table(k, KernelOp::Dense, {32768, 32768, 0.9});
  add_forward_table(k, KernelOp::Elementwise, {1e9, 1, 0.5});
  KernelShape s;
  s.op = KernelOp::Dense;
  s.hidden = 4096;
  s.ffn = 8;
  s.tokens = 32768;
  const double bytes = (4096.0 * 8 + 32768.0 * (4096 + 8)) * 2;
  EXPECT_NEAR(KernelModel(find_gpu("H200"), &k, Efficiency{}).time(s).forward.seconds(),
              bytes / (4.8e12 * 0.5), 1e-9);
}

TEST(KernelModel, MissingBackwardRunsAtTheForwardsEfficiency) {
  KernelCalibration k;
  KernelTable t;
  t.launch_forward = Time::microseconds(10);
  t.forward = KernelCurve({{1000, 1, 0.5}});
  k.tables.emplace(KernelOp::Permute, t);
  KernelShape s;
  s.op = KernelOp::Permute;
  s.hidden = 1024;
  s.tokens = 1000;
  s.top_k = 1;
  s.experts = 4;
  const KernelTime time = KernelModel(find_gpu("H200"), &k, Efficiency{}).time(s);
  EXPECT_EQ(time.backward, time.forward);
  EXPECT_NEAR(time.forward.seconds(), 10e-6 + 4.0 * 1000 * 1024 * 2 / (4.8e12 * 0.5), 1e-12);
}

// Without a table the model is the roofline ComputeModel computes for the experts.
TEST(KernelModel, RooflineFallbackIsComputeModels) {
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  const GpuSpec& gpu = find_gpu("H800");
  const Efficiency eff;
  const ComputeModel cm(mixtral, gpu, eff, ComputeShape{8, 4096, 1});
  const KernelModel km(gpu, nullptr, eff);
  for (std::int64_t tokens : {1, 64, 4096, 65536}) {
    const KernelTime t = km.time(expert_shape(4096, 14336, 2, tokens));
    EXPECT_EQ(t.forward, cm.experts(2 * tokens, 2, Phase::Forward)) << tokens;
    EXPECT_EQ(t.backward, cm.experts(2 * tokens, 2, Phase::Backward)) << tokens;
    EXPECT_FALSE(t.measured);
  }
}

TEST(KernelModel, Fp8NeedsAnFp8Gpu) {
  KernelShape s;
  s.op = KernelOp::DenseFp8;
  s.hidden = s.ffn = s.tokens = 1024;
  EXPECT_THROW(KernelModel(find_gpu("A100"), nullptr, Efficiency{}).time(s), Error);
  EXPECT_GT(KernelModel(find_gpu("H100"), nullptr, Efficiency{}).time(s).forward, Time::zero());
}

}  // namespace
}  // namespace mfabric::workload
