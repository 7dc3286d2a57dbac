// Fitting kernel tables: a known model recovered from its own times, and the shipped H200
// calibration against the measurements it comes from (every covered row, and each shape left out
// of the fit).
#include "workload/kernel_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "workload/calibration.h"
#include "workload/kernel_measurements.h"

namespace mfabric::workload {
namespace {

const std::string kMeasurements = std::string(MFABRIC_PROJECT_DIR) + "/data/measurements/";

std::vector<KernelMeasurement> reference_rows(std::vector<std::string>* skipped = nullptr) {
  std::vector<KernelMeasurement> rows;
  for (const char* f : {"h200-moe-kernels.csv", "h200-permute.csv", "h200-fp8-optimizer-mla.csv"}) {
    KernelMeasurements m = read_kernel_measurements(kMeasurements + f);
    rows.insert(rows.end(), m.rows.begin(), m.rows.end());
    if (skipped) skipped->insert(skipped->end(), m.skipped.begin(), m.skipped.end());
  }
  return rows;
}

// Times of a known model: 20 us per launch, efficiency 0.3 at 512 rows rising linearly in log
// rows to 0.6 at 32768, the same for three shapes (compute-bound: their weights take less time to
// read than their work to compute, so the memory floor plays no part).
TEST(KernelFit, RecoversTheLaunchOverheadOfAKnownModel) {
  const GpuSpec& gpu = find_gpu("H200");
  const double c = 20e-6;
  std::vector<KernelMeasurement> rows;
  for (std::int64_t f : {2048, 4096, 8192}) {
    for (std::int64_t t : {512, 2048, 8192, 32768}) {
      KernelMeasurement m;
      m.shape.op = KernelOp::Expert;
      m.shape.hidden = 4096;
      m.shape.ffn = f;
      m.shape.local_experts = 4;
      m.shape.tokens = t;
      m.group = "f" + std::to_string(f);
      const double e = 0.3 + 0.3 * std::log(static_cast<double>(t) / 512.0) / std::log(64.0);
      m.forward = Time::from_seconds(4 * c + kernel_work(m.shape).forward / (989e12 * e));
      rows.push_back(m);
    }
  }
  const KernelTable t = fit_kernel_table(rows, gpu, 1);
  // The overhead comes from a grid of 128 steps up to the smallest time per launch.
  double step = 1;
  for (const KernelMeasurement& r : rows)
    step = std::min(step, r.forward.seconds() / 4 / 128);
  EXPECT_NEAR(t.launch_forward.seconds(), c, step + 1e-9);
  EXPECT_TRUE(t.backward.empty());  // no backward measured
  // Each shape left out is predicted from the others almost exactly (the same curve; two shapes
  // left to fit, so the overhead is found again without it).
  for (const KernelCheck& k : leave_one_shape_out(rows, gpu))
    EXPECT_LT(std::fabs(k.forward_error), 0.02) << k.row->group << " " << k.row->shape.tokens;
}

TEST(KernelFit, RefusesRowsOfMixedKinds) {
  std::vector<KernelMeasurement> rows(2);
  rows[0].shape.op = KernelOp::Dense;
  rows[0].shape.hidden = rows[0].shape.ffn = rows[0].shape.tokens = 64;
  rows[0].forward = Time::microseconds(10);
  rows[1] = rows[0];
  rows[1].shape.op = KernelOp::DenseFp8;
  EXPECT_THROW(fit_kernel_table(rows, find_gpu("H200"), 1), Error);
  EXPECT_THROW(fit_kernel_table({}, find_gpu("H200"), 1), Error);
}

TEST(KernelMeasurementsFile, ReadsEveryReferenceRow) {
  std::vector<std::string> skipped;
  const std::vector<KernelMeasurement> rows = reference_rows(&skipped);
  // 53 rows of h200-moe-kernels.csv less its 3 grouped launches, 2 permutations, and the FP8
  // file's 20 rows, whose MLA forward and forward+backward rows pair up (3 shapes from 6).
  EXPECT_EQ(rows.size(), 50u + 2u + 18u);
  EXPECT_EQ(skipped.size(), 3u);
  std::map<KernelOp, int> by_op;
  for (const KernelMeasurement& r : rows)
    ++by_op[r.shape.op];
  EXPECT_EQ(by_op[KernelOp::Expert], 33);
  EXPECT_EQ(by_op[KernelOp::Attention], 5 + 3);
  EXPECT_EQ(by_op[KernelOp::DenseFp8], 7);
  EXPECT_EQ(by_op[KernelOp::Permute], 2);
  EXPECT_EQ(by_op[KernelOp::Optimizer], 1);
  EXPECT_EQ(by_op[KernelOp::Elementwise], 1);
}

// Rows the model misses by more than 20% forward+backward, each for a reason in the data
// (docs/validation.md, "Compute as measured"): the dense projections' backward at 4,096 tokens,
// where two GEMMs of the same weight count and rows were measured 0.456 and 0.210 ms (the table
// holds their mean), and the smallest experts' backward, whose launches overlap their work.
const std::set<std::string> kKnownInSampleMisses = {
    "h200-moe-kernels.csv:36", "h200-moe-kernels.csv:45", "h200-moe-kernels.csv:46",
    "h200-moe-kernels.csv:47"};

std::string file_line(const std::string& where) {
  return where.substr(where.find_last_of('/') + 1);
}

TEST(KernelFitReference, ShippedCalibrationMeetsEveryCoveredRowWithin20Percent) {
  const Calibration c = load_calibration("h200-measured");
  ASSERT_TRUE(c.kernels);
  EXPECT_EQ(c.gpu, "H200");
  const std::vector<KernelMeasurement> rows = reference_rows();
  const KernelModel model(find_gpu("H200"), c.kernels.get(), c.compute);
  int checked_fb = 0;
  for (const KernelCheck& k : check_kernels(model, rows)) {
    const std::string where = file_line(k.row->where);
    EXPECT_LE(std::fabs(k.forward_error), 0.2) << where << " " << k.row->group;
    if (!k.forward_backward_error) continue;
    ++checked_fb;
    const double limit = kKnownInSampleMisses.count(where) ? 0.4 : 0.2;
    EXPECT_LE(std::fabs(*k.forward_backward_error), limit) << where << " " << k.row->group;
  }
  EXPECT_EQ(checked_fb, 51);
}

TEST(KernelFitReference, ShapesLeftOutLandWithin30PercentMostlyAnd2xAlways) {
  const std::vector<KernelMeasurement> rows = reference_rows();
  const std::vector<KernelCheck> checks = leave_one_shape_out(rows, find_gpu("H200"));
  int within = 0;
  for (const KernelCheck& k : checks) {
    const double f = k.forward_error;
    const double fb = k.forward_backward_error.value_or(0);
    // Within 2x either way.
    EXPECT_LT(std::fabs(std::log1p(f)), std::log(2.0)) << file_line(k.row->where);
    EXPECT_LT(std::fabs(std::log1p(fb)), std::log(2.0)) << file_line(k.row->where);
    within += std::fabs(f) <= 0.3 && std::fabs(fb) <= 0.3;
  }
  // Every op kind measured at more than one shape: all but the optimizer and the copy.
  EXPECT_EQ(checks.size(), rows.size() - 2);
  EXPECT_GE(within, static_cast<int>(0.75 * static_cast<double>(checks.size())))
      << within << " of " << checks.size();
}

TEST(KernelFitReference, DerivedCalibrationsKeepTheTablesAndNameTheirGpu) {
  for (const char* name : {"h100-measured", "h800-measured"}) {
    const Calibration c = load_calibration(name);
    ASSERT_TRUE(c.kernels) << name;
    EXPECT_EQ(c.kernels->measured_on, "H200");
    EXPECT_EQ(c.gpu, std::string(name) == "h100-measured" ? "H100" : "H800");
  }
  EXPECT_EQ(calibration_for_gpu("h800"), "h800-measured");
  EXPECT_EQ(calibration_for_gpu("B200"), std::nullopt);
  // A calibration for any GPU (roofline, paper-measurement) is no GPU's own.
  EXPECT_EQ(calibration_for_gpu(""), std::nullopt);
  EXPECT_EQ(default_calibration("H800").name, "h800-measured");
  EXPECT_EQ(default_calibration("h200").name, "h200-measured");
  EXPECT_EQ(default_calibration("B200").name, "roofline");
  EXPECT_FALSE(default_calibration("B200").kernels);
}

}  // namespace
}  // namespace mfabric::workload
