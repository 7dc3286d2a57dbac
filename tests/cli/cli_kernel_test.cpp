// `mfabric kernel`: what the compute model believes of one op, its JSON, its default calibration
// per GPU, and bad input (one line, exit 2).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace {

using mfabric::testing::expect_error;
using mfabric::testing::run;

nlohmann::json kernel_json(const std::string& args) {
  const mfabric::testing::Outcome o = run("kernel " + args + " --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  return nlohmann::json::parse(o.out);
}

TEST(CliKernel, ExpertPrintsTheIssuesJsonKeys) {
  const nlohmann::json j = kernel_json(
      "expert --gpu h200 --hidden 7168 --ffn 2048 --local-experts 8 --tokens-per-expert 512");
  for (const char* key : {"forward_s", "backward_s", "forward_backward_s", "efficiency_forward",
                          "efficiency_backward"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_NEAR(j["forward_backward_s"].get<double>(),
              j["forward_s"].get<double>() + j["backward_s"].get<double>(), 1e-12);
  // The H200's measured calibration by default.
  EXPECT_EQ(j["calibration"], "h200-measured");
  EXPECT_TRUE(j["measured"].get<bool>());
}

// The README's anchor: one whole Mixtral 8x7B expert at 65,536 tokens on the H200 measured
// 38.3 ms forward and 114.1 ms forward+backward.
TEST(CliKernel, MixtralExpertMatchesItsMeasurement) {
  const nlohmann::json j =
      kernel_json("expert --gpu h200 --hidden 4096 --ffn 14336 --tokens-per-expert 65536");
  EXPECT_NEAR(j["forward_s"].get<double>(), 38.28e-3, 38.28e-3 * 0.2);
  EXPECT_NEAR(j["forward_backward_s"].get<double>(), 114.1e-3, 114.1e-3 * 0.2);
}

TEST(CliKernel, AGpuWithoutMeasurementsFallsBackToTheRoofline) {
  const nlohmann::json j = kernel_json("dense --gpu b200 --in 4096 --out 4096 --tokens 4096");
  EXPECT_EQ(j["calibration"], "roofline");
  EXPECT_FALSE(j["measured"].get<bool>());
  EXPECT_DOUBLE_EQ(j["efficiency_forward"].get<double>(), 0.6);
}

TEST(CliKernel, EveryOpKindAnswers) {
  EXPECT_GT(kernel_json("attention --gpu h200 --heads 8 --kv-heads 2 --head-dim 128 --seq 4096 "
                        "--batch 8 --causal")["forward_s"]
                .get<double>(),
            0);
  // The measured permutation: 3.49 ms for 32,768 tokens top-2 at h 4096.
  EXPECT_NEAR(
      kernel_json(
          "permute --gpu h200 --hidden 4096 --tokens 32768 --top-k 2 --experts 8")["forward_s"]
          .get<double>(),
      3.49e-3, 3.49e-3 * 0.2);
  EXPECT_GT(kernel_json(
                "dense --gpu h100 --in 8192 --out 8192 --tokens 8192 --precision fp8")["forward_s"]
                .get<double>(),
            0);
}

TEST(CliKernel, BadInputIsOneLineAndExit2) {
  const auto bad = [](const std::string& args, const std::string& needle) {
    const mfabric::testing::Outcome o = run("kernel " + args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_EQ(o.out, "") << args;
    EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  };
  bad("expert --gpu h999 --hidden 1 --ffn 1 --tokens-per-expert 1", "unknown GPU 'h999'");
  bad("expert --hidden 0 --ffn 1 --tokens-per-expert 1", "--hidden");
  bad("expert --hidden 8 --ffn -4 --tokens-per-expert 1", "--ffn");
  bad("expert --hidden 8 --ffn 8 --tokens-per-expert 2147483648", "--tokens-per-expert");
  bad("dense --in 8 --out 8 --tokens 8 --precision fp4", "--precision");
  bad("attention --heads 2 --kv-heads 4 --head-dim 64 --seq 16", "--kv-heads");
  bad("permute --hidden 8 --tokens 8 --top-k 4 --experts 2", "--top-k");
  bad("expert --hidden 8 --ffn 8 --tokens-per-expert 8 --calibration nope", "unknown calibration");
  bad("dense --gpu a100 --in 8 --out 8 --tokens 8 --precision fp8", "FP8");
}

}  // namespace
