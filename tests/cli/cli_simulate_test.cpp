// `mfabric simulate`: golden output of a microbenchmark, the --out files (those written by
// default, the trace and its filters, utilisation over time checked against links.csv), and bad
// input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace {

using mfabric::testing::data;
using mfabric::testing::expect_error;
using mfabric::testing::run;
using mfabric::testing::slurp;
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

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.insert(entry.path().filename().string());
  return names;
}

// A fresh directory for a test's --out directories, removed with it.
struct ScratchDir {
  fs::path path =
      fs::temp_directory_path() / ("mfabric_sim_out_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ScratchDir() { fs::remove_all(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

TEST(CliSimulate, WritesEveryOutputAndTheyAreDeterministic) {
  const ScratchDir dir;
  const std::string cmd = "simulate " + example("micro/all-to-all-per-rail.yaml") + " --out ";
  const mfabric::testing::Outcome a = run(cmd + (dir.path / "a").string());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(run(cmd + (dir.path / "b").string()).exit_code, 0);
  // By default: no trace, no flows, no per-link series; the page and the class series.
  const std::set<std::string> written = {"results.json", "links.csv", "collectives.csv",
                                         "utilisation.csv", "report.html"};
  EXPECT_EQ(entries(dir.path / "a"), written);
  for (const std::string& f : written) {
    EXPECT_NE(a.out.find((dir.path / "a" / f).string()), std::string::npos) << f << a.out;
    // Every CSV has rows, never a header alone.
    if (f.ends_with(".csv")) {
      const std::string text = mfabric::testing::csv_body(slurp(dir.path / "a" / f));
      EXPECT_GE(std::count(text.begin(), text.end(), '\n'), 2) << f;
      // Provenance: the first line names the build and the command.
      EXPECT_NE(slurp(dir.path / "a" / f).rfind("# mfabric ", 0), std::string::npos) << f;
    }
  }
  EXPECT_EQ(a.out.find("trace.json"), std::string::npos) << a.out;
  EXPECT_EQ(mfabric::testing::without_provenance(slurp(dir.path / "a" / "results.json")),
            mfabric::testing::without_provenance(slurp(dir.path / "b" / "results.json")));
  // The same but for the provenance (the two command lines name other directories).
  for (const char* f : {"utilisation.csv", "report.html", "links.csv"}) {
    EXPECT_EQ(mfabric::testing::without_provenance_line(slurp(dir.path / "a" / f)),
              mfabric::testing::without_provenance_line(slurp(dir.path / "b" / f)))
        << f;
  }
  EXPECT_EQ(mfabric::testing::csv_body(slurp(dir.path / "a" / "links.csv"))
                .rfind("link,direction,from,to,kind", 0),
            0u);
  EXPECT_EQ(mfabric::testing::csv_body(slurp(dir.path / "a" / "utilisation.csv"))
                .rfind("time_s,bin_s,class,bytes,utilisation\n", 0),
            0u);
  // With --flows, a row per transfer whose end follows its start.
  ASSERT_EQ(run(cmd + (dir.path / "c").string() + " --flows").exit_code, 0);
  std::istringstream flows(mfabric::testing::csv_body(slurp(dir.path / "c" / "flows.csv")));
  std::string line;
  std::getline(flows, line);
  EXPECT_EQ(line, "task,src,dst,bytes,start_s,end_s,duration_s");
  int rows = 0;
  while (std::getline(flows, line)) {
    ++rows;
    const double duration = std::stod(line.substr(line.rfind(',') + 1));
    EXPECT_GT(duration, 0.0) << line;
  }
  EXPECT_GT(rows, 1);
  // Writing the default set over that one leaves no flows.csv behind.
  ASSERT_EQ(run(cmd + (dir.path / "c").string()).exit_code, 0);
  EXPECT_EQ(entries(dir.path / "c"), written);
}

// The ring all-reduce of 8 GPUs, one per server: every transfer crosses the NIC cables, whose
// class utilisation over the run is their bytes (links.csv) over their capacity x run time.
TEST(CliSimulate, ClassUtilisationIsTheLinksBytesOverCapacity) {
  const ScratchDir dir;
  const fs::path out = dir.path / "ring";
  ASSERT_EQ(
      run("simulate " + example("micro/all-reduce-ring.yaml") + " --bin 1ms --out " + out.string())
          .exit_code,
      0);
  const nlohmann::json results = nlohmann::json::parse(slurp(out / "results.json"));
  // links.csv: link,direction,from,to,kind,rate_gbps,bytes,...; NIC - leaf cables both ways.
  double nic_bytes = 0, nic_capacity = 0;
  std::istringstream links(slurp(out / "links.csv"));
  std::string line;
  std::getline(links, line);
  while (std::getline(links, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');)
      f.push_back(x);
    const bool nic_leaf = (f[2].find(".nic") != std::string::npos && f[3].starts_with("leaf")) ||
                          (f[3].find(".nic") != std::string::npos && f[2].starts_with("leaf"));
    if (!nic_leaf) continue;
    nic_bytes += std::stod(f[6]);
    nic_capacity += std::stod(f[5]) * 1e9 / 8;
  }
  ASSERT_GT(nic_bytes, 0);
  // utilisation.csv: time_s,bin_s,class,bytes,utilisation; 1 ms bins.
  double class_bytes = 0, weighted = 0, run_s = 0;
  std::istringstream csv(slurp(out / "utilisation.csv"));
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');)
      f.push_back(x);
    if (f[2] != "nic-leaf") continue;
    EXPECT_LE(std::stod(f[1]), 0.001 + 1e-12) << line;
    class_bytes += std::stod(f[3]);
    weighted += std::stod(f[4]) * std::stod(f[1]);
    run_s += std::stod(f[1]);
  }
  const double makespan = results.at("iteration_time_s").get<double>();
  EXPECT_NEAR(run_s, makespan, 1e-9);
  EXPECT_NEAR(class_bytes, nic_bytes, 1e-6 * nic_bytes + 8);
  EXPECT_NEAR(weighted / run_s, nic_bytes / (nic_capacity * makespan), 1e-5);
}

TEST(CliSimulate, TraceOnlyWhenAskedAndCutToTheGpusAsked) {
  const ScratchDir dir;
  // 32 GPUs (TP 2 x PP 4 x EP 4), a short job: the traces' contents, not their size, are checked.
  fs::create_directories(dir.path);
  const fs::path job = dir.path / "job.yaml";
  std::ofstream(job)
      << "cluster: {servers: 4, link: 400G, gpu: h800}\nfabric: fat-tree\n"
         "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 4, ep: 4, micro_batch: 1, "
         "global_batch: 4, seq: 1024}\n";
  const std::string cmd = "simulate " + job.string() + " --iterations 1 --out ";
  ASSERT_EQ(run(cmd + (dir.path / "all").string() + " --trace").exit_code, 0);
  ASSERT_EQ(run(cmd + (dir.path / "some").string() + " --trace-gpus 0,20").exit_code, 0);
  ASSERT_EQ(
      run(cmd + (dir.path / "stage").string() + " --trace-stage 3 --trace-gpus 20-28").exit_code,
      0);
  const auto pids = [&](const char* name) {
    std::set<int> out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(dir.path / name / "trace.json"));
    for (const nlohmann::json& e : doc.at("traceEvents"))
      out.insert(e.at("pid").get<int>());
    return out;
  };
  EXPECT_EQ(pids("all").size(), 32u);  // TP 2 x PP 4 x EP 4
  EXPECT_EQ(pids("some"), (std::set<int>{0, 20}));
  // Stage 3 is GPUs 24-31 (the pipeline stage is the outermost rank dimension).
  EXPECT_EQ(pids("stage"), (std::set<int>{24, 25, 26, 27, 28}));
  EXPECT_LT(fs::file_size(dir.path / "some" / "trace.json"),
            fs::file_size(dir.path / "all" / "trace.json") / 8);
}

TEST(CliSimulate, LinksOverTimeListsOnlyLinksThatCarriedBytes) {
  const ScratchDir dir;
  const fs::path out = dir.path / "links";
  ASSERT_EQ(run("simulate " + example("micro/all-reduce-ring.yaml") + " --links-over-time --out " +
                out.string())
                .exit_code,
            0);
  std::istringstream csv(mfabric::testing::csv_body(slurp(out / "utilisation_links.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "time_s,bin_s,link,direction,from,to,class,bytes,utilisation");
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    const double utilisation = std::stod(line.substr(line.rfind(',') + 1));
    EXPECT_GT(utilisation, 0.0) << line;
    EXPECT_LE(utilisation, 1.0 + 1e-6) << line;
  }
  EXPECT_GT(rows, 0);
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

// "(MFU 12.3%)", as the text table prints it.
std::string fmt_mfu(double mfu) {
  char text[32];
  std::snprintf(text, sizeof text, "(MFU %.1f%%)", 100 * mfu);
  return text;
}

// A small Mixtral 8x7B job: TP 4 x EP 8 = 32 GPUs, 4 servers of 8 per EP group, on 8 servers.
void write_small_job(const fs::path& path) {
  std::ofstream(path)
      << "cluster: {servers: 8, link: 400G}\n"
         "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 8, "
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
  // No warning about the regions (the GPUs of this small job idle most of the iteration, which
  // is a warning of its own).
  EXPECT_EQ(o.err.find("region"), std::string::npos) << o.err;
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
  // Speed reads as everywhere: the reference's time over this run's, spelled out.
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", t_ref / t);
  char spelled[48];
  std::snprintf(spelled, sizeof spelled, t_ref >= t ? "%.2fx faster" : "%.2fx slower",
                t_ref >= t ? t_ref / t : t / t_ref);
  EXPECT_NE(o.out.find("vs fat-tree: speed " + std::string(ratio) + " (" + spelled + ": "),
            std::string::npos)
      << ratio << " " << spelled << "\n"
      << o.out;
  EXPECT_NE(o.out.find("perf/$ "), std::string::npos) << o.out;
  expect_error("simulate " + file.string() + " --vs fat-tree:bogus=1", "--vs");
  fs::remove(file);
}

// A bubble-heavy job: Mixtral 8x7B over PP 4 with 2 micro-batches (TP 2 x PP 4 x EP 4 = 32
// GPUs on 4 servers): each stage idles 3 of 5 slots in the pipeline's fill and drain.
// `workload_extra`: more workload fields, e.g. ", routing: {...}".
void write_bubbly_job(const fs::path& path, const std::string& workload_extra = "") {
  std::ofstream(path)
      << "cluster: {servers: 4}\n"
         "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 4, ep: 4, micro_batch: 1, "
         "global_batch: 2, seq: 1024"
      << workload_extra << "}\n";
}

// Tokens/s, model TFLOP/s and MFU per GPU by formula from results.json's own iteration time;
// how busy the GPUs are; the warning on stderr only, --json's stdout JSON alone.
TEST(CliSimulate, SaysWhatEachGpuGetsDoneAndWarnsWhenItIdles) {
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_busy_" + std::to_string(::getpid()) + ".yaml");
  write_bubbly_job(file);
  const auto o = run("simulate " + file.string() + " --json -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(o.out)) << o.out;
  const double t = j.at("iteration_time_s").get<double>();
  ASSERT_GT(t, 0);
  EXPECT_EQ(j.at("gpus"), 32);
  // Tokens per iteration: global batch x EP x seq (each EP rank runs its own micro-batches,
  // docs/workload.md).
  const double tokens_per_s_per_gpu = 2.0 * 4 * 1024 / t / 32;
  EXPECT_NEAR(j.at("tokens_per_s_per_gpu").get<double>(), tokens_per_s_per_gpu,
              1e-9 * tokens_per_s_per_gpu);
  EXPECT_NEAR(j.at("tokens_per_s").get<double>(), 32 * tokens_per_s_per_gpu,
              1e-9 * 32 * tokens_per_s_per_gpu);
  // Mixtral 8x7B at seq 1024: matmuls 25,495,076,864 FLOPs per token forward
  // (tests/workload/model_flops_test.cpp), attention core 32 layers x 2 x 1024 x 32 x 128 =
  // 268,435,456; training 3 x 25,763,512,320 = 77,290,536,960.
  const double tflops = tokens_per_s_per_gpu * 77'290'536'960.0 / 1e12;
  EXPECT_NEAR(j.at("model_tflops_per_gpu").get<double>(), tflops, 1e-9 * tflops);
  // MFU: over the H800's (the default GPU's) dense bf16 peak, 989 TFLOP/s.
  EXPECT_NEAR(j.at("mfu").get<double>(), j.at("model_tflops_per_gpu").get<double>() * 1e12 / 989e12,
              1e-12);
  const nlohmann::json& busy = j.at("gpu_busy");
  EXPECT_EQ(busy.at("pipeline_stages"), 4);
  EXPECT_EQ(busy.at("micro_batches"), 2);
  EXPECT_DOUBLE_EQ(busy.at("bubble_fraction").get<double>(), 3.0 / 5);
  const double mean = busy.at("busy_fraction").get<double>();
  EXPECT_GT(mean, 0);
  EXPECT_LT(mean, 0.5);
  EXPECT_LE(busy.at("least_busy_stage").at("busy_fraction").get<double>(), mean);
  EXPECT_GE(busy.at("busiest_stage").at("busy_fraction").get<double>(), mean);
  EXPECT_NEAR(busy.at("comm_wait_fraction").get<double>(), j.at("exposed_comm_s").get<double>() / t,
              1e-9);
  // Under half busy: one warning, on stderr, saying why.
  EXPECT_EQ(o.err.rfind("mfabric: warning: GPUs compute ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("pipeline bubbles (2 micro-batches for 4 stages: 60% of the iteration)"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;

  const auto text = run("simulate " + file.string() + " -q");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* row :
       {"tokens/s per GPU ", "model TFLOP/s per GPU (MFU) ", "GPU compute busy (of the iteration) ",
        "  idle in pipeline bubbles (estimate) "}) {
    EXPECT_NE(text.out.find(row), std::string::npos) << row << "\n" << text.out;
  }
  EXPECT_NE(text.out.find(fmt_mfu(j.at("mfu").get<double>())), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("warning"), std::string::npos) << text.out;
  EXPECT_EQ(text.err, o.err);
  fs::remove(file);
}

// A job Megatron-Core would refuse (the EP overlap on plain 1F1B with 4 stages) is simulated as
// given, with a warning on stderr and the same sentence in results.json; the same job on the
// interleaved schedule, which Megatron-Core accepts, and the job without the overlap have neither.
TEST(CliSimulate, WarnsOfSettingsMegatronCoreWouldRefuse) {
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_refused_" + std::to_string(::getpid()) + ".yaml");
  write_bubbly_job(file, ", overlap: {ep_comm: true}");
  const auto o = run("simulate " + file.string() + " --json -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j.at("framework_warnings").size(), 1u) << o.out;
  const std::string sentence = j.at("framework_warnings")[0].get<std::string>();
  EXPECT_NE(sentence.find("interleaved"), std::string::npos) << sentence;
  EXPECT_NE(o.err.find("mfabric: warning: " + sentence + "\n"), std::string::npos) << o.err;

  for (const bool interleaved : {true, false}) {
    if (interleaved) {
      std::ofstream(file) << "cluster: {servers: 4}\n"
                             "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 4, "
                             "ep: 4, micro_batch: 1, global_batch: 4, seq: 1024, "
                             "schedule: interleaved, vp: 2, overlap: {ep_comm: true}}\n";
    } else {
      write_bubbly_job(file);
    }
    const auto a = run("simulate " + file.string() + " --json -q");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_FALSE(nlohmann::json::parse(a.out).contains("framework_warnings")) << interleaved;
    EXPECT_EQ(a.err.find("Megatron-Core"), std::string::npos) << a.err;
  }
  fs::remove(file);
}

// Every training run says where its expert routing came from and how skewed it is: the
// synthetic default's busiest expert above the mean; forced balance exactly at it (1,024 tokens
// top-2 over 8 experts: 256 each from every source).
TEST(CliSimulate, SaysHowSkewedTheExpertRoutingIs) {
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_routing_" + std::to_string(::getpid()) + ".yaml");
  write_bubbly_job(file);
  const auto skewed = run("simulate " + file.string() + " --json -q");
  ASSERT_EQ(skewed.exit_code, 0) << skewed.err;
  const nlohmann::json r = nlohmann::json::parse(skewed.out).at("expert_routing");
  EXPECT_EQ(r.at("source"), "synthetic");
  EXPECT_EQ(r.at("balance"), "skewed");
  const nlohmann::json& busiest = r.at("busiest_over_mean");
  EXPECT_GT(busiest.at("mean").get<double>(), 1.0);
  EXPECT_LE(busiest.at("min").get<double>(), busiest.at("mean").get<double>());
  EXPECT_GE(busiest.at("max").get<double>(), busiest.at("mean").get<double>());

  write_bubbly_job(file, ", routing: {synthetic: {balance: forced}}");
  const auto forced = run("simulate " + file.string() + " -q");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("synthetic, forced balance, busiest expert 1.00x the mean (1.00-1.00)"),
            std::string::npos)
      << forced.out;
  fs::remove(file);
}

// Workloads without a model (a micro-benchmark) have no tokens or model FLOPs: no such keys,
// not zeros.
TEST(CliSimulate, NoGpuFiguresWithoutAModel) {
  const auto o = run("simulate " + example("micro/all-reduce-ring.yaml") + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  for (const char* key :
       {"tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu", "gpu_busy"}) {
    EXPECT_FALSE(j.contains(key)) << key;
  }
  EXPECT_EQ(o.err, "");
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
TEST(CliSimulateErrors, BinsBeyondTheBoundAreRefusedWithNoOutput) {
  const ScratchDir dir;
  // 1 ns bins over a run of milliseconds: more than 50,000,000 cells.
  expect_error("simulate " + example("micro/all-reduce-ring.yaml") + " --bin 1ns --out " +
                   (dir.path / "out").string(),
               "--bin: time bins of 1ns need more than 50000000 cells");
  EXPECT_FALSE(fs::exists(dir.path / "out"));
}
TEST(CliSimulateErrors, BadOutputOptions) {
  const std::string cmd =
      "simulate " + example("micro/all-reduce-ring.yaml") + " --out /tmp/mfabric_never_written ";
  expect_error(cmd + "--bin 0ms", "--bin: expected a time bin above zero");
  expect_error(cmd + "--bin 5", "--bin");
  expect_error(cmd + "--trace-gpus 0-x", "--trace-gpus: expected GPU numbers and ranges");
  expect_error(cmd + "--trace-gpus 4096", "--trace-gpus: GPU 4096 is not in the cluster");
  expect_error(cmd + "--trace-stage 0", "--trace-stage: only a training job");
  expect_error("simulate " + example("mixtral-8x7b.yaml") +
                   " --out /tmp/mfabric_never_written --trace-stage 4",
               "--trace-stage: the job has 4 pipeline stages");
  EXPECT_FALSE(fs::exists("/tmp/mfabric_never_written"));
  // Options of --out files without --out are usage errors.
  for (const char* option : {"--trace", "--flows", "--links-over-time", "--bin 5ms"})
    expect_error("simulate " + example("micro/all-reduce-ring.yaml") + " " + option, "--out", 2);
}

TEST(CliSimulate, NamesTheRateSolverItsShortcutIs) {
  // Each solver shortcut under its own name above the table (docs/shortcuts.md), taken or not.
  const fs::path file =
      fs::temp_directory_path() / ("mfabric_sim_solver_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1}\n"
                         "fabric: {kind: fat-tree, radix: 8}\n"
                         "workload: {collective: all-to-all, bytes: 1MiB}\n";
  const auto coflows = run("simulate " + file.string() + " --solver coflow");
  ASSERT_EQ(coflows.exit_code, 0) << coflows.err;
  EXPECT_NE(coflows.out.find("Coflows: each collective step's transfers moved as one coflow"),
            std::string::npos)
      << coflows.out;
  EXPECT_EQ(coflows.out.find("Fast solver"), std::string::npos) << coflows.out;
  const auto fast = run("simulate " + file.string() + " --solver fast");
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_NE(fast.out.find("Fast solver: "), std::string::npos) << fast.out;
  std::ofstream(file, std::ios::app) << "simulation: {backend: packet}\n";
  const auto packet = run("simulate " + file.string() + " --solver coflow");
  ASSERT_EQ(packet.exit_code, 0) << packet.err;
  EXPECT_NE(packet.out.find("Not coflows: the packet backend"), std::string::npos) << packet.out;
  fs::remove(file);
}

}  // namespace
