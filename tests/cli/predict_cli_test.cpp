// mfabric predict: Copilot against its baselines on a synthetic or recorded routing trace, and
// one clear line for every bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_harness.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using mfabric::testing::data;
using mfabric::testing::expect_error;
using mfabric::testing::Outcome;
using mfabric::testing::run;

// A 4-expert, top-1 model for the 4-expert recorded trace.
constexpr const char* kTinyModel =
    "name: tiny\nlayers: 4\nhidden: 64\nattention:\n  kind: gqa\n  heads: 4\n  kv_heads: 2\n"
    "  head_dim: 16\nffn_expert: 128\nexperts: 4\ntop_k: 1\nvocab: 100\n";

class PredictCli : public mfabric::testing::ScratchDirTest {
 protected:
  PredictCli() : ScratchDirTest("mfabric_predict_cli") {}
};

TEST_F(PredictCli, SyntheticJsonCountsAndPredictors) {
  // Mixtral 8x7B: 32 MoE layers -> 31 predicted per micro-batch; 6 micro-batches, the first 2
  // observed during the warm-up: 31 x 4 scored, 31 x 2 not.
  const Outcome o =
      run("predict --model mixtral-8x7b --ep 8 --iterations 1 --micro-batches 6 --micro-batch 1 "
          "--seq 1024 --warmup 2 --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["model"], "mixtral-8x7b");
  EXPECT_EQ(j["ep"], 8);
  EXPECT_EQ(j["experts"], 8);
  EXPECT_EQ(j["top_k"], 2);  // the model's
  EXPECT_EQ(j["moe_layers"], 32);
  EXPECT_EQ(j["scored"], 31 * 4);
  EXPECT_EQ(j["warmup_predictions"], 31 * 2);
  EXPECT_EQ(j["servers"], 8);  // one EP rank per server by default
  ASSERT_EQ(j["predictors"].size(), 5u);
  const char* names[] = {"uniform", "reuse", "history", "copilot", "copilot-centered"};
  for (std::size_t k = 0; k < 5; ++k) {
    const nlohmann::json& p = j["predictors"][k];
    EXPECT_EQ(p["name"], names[k]);
    for (const char* score : {"top_k_accuracy", "load_tvd", "row_tvd", "demand_error"}) {
      EXPECT_GE(p[score].get<double>(), 0.0) << score;
      EXPECT_LE(p[score].get<double>(), 2.0) << score;
    }
  }
}

TEST_F(PredictCli, TextTableOfARecordedTrace) {
  // routing_small.txt: EP 4, 4 experts, 3 MoE layers, 2 iterations x 2 micro-batches -> 4
  // records x 2 layer pairs; warm-up 1 leaves 3 x 2 scored. A model YAML with 4 experts.
  const std::string model = write("m.yaml", kTinyModel);
  const Outcome o =
      run("predict --model " + model + " --trace " + data("routing_small.txt") + " --warmup 1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("predictions: 6 scored, 2 during warm-up"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("top-1 accuracy"), std::string::npos) << o.out;
  for (const char* name : {"uniform", "reuse", "history", "copilot", "copilot-centered"})
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
}

TEST_F(PredictCli, BadEp) {
  expect_error("predict --model mixtral-8x7b", "--ep");
  expect_error("predict --model mixtral-8x7b --ep 0", "--ep");
  expect_error("predict --model mixtral-8x7b --ep 3", "--ep");  // 8 experts over 3 ranks
}

TEST_F(PredictCli, UnknownModel) {
  expect_error("predict --model mixtral-9x9b --ep 8", "--model");
}

TEST_F(PredictCli, BadTraces) {
  expect_error("predict --model mixtral-8x7b --trace " + (dir_ / "missing.json").string(),
               "missing.json");
  const std::string garbage = write("garbage.txt", "hello\n");
  expect_error("predict --model mixtral-8x7b --trace " + garbage, "garbage.txt");
  // 4 experts in the trace, 8 in the model.
  expect_error("predict --model mixtral-8x7b --trace " + data("routing_small.txt"), "experts");
  // A bare matrix is a static trace: one record for every layer, nothing to predict.
  const std::string bare = write("bare.txt", "[[1, 2, 3, 4, 5, 6, 7, 8]]\n");
  expect_error("predict --model mixtral-8x7b --trace " + bare, "static");
}

TEST_F(PredictCli, TraceAndEpMustAgree) {
  const std::string model = write("m.yaml", kTinyModel);
  expect_error("predict --model " + model + " --trace " + data("routing_small.txt") + " --ep 2",
               "--ep");
  // Synthetic-trace options do not go with --trace (usage error).
  expect_error("predict --model " + model + " --trace " + data("routing_small.txt") + " --seed 3",
               "--seed", 2);
}

TEST_F(PredictCli, BadOptionsNameTheOption) {
  const std::string base = "predict --model mixtral-8x7b --ep 8 --iterations 1 --micro-batches 2 ";
  expect_error(base + "--top-k 9", "--top-k");
  expect_error(base + "--history 0", "--history");
  expect_error(base + "--decay 0", "--decay");
  expect_error(base + "--decay 1.5", "--decay");
  expect_error(base + "--solver-iterations -1", "--solver-iterations");
  expect_error(base + "--warmup 0", "--warmup");
  expect_error(base + "--tolerance -1", "--tolerance");
  expect_error(base + "--refit-every 0", "--refit-every");
  expect_error(base + "--ranks-per-server 3", "--ranks-per-server");
  expect_error(base + "--generator bogus=1", "--generator");
  expect_error(base + "--generator layer_correlation=2",
               "--generator.layer_correlation: expected a fraction");
  expect_error("predict --model mixtral-8x7b --ep 8 --micro-batches 0", "--micro-batches");
  expect_error("predict --model mixtral-8x7b --ep 8 --iterations 0", "--iterations");
}

}  // namespace
