// `mfabric workload`, `mfabric trace` and `mfabric models`: golden output and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "workload/chakra/et_def.pb.h"

namespace {

using mfabric::testing::expect_error;
using mfabric::testing::expect_golden;
using mfabric::testing::run;
namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

TEST(CliWorkloadGolden, Mixtral8x7bTrafficMix) {
  expect_golden(
      "workload --model mixtral-8x7b --convention paper --gpus 128 --tp 4 --pp 4 --ep 8 "
      "--calibration roofline",
      "workload_mixtral_8x7b.txt");
}

TEST(CliWorkloadGolden, DeepSeekUnevenStagesJson) {
  expect_golden(
      "workload --model deepseek-r1 --convention paper --gpus 256 --tp 1 --pp 16 --ep 16 "
      "--global-batch 16 "
      "--micro-batch 1 --seq 1024 --calibration roofline --json",
      "workload_deepseek.json");
}

// A model alone runs its recipe: NeMo 2's Mixtral 8x7B job on 64 H100 (data/models).
TEST(CliWorkload, AModelAloneRunsItsRecipe) {
  // A smaller batch than the recipe's 512 sequences of 8,192 tokens keeps the test short; batch
  // options leave the recipe's parallelism in place.
  const auto o = run("workload --model mixtral-8x7b --global-batch 64 --seq 1024 --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["recipe"], "mixtral-8x7b");
  EXPECT_EQ(j["gpus"], 64);
  EXPECT_EQ(j["gpu"], "H100");
  EXPECT_EQ(j["vp"], 8);
  EXPECT_EQ(j["ep"], 8);
  EXPECT_EQ(j["schedule"], "interleaved");
  EXPECT_EQ(j["global_batch"], 64);
  EXPECT_EQ(j["micro_batch"], 1);
  // A degree given: the recipe's degrees are not used, the batch it leaves out is.
  const auto own = run(
      "workload --model mixtral-8x7b --gpus 32 --tp 4 --ep 8 --micro-batch 8 --seq 1024 --json");
  ASSERT_EQ(own.exit_code, 0) << own.err;
  const auto k = nlohmann::json::parse(own.out);
  EXPECT_TRUE(k["recipe"].is_null());
  EXPECT_EQ(k["tp"], 4);
  EXPECT_EQ(k["global_batch"], 512);
  // DeepSeek-V3's recipe on too few GPUs: 256 do not hold its EP 64, said naming --gpus.
  const auto ds = run("workload --model deepseek-v3 --gpus 256");
  EXPECT_NE(ds.exit_code, 0);
  EXPECT_NE(ds.err.find("--gpus"), std::string::npos) << ds.err;
}

TEST(CliWorkloadGolden, ModelsList) {
  expect_golden("models", "models.txt");
}

TEST(CliWorkloadGolden, TraceStats) {
  expect_golden("trace --stats routing_small.txt", "trace_stats_small.txt", MFABRIC_TEST_DATA_DIR);
}

TEST(CliWorkload, TraceRoundTripsThroughTheWorkload) {
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric_cli_trace_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string trace = (dir / "t.json").string();
  const auto written =
      run("trace --model mixtral-8x7b --ep 8 --micro-batches 16 --seed 3 --out " + trace);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(written.err.find("wrote"), std::string::npos);
  const auto a =
      run("workload --model mixtral-8x7b --convention paper --gpus 128 --tp 4 --pp 4 --ep 8 --json "
          "--routing " +
          trace);
  const auto b =
      run("workload --model mixtral-8x7b --convention paper --gpus 128 --tp 4 --pp 4 --ep 8 --json "
          "--seed 3");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // The same seed through a file or generated in place gives the same job, the seed and the
  // routing's source aside (its skew is the same).
  nlohmann::json from_file = nlohmann::json::parse(a.out), generated = nlohmann::json::parse(b.out);
  EXPECT_EQ(from_file.at("expert_routing").at("source"), "trace");
  EXPECT_EQ(from_file.at("expert_routing").at("trace"), trace);
  EXPECT_EQ(generated.at("expert_routing").at("source"), "synthetic");
  EXPECT_EQ(from_file.at("expert_routing").at("busiest_over_mean"),
            generated.at("expert_routing").at("busiest_over_mean"));
  for (nlohmann::json* j : {&from_file, &generated}) {
    j->erase("seed");
    j->erase("expert_routing");
  }
  EXPECT_EQ(from_file, generated);
  const auto stats = run("trace --stats " + trace + " --json");
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"adjacent_layer_correlation\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(CliWorkload, ReadsChakraTraces) {
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric_cli_chakra_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int rank = 0; rank < 2; ++rank) {
    std::string bytes;
    auto frame = [&](const google::protobuf::MessageLite& m) {
      const std::string body = m.SerializeAsString();
      std::uint64_t n = body.size();
      do {
        const auto low = static_cast<unsigned char>(n & 0x7f);
        n >>= 7;
        bytes.push_back(static_cast<char>(n != 0 ? (low | 0x80) : low));
      } while (n != 0);
      bytes += body;
    };
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    frame(meta);
    pb::Node compute;
    compute.set_id(1);
    compute.set_name("gemm");
    compute.set_type(pb::COMP_NODE);
    compute.set_duration_micros(100);
    frame(compute);
    pb::Node reduce;
    reduce.set_id(2);
    reduce.set_name("grad");
    reduce.set_type(pb::COMM_COLL_NODE);
    reduce.add_data_deps(1);
    auto* type = reduce.add_attr();
    type->set_name("comm_type");
    type->set_int64_val(pb::ALL_REDUCE);
    auto* size = reduce.add_attr();
    size->set_name("comm_size");
    size->set_int64_val(1 << 20);
    frame(reduce);
    std::ofstream((dir / ("job." + std::to_string(rank) + ".et")).string(), std::ios::binary)
        << bytes;
  }
  const auto out = run("workload --chakra " + (dir / "job").string() + " --json");
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\"ranks\": 2"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("\"collective\": 2"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("\"compute\": 2"), std::string::npos) << out.out;
  fs::remove_all(dir);
}

TEST(CliWorkloadErrors, UnknownModel) {
  expect_error("workload --model gpt5 --gpus 8", "gpt5");
}
TEST(CliWorkloadErrors, ProductDoesNotMatchGpus) {
  expect_error("workload --model mixtral-8x7b --convention paper --gpus 100 --tp 4 --pp 4 --ep 8",
               "--gpus");
}
TEST(CliWorkloadErrors, ExpertsNotDivisibleByEp) {
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 48 --tp 1 --pp 1 --ep 3 "
      "--global-batch 128",
      "ep");
}
TEST(CliWorkloadErrors, TpNotDividingServer) {
  expect_error("workload --model mixtral-8x7b --convention paper --gpus 24 --tp 3 --pp 1 --ep 8",
               "tp");
}
TEST(CliWorkloadErrors, GlobalBatchNotDivisible) {
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 64 --tp 4 --pp 1 --ep 8 "
      "--global-batch 20",
      "--global-batch");
}
TEST(CliWorkloadErrors, UnknownGpu) {
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 32 --tp 4 --ep 8 --gpu v100",
      "v100");
}
TEST(CliWorkloadErrors, UnknownSchedule) {
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 32 --tp 4 --ep 8 --schedule zigzag",
      "--schedule");
}
TEST(CliWorkloadErrors, MissingChakraTrace) {
  expect_error("workload --chakra /nonexistent/job", "/nonexistent/job.0.et");
}
TEST(CliWorkloadErrors, MalformedModelFile) {
  expect_error("workload --model " + mfabric::testing::data("model_bad.yaml") + " --gpus 8",
               "model_bad.yaml");
}
TEST(CliWorkloadErrors, RoutingTraceOfTheWrongShape) {
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 64 --tp 4 --pp 1 --ep 8 --routing " +
          mfabric::testing::data("routing_small.txt"),
      "EP ranks");
}
TEST(CliWorkloadErrors, MalformedRoutingTrace) {
  expect_error("trace --stats " + mfabric::testing::data("routing_ragged.txt"),
               "routing_ragged.txt");
}
TEST(CliWorkloadErrors, UnknownGeneratorParameter) {
  expect_error("trace --model mixtral-8x7b --ep 8 --out /tmp/x.json --generator skew=2", "skew");
  // Ranges are checked when the option is read, naming it.
  expect_error("trace --model mixtral-8x7b --ep 8 --out /tmp/x.json --generator skew_initial=-1",
               "--generator.skew_initial: expected a finite non-negative number");
}
TEST(CliWorkloadErrors, TraceNeedsOut) {
  expect_error("trace --model mixtral-8x7b --ep 8", "--out");
}

}  // namespace
