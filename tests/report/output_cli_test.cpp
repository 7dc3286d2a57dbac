// The outputs through the real binary (MFABRIC_BINARY): JSON stays valid for a file named with
// byte 0xff, bad numbers in inputs are one-line errors, and `simulate --out DIR` interrupted by
// a signal at any moment leaves DIR with the previous complete set or the new one and nothing
// temporary next to it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/output_text.h"
#include "test_text.h"

namespace mfabric {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::slurp;

const fs::path kProject = fs::path(MFABRIC_TEST_DATA_DIR).parent_path().parent_path().parent_path();

struct Outcome {
  int status = -1;  // as from waitpid
  std::string out;
  std::string err;
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Starts mfabric with `args`, stdout and stderr to files in `dir`.
pid_t start(const std::vector<std::string>& args, const fs::path& dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open((dir / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<char*> argv;
    std::string binary = MFABRIC_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

Outcome finish(pid_t pid, const fs::path& dir) {
  Outcome o;
  ::waitpid(pid, &o.status, 0);
  o.out = slurp(dir / "stdout");
  o.err = slurp(dir / "stderr");
  return o;
}

class OutputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("mfabric-output-cli-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "io");
    fs::create_directories(root_ / "work");
  }
  void TearDown() override { fs::remove_all(root_); }
  Outcome run(const std::vector<std::string>& args) {
    return finish(start(args, root_ / "io"), root_ / "io");
  }
  fs::path work() const { return root_ / "work"; }
  std::set<std::string> entries(const fs::path& dir) const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      names.insert(entry.path().filename().string());
    return names;
  }
  fs::path root_;
};

// What simulate --out writes with --trace --flows (gnuplot is installed where tests run).
const std::set<std::string> kSet = {"results.json",    "links.csv",   "collectives.csv",
                                    "utilisation.csv", "report.html", "trace.json",
                                    "flows.csv"};

TEST_F(OutputCli, ExperimentFileNamedWithByteFFGivesValidJson) {
  const fs::path exp = work() / "exp\xFF.yaml";
  fs::copy_file(kProject / "examples" / "micro" / "all-reduce-ring.yaml", exp);
  const Outcome o = run({"simulate", exp.string(), "--json", "--out", (work() / "out").string(),
                         "--trace", "--flows"});
  ASSERT_EQ(o.exit_code(), 0) << o.err;
  EXPECT_TRUE(is_valid_utf8(o.out));
  const json j = json::parse(o.out);
  EXPECT_EQ(j.at("experiment"), (work() / "exp\xEF\xBF\xBD.yaml").string());
  EXPECT_EQ(entries(work() / "out"), kSet);
  const json results = json::parse(slurp(work() / "out" / "results.json"));
  EXPECT_EQ(results.at("experiment"), j.at("experiment"));
  EXPECT_TRUE(json::accept(slurp(work() / "out" / "trace.json")));
}

// A model file whose `name:` holds byte 0xff (the model reader refuses control characters and
// spaces, not bytes that are not UTF-8): JSON valid, text valid UTF-8.
TEST_F(OutputCli, ModelNameWithByteFFGivesValidJsonAndText) {
  std::string model = slurp(kProject / "data" / "models" / "mixtral-8x7b.yaml");
  model.replace(model.find("name: mixtral-8x7b"), 18, "name: \"mixtral\xFF\"");
  std::ofstream(work() / "model.yaml") << model;
  const std::vector<std::string> args = {"workload",
                                         "--model",
                                         (work() / "model.yaml").string(),
                                         "--gpus",
                                         "8",
                                         "--tp",
                                         "2",
                                         "--pp",
                                         "2",
                                         "--ep",
                                         "2",
                                         "--micro-batch",
                                         "1",
                                         "--global-batch",
                                         "4",
                                         "--seq",
                                         "256"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Outcome j = run(json_args);
  ASSERT_EQ(j.exit_code(), 0) << j.err;
  EXPECT_TRUE(is_valid_utf8(j.out));
  EXPECT_EQ(json::parse(j.out).at("model"), "mixtral\xEF\xBF\xBD");
  const Outcome t = run(args);
  ASSERT_EQ(t.exit_code(), 0) << t.err;
  EXPECT_TRUE(is_valid_utf8(t.out));
  EXPECT_EQ(t.out.find('\x1B'), std::string::npos);
  EXPECT_NE(t.out.find("workload mixtral\xEF\xBF\xBD on 8 GPUs"), std::string::npos) << t.out;
}

TEST_F(OutputCli, HugePriceIsAOneLineErrorNamingTheField) {
  std::ofstream(work() / "prices.yaml") << "link_speeds:\n  400G:\n    nic: 1e16\n";
  const Outcome o = run({"cost", "--prices", (work() / "prices.yaml").string()});
  EXPECT_EQ(o.exit_code(), 1);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("link_speeds.400G.nic"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("at most 1000000000"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST_F(OutputCli, RoutingTraceNumberOutOfRangeIsAOneLineError) {
  std::ofstream(work() / "t.json")
      << R"({"format": "mfabric-routing-trace", "version": 1, "ep": 1, "experts": 2,)"
      << R"( "iterations": 1, "micro_batches": 1, "layers": [0], "records": [)"
      << R"({"iteration": 0, "layer": 0, "micro_batch": 0, "tokens": [[1, 1e999]]}]})";
  const Outcome o = run({"trace", "--stats", (work() / "t.json").string()});
  EXPECT_EQ(o.exit_code(), 1) << o.err;
  EXPECT_EQ(o.err.rfind("mfabric: error: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("records[0].tokens[0][1]"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("out of range"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST_F(OutputCli, OutIntoADirectoryWithOtherFilesIsRefused) {
  fs::create_directories(work() / "out");
  std::ofstream(work() / "out" / "notes.txt") << "mine";
  const Outcome o =
      run({"simulate", (kProject / "examples" / "micro" / "all-reduce-ring.yaml").string(), "--out",
           (work() / "out").string()});
  EXPECT_EQ(o.exit_code(), 1);
  EXPECT_NE(o.err.find("notes.txt"), std::string::npos) << o.err;
  EXPECT_EQ(entries(work() / "out"), std::set<std::string>{"notes.txt"});
  EXPECT_EQ(entries(work()), std::set<std::string>{"out"});
}

// The 1024-GPU example takes seconds to simulate and about a second to write its 90 MB trace:
// long enough to interrupt during the run and during the write.
class Interrupted : public OutputCli {
 protected:
  // A previous complete set in work()/out, from the small example.
  std::string write_previous_set() {
    const Outcome o =
        run({"simulate", (kProject / "examples" / "micro" / "all-reduce-ring.yaml").string(),
             "--out", (work() / "out").string(), "--trace", "--flows"});
    EXPECT_EQ(o.exit_code(), 0) << o.err;
    return slurp(work() / "out" / "results.json");
  }
  pid_t start_large() {
    return start({"simulate", (kProject / "examples" / "mixtral-8x22b.yaml").string(), "--out",
                  (work() / "out").string(), "--trace", "--flows"},
                 root_ / "io");
  }
  // 128 GPUs: a fraction of a second to simulate (seconds under the sanitizers) and a 12 MB
  // trace, long enough to catch the write.
  pid_t start_medium() {
    const fs::path yaml = root_ / "medium.yaml";
    std::ofstream(yaml)
        << "cluster: {servers: 16, link: 400G}\nfabric: fat-tree\n"
        << "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, "
        << "global_batch: 64, micro_batch: 8}\n";
    return start(
        {"simulate", yaml.string(), "--out", (work() / "out").string(), "--trace", "--flows"},
        root_ / "io");
  }
  // `out` holds the previous set or a complete new one, and nothing else is in work().
  void expect_old_or_complete_new(const std::string& previous_results) {
    EXPECT_EQ(entries(work()), std::set<std::string>{"out"});
    ASSERT_EQ(entries(work() / "out"), kSet);
    const std::string results = slurp(work() / "out" / "results.json");
    if (results == previous_results) return;
    const std::string experiment = json::parse(results).at("experiment").get<std::string>();
    EXPECT_TRUE(experiment.find("mixtral-8x22b") != std::string::npos ||
                experiment.find("medium.yaml") != std::string::npos)
        << experiment;
    EXPECT_TRUE(json::accept(slurp(work() / "out" / "trace.json")));
  }
};

TEST_F(Interrupted, SigtermDuringTheRunLeavesThePreviousSet) {
  const std::string previous = write_previous_set();
  const pid_t pid = start_large();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(pid, SIGTERM);
  const Outcome o = finish(pid, root_ / "io");
  EXPECT_TRUE(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGTERM) << o.status << o.err;
  EXPECT_EQ(slurp(work() / "out" / "results.json"), previous);
  expect_old_or_complete_new(previous);
}

TEST_F(Interrupted, SigintWhileWritingLeavesThePreviousSetAndNoStaging) {
  const std::string previous = write_previous_set();
  const pid_t pid = start_medium();
  // Wait for the staging directory: the run is over and the files are being written.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool writing = false;
  while (!writing && std::chrono::steady_clock::now() < deadline) {
    for (const auto& name : entries(work()))
      writing |= name.starts_with(".out.staging.");
    if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(writing) << "never saw the staging directory";
  ::kill(pid, SIGINT);
  const Outcome o = finish(pid, root_ / "io");
  // The write may have finished in the meantime; then the new set is complete.
  if (WIFSIGNALED(o.status)) {
    EXPECT_EQ(WTERMSIG(o.status), SIGINT);
    EXPECT_EQ(slurp(work() / "out" / "results.json"), previous);
  } else {
    EXPECT_EQ(o.exit_code(), 0) << o.err;
  }
  expect_old_or_complete_new(previous);
}

}  // namespace
}  // namespace mfabric
