// `mfabric simulate`: golden output of a microbenchmark, the --out files, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_harness.h"

namespace {

using mfabric::testing::data;
using mfabric::testing::expect_error;
using mfabric::testing::run;
namespace fs = std::filesystem;

std::string example(const std::string& name) {
  return (fs::path(MFABRIC_TEST_DATA_DIR) / ".." / ".." / ".." / "examples" / name).string();
}

// Everything but the line that measures the run itself (wall time, events per second).
std::string without_timing(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end == std::string::npos ? end : end - pos + 1);
    if (line.find("wall time") == std::string::npos) {
      out += line;
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

TEST(CliSimulate, RingAllReduceMicrobenchmark) {
  const auto o = run("simulate all-reduce-ring.yaml", example("micro"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string golden_path = data("simulate_all_reduce_ring.txt");
  if (std::getenv("MFABRIC_UPDATE_GOLDEN")) {
    std::ofstream(golden_path) << without_timing(o.out);
    return;
  }
  std::ifstream in(golden_path);
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(without_timing(o.out), golden.str());
  // 2 x 15/16 x 1GiB / 400G + 30 x 2us.
  EXPECT_NE(o.out.find("40.325ms"), std::string::npos) << o.out;
}

TEST(CliSimulate, WritesEveryOutputAndTheyAreDeterministic) {
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric_sim_out_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cmd = "simulate " + example("micro/all-to-all-per-rail.yaml") + " --out ";
  ASSERT_EQ(run(cmd + (dir / "a").string()).exit_code, 0);
  ASSERT_EQ(run(cmd + (dir / "b").string()).exit_code, 0);
  for (const char* f : {"results.json", "links.csv", "collectives.csv", "trace.json"}) {
    ASSERT_TRUE(fs::exists(dir / "a" / f)) << f;
    EXPECT_GT(fs::file_size(dir / "a" / f), 0u) << f;
  }
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(mfabric::testing::without_provenance(slurp(dir / "a" / "results.json")),
            mfabric::testing::without_provenance(slurp(dir / "b" / "results.json")));
  EXPECT_NE(slurp(dir / "a" / "trace.json").find("\"traceEvents\""), std::string::npos);
  EXPECT_EQ(slurp(dir / "a" / "links.csv").rfind("link,direction,from,to,kind", 0), 0u);
  // flows.csv: the header alone, or with --flows a row per transfer whose end follows its start.
  const std::string header = "task,src,dst,bytes,start_s,end_s,duration_s\n";
  EXPECT_EQ(slurp(dir / "a" / "flows.csv"), header);
  ASSERT_EQ(run(cmd + (dir / "c").string() + " --flows").exit_code, 0);
  std::ifstream flows(dir / "c" / "flows.csv");
  std::string line;
  std::getline(flows, line);
  EXPECT_EQ(line + "\n", header);
  int rows = 0;
  while (std::getline(flows, line)) {
    ++rows;
    const double duration = std::stod(line.substr(line.rfind(',') + 1));
    EXPECT_GT(duration, 0.0) << line;
  }
  EXPECT_GT(rows, 1);
  fs::remove_all(dir);
}

TEST(CliSimulate, JsonHasTheDocumentedFields) {
  const auto o = run("simulate " + example("micro/all-reduce-ring.yaml") + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* key : {"\"iteration_time_s\"", "\"exposed_comm_s\"", "\"comm_time_s\"",
                          "\"events\"", "\"wall_time_s\"", "\"seed\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
}

TEST(CliSimulate, FabricOverride) {
  const auto o = run("simulate " + example("micro/all-reduce-ring.yaml") +
                     " --fabric fat-tree:radix=4 --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("fat-tree:radix=4"), std::string::npos);
}

// A small Mixtral 8x7B job: TP 4 x EP 8 = 32 GPUs, 4 servers of 8 per EP group, on 8 servers.
void write_small_job(const fs::path& path) {
  std::ofstream(path) << "cluster: {servers: 8, link: 400G}\n"
                         "workload: {model: mixtral-8x7b, tp: 4, pp: 2, ep: 8, global_batch: 8, "
                         "micro_batch: 2, seq: 256}\n";
}

// mFabric's regions are sized to the EP group, as compare sizes them: 4 servers here; an
// explicit region of 8 holds two EP groups, which a warning says with the run's conflicts.
TEST(CliSimulate, MfabricRegionsAreSizedToTheEpGroup) {
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_job_" + std::to_string(::getpid()) + ".yaml");
  write_small_job(file);
  auto o = run("simulate " + file.string() + " --fabric mfabric -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("on mfabric:region=4 ("), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
  o = run("simulate " + file.string() + " --fabric mfabric:region=8 -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("mfabric: warning: mfabric region=8 holds 2 EP groups of 4 servers: ", 0),
            0u)
      << o.err;
  EXPECT_NE(o.err.find("region=4 gives each EP group its own ("), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(" conflicts this run)\n"), std::string::npos) << o.err;
  // Smaller than an EP group: refused, naming the field.
  expect_error("simulate " + file.string() + " --fabric mfabric:region=2 -q",
               "fabric.region: an expert-parallel all-to-all");
  fs::remove(file);
}

// The verdict: tokens/s (global batch x EP x seq per iteration), the network cost, and with --vs
// the ratios against a second run of the job on the reference fabric.
TEST(CliSimulate, PrintsTokensPerSecondCostAndARatioAgainstAReference) {
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_vs_" + std::to_string(::getpid()) + ".yaml");
  write_small_job(file);
  const auto self = run("simulate " + file.string() + " --fabric mfabric --json -q");
  const auto fat_tree = run("simulate " + file.string() + " --fabric fat-tree --json -q");
  ASSERT_EQ(self.exit_code, 0) << self.err;
  ASSERT_EQ(fat_tree.exit_code, 0) << fat_tree.err;
  const double t = nlohmann::json::parse(self.out)["iteration_time_s"].get<double>();
  const double t_ref = nlohmann::json::parse(fat_tree.out)["iteration_time_s"].get<double>();
  const auto o = run("simulate " + file.string() + " --fabric mfabric --vs fat-tree -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string tokens =
      std::to_string(static_cast<long long>(std::llround(8.0 * 8 * 256 / t)));
  std::string with_commas;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0 && (tokens.size() - i) % 3 == 0) with_commas += ',';
    with_commas += tokens[i];
  }
  EXPECT_NE(o.out.find("tokens/s"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" " + with_commas + "\n"), std::string::npos) << with_commas << "\n"
                                                                     << o.out;
  EXPECT_NE(o.out.find("network cost (paper formulas)"), std::string::npos) << o.out;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", t / t_ref);
  EXPECT_NE(o.out.find("vs fat-tree: iteration time " + std::string(ratio)), std::string::npos)
      << ratio << "\n"
      << o.out;
  EXPECT_NE(o.out.find("perf/$ "), std::string::npos) << o.out;
  expect_error("simulate " + file.string() + " --vs fat-tree:bogus=1", "--vs");
  fs::remove(file);
}

TEST(CliSimulateErrors, MissingFile) {
  expect_error("simulate /nonexistent/exp.yaml", "/nonexistent/exp.yaml");
}
TEST(CliSimulateErrors, UnknownKey) {
  expect_error("simulate " + data("experiment_typo.yaml"), "clustr");
}
TEST(CliSimulateErrors, BadFabricOverride) {
  expect_error("simulate " + example("micro/all-reduce-ring.yaml") + " --fabric warp-drive",
               "warp-drive");
}
TEST(CliSimulateErrors, NoPartialOutputOnError) {
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric_sim_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  expect_error("simulate " + data("experiment_typo.yaml") + " --out " + dir.string(), "clustr");
  EXPECT_FALSE(fs::exists(dir / "results.json"));
}
TEST(CliSimulateErrors, ExperimentIsRequired) {
  expect_error("simulate", "experiment", 2);
}

}  // namespace
