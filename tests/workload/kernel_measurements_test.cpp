// Reading measurement files and a calibration's kernels section: formats, round trips, and bad
// input named by file, line and field.
#include "workload/kernel_measurements.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "workload/calibration.h"
#include "workload/kernel_fit.h"
#include "workload/kernel_tables_yaml.h"

namespace mfabric::workload {
namespace {

namespace fs = std::filesystem;

std::string write_kernel_temp(const std::string& name, const std::string& text) {
  const fs::path p =
      fs::temp_directory_path() / ("mfabric_kernel_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string measurement_error(const std::string& path) {
  try {
    read_kernel_measurements(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KernelMeasurementsFile, BadInputNamesTheFileLineAndColumn) {
  const std::string header =
      "op,model,shape,tokens,ms_fwd,ms_fwd_bwd,tflops_fwd,tflops_fwd_bwd,note\n";
  const std::string bad_number =
      write_kernel_temp("a.csv", header + "expert_ffn,m,h4096 f14336 x1 (f/1),512,fast,1,1,1,\n");
  EXPECT_NE(measurement_error(bad_number).find("a.csv:2: ms_fwd: expected a number, got 'fast'"),
            std::string::npos)
      << measurement_error(bad_number);
  const std::string columns = write_kernel_temp("b.csv", header + "dense,m,4x4,4\n");
  EXPECT_NE(measurement_error(columns).find("b.csv:2"), std::string::npos);
  const std::string unknown = write_kernel_temp("c.csv", "a,b,c\n1,2,3\n");
  EXPECT_NE(measurement_error(unknown).find("unknown measurement format"), std::string::npos);
  const std::string tokens =
      write_kernel_temp("d.csv", header + "expert_ffn,m,h64 f64 x4 (f/1),6,1,2,1,1,\n");
  EXPECT_NE(measurement_error(tokens).find("multiple of the 4 local experts"), std::string::npos);
  const std::string negative = write_kernel_temp("e.csv", header + "dense,m,4x4,4,-1,,1,1,\n");
  EXPECT_NE(measurement_error(negative).find("expected a positive time"), std::string::npos);
  EXPECT_NE(measurement_error("/nonexistent/x.csv").find("/nonexistent/x.csv"), std::string::npos);
  // A header that begins like the permutation table's but whose ms_fwd column is padded (a
  // fuzzer's find): the missing column is named, not a crash.
  const std::string padded = write_kernel_temp(
      "f.csv", "op,h,f,local,tokens_per_expert,ms_fwdX,ms_fwd_bwd\npermute,8,0,8,64,1,\n");
  EXPECT_NE(measurement_error(padded).find("f.csv:2: ms_fwd: missing"), std::string::npos)
      << measurement_error(padded);
  for (const std::string& p : {bad_number, columns, unknown, tokens, negative, padded})
    fs::remove(p);
}

TEST(KernelMeasurementsFile, QuotedNotesMayHoldCommas) {
  const std::string p = write_kernel_temp(
      "q.csv", "op,shape,ms,tflops_or_gbps,note\nadam_fused,1e9 fp32 params,8,1,\"a, b\"\n");
  const KernelMeasurements m = read_kernel_measurements(p);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.rows[0].shape.op, KernelOp::Optimizer);
  EXPECT_EQ(m.rows[0].shape.params, 1000000000);
  fs::remove(p);
}

TEST(KernelMeasurementsFile, ACalibrationFilesMeasurementsAreRead) {
  // What scripts/measure-gpu.py writes: read by `mfabric kernel check` like a reference CSV.
  const std::string p = write_kernel_temp("m.yaml", R"(name: mine
gpu: H100
kernels:
  measured_on: H100
  measurements:
    - {op: dense, group: router, in: 4096, out: 8, tokens: 32768, forward: 100us}
    - {op: elementwise, group: copy, bytes: 2GiB, forward: 710us}
)");
  const KernelMeasurements m = read_kernel_measurements(p);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].shape.op, KernelOp::Dense);
  EXPECT_EQ(m.rows[0].forward, Time::microseconds(100));
  EXPECT_EQ(m.rows[1].shape.bytes, std::int64_t{2} << 30);
  const std::string none = write_kernel_temp("none.yml", "name: x\ncompute: {attention: 0.5}\n");
  EXPECT_EQ(measurement_error(none),
            none +
                ": kernels.measurements: expected a calibration with a kernels.measurements "
                "list (what scripts/measure-gpu.py writes) or a measurement CSV");
  fs::remove(p);
  fs::remove(none);
}

TEST(KernelTablesYaml, WrittenTablesReadBack) {
  KernelCalibration k;
  k.measured_on = "H200";
  k.source = "a: b, c";
  KernelTable t;
  t.launch_forward = Time::nanoseconds(31758);
  t.launch_backward = Time::microseconds(250);
  t.forward = KernelCurve({{256, 2883584, 0.251358}, {1024, 2883584, 0.5}});
  t.backward = KernelCurve({{256, 2883584, 0.1}});
  k.tables.emplace(KernelOp::Expert, t);
  const std::string text = kernel_calibration_yaml(k, 0);
  const KernelCalibration back = parse_kernel_calibration(YAML::Load(text), "t", "kernels");
  EXPECT_EQ(back.measured_on, "H200");
  EXPECT_EQ(back.source, "a: b, c");
  const KernelTable& b = back.tables.at(KernelOp::Expert);
  EXPECT_EQ(b.launch_forward, t.launch_forward);
  EXPECT_EQ(b.launch_backward, t.launch_backward);
  EXPECT_DOUBLE_EQ(b.forward.efficiency(512, 2883584), t.forward.efficiency(512, 2883584));
  EXPECT_DOUBLE_EQ(b.backward.efficiency(256, 1), 0.1);
}

std::string calibration_error(const std::string& yaml) {
  try {
    parse_calibration(YAML::Load(yaml), "cal.yaml", "calibration", "");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KernelTablesYaml, BadSectionsAreNamed) {
  EXPECT_NE(calibration_error("kernels: {expert: {forward: [[1, 1, 0.5]]}}")
                .find("calibration.kernels.measured_on"),
            std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: X1}").find("unknown GPU"), std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: H200, expert: {forward: [[1, 2]]}}")
                .find("calibration.kernels.expert.forward[0]"),
            std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: H200, expert: {forward: [[1, 1, 2]]}}")
                .find("fraction of peak"),
            std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: H200, matmul: {}}").find("matmul"),
            std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: H200}").find("expected tables"),
            std::string::npos);
  EXPECT_NE(calibration_error("kernels: {measured_on: H200, measurements: [{op: dense, in: 0, "
                              "out: 4, tokens: 4, forward: 1ms}]}")
                .find("calibration.kernels.measurements[0]"),
            std::string::npos);
}

TEST(KernelTablesYaml, TooManyMeasurementsAreRefusedBeforeTheFit) {
  std::string list = "kernels: {measured_on: H200, measurements: [";
  for (std::size_t i = 0; i <= kMaxKernelMeasurements; ++i)
    list += std::string(i ? ", " : "") + "{op: dense, in: 4, out: 4, tokens: 4, forward: 1us}";
  EXPECT_NE(calibration_error(list + "]}").find("expected at most 500 measurements, got 501"),
            std::string::npos);
}

// A calibration may carry raw measurements (what scripts/measure-gpu.py writes): they are
// fitted when it loads, and the fit meets them.
TEST(KernelTablesYaml, MeasurementsAreFittedOnLoad) {
  const Calibration c = parse_calibration(YAML::Load(R"(
kernels:
  measured_on: H100
  measurements:
    - {op: dense, in: 4096, out: 4096, tokens: 512, forward: 40us, forward_backward: 150us}
    - {op: dense, in: 4096, out: 4096, tokens: 4096, forward: 250us, forward_backward: 800us}
    - {op: dense, in: 1024, out: 4096, tokens: 4096, forward: 80us, forward_backward: 260us}
)"),
                                          "cal.yaml", "calibration", "");
  ASSERT_TRUE(c.kernels);
  ASSERT_TRUE(c.kernels->find(KernelOp::Dense));
  const KernelModel m(find_gpu("H100"), c.kernels.get(), c.compute);
  KernelShape s;
  s.op = KernelOp::Dense;
  s.hidden = 4096;
  s.ffn = 4096;
  s.tokens = 4096;
  EXPECT_NEAR(m.time(s).forward.seconds(), 250e-6, 250e-6 * 0.01);
  EXPECT_NEAR(m.time(s).total().seconds(), 800e-6, 800e-6 * 0.01);
}

}  // namespace
}  // namespace mfabric::workload
