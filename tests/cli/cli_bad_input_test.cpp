// The reproductions of every crash, hang and misleading message found by trying the tool with bad
// input (issue 7): each gives one clear line naming the file, field or option, exit code 1, no
// output on stdout, within a time limit and (outside sanitizer builds) under 1 GB of memory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_harness.h"

namespace {

namespace fs = std::filesystem;
using mfabric::testing::Outcome;
using mfabric::testing::slurp;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mfabric_bad_input_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return name;
  }
  static std::string example(const std::string& name) {
    return fs::weakly_canonical(fs::path(MFABRIC_TEST_DATA_DIR) / ".." / ".." / ".." / "examples" /
                                name)
        .string();
  }
  // Runs mfabric in the test's directory under a 60 s limit and (without ASan, which reserves
  // terabytes of address space) 1 GB of address space.
  Outcome run(const std::string& args) {
    const std::string limit = kSanitized ? "" : "ulimit -v 1048576; ";
    const std::string cmd = "cd '" + dir_.string() + "' && (" + limit + "exec timeout 60 " +
                            MFABRIC_BINARY + " " + args + ") >out.txt 2>err.txt </dev/null";
    const int status = std::system(cmd.c_str());
    Outcome o;
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.out = slurp(dir_ / "out.txt");
    o.err = slurp(dir_ / "err.txt");
    return o;
  }
  void expect_error(const std::string& args, const std::string& needle) {
    const Outcome o = run(args);
    EXPECT_EQ(o.exit_code, 1) << "mfabric " << args << "\n" << o.err;
    EXPECT_EQ(o.out, "") << "mfabric " << args;
    EXPECT_EQ(o.err.rfind("mfabric: error: ", 0), 0u) << "mfabric " << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "mfabric " << args << "\n"
                                                               << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos)
        << "mfabric " << args << ": stderr does not mention '" << needle << "':\n"
        << o.err;
  }
  std::string ring_with_link(const std::string& link) {
    std::string text = slurp(example("micro/all-reduce-ring.yaml"));
    text.replace(text.find("link: 400G"), 10, "link: " + link);
    return write("ring-" + link + ".yaml", text);
  }
  std::string mixtral_8x7b_with(const std::string& from, const std::string& to) {
    std::string text = slurp(example("mixtral-8x7b.yaml"));
    text.replace(text.find(from), from.size(), to);
    return write("job.yaml", text);
  }
  fs::path dir_;
};

TEST_F(BadInput, LinkRatesThatWouldOverflowTheClockAreRefused) {
  for (const char* rate : {"1bps", "1Kbps", "1e-30G"}) {
    expect_error("simulate " + ring_with_link(rate), "cluster.link: must be a rate between");
  }
  expect_error("cost --link 1bps", "--link");
}

TEST_F(BadInput, HugeJobsAreRefusedBeforeTheyAreBuilt) {
  expect_error("workload --model mixtral-8x7b --gpus 8 --global-batch 100000000 --micro-batch 1",
               "--global-batch");
  expect_error("trace --model deepseek-r1 --ep 256 --micro-batches 100000 --out x.json",
               "--micro-batches");
  expect_error("trace --model deepseek-r1 --ep 256 --micro-batches 30000 --out x.json",
               "--max-memory");
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
  expect_error("simulate " + example("mixtral-8x22b.yaml") + " --iterations 100000000",
               "--iterations: must be between 1 and 10000");
  expect_error("simulate " + example("mixtral-8x22b.yaml") + " --iterations 0", "--iterations");
  expect_error("simulate " + mixtral_8x7b_with("global_batch: 128", "global_batch: 200000"),
               "simulation.max_memory: the job needs an estimated");
  expect_error("simulate " + example("mixtral-8x7b.yaml") + " --max-memory 1MiB", "--max-memory");
  expect_error("workload --model mixtral-8x7b --gpus 128 --tp 4 --pp 4 --ep 8 --max-memory 1KiB",
               "--max-memory");
}

TEST_F(BadInput, SizesThatWouldOverflowTheLoweringAreRefused) {
  std::string text = slurp(example("micro/all-reduce-ring.yaml"));
  text.replace(text.find("bytes: 1GiB"), 11, "bytes: 8000TB");
  expect_error("simulate " + write("huge.yaml", text), "workload.bytes: must be at most 1024TiB");
  // A direct all-to-all over 65536 servers would hold 4e9 transfers at once.
  write("a2a.yaml",
        "cluster: {servers: 65536, gpus_per_server: 1, nics_per_server: 1}\n"
        "workload: {collective: all-to-all, bytes: 1GiB}\n");
  expect_error("simulate a2a.yaml", "simulation.max_memory");
}

TEST_F(BadInput, DevicesFifosAndDirectoriesAreNotRead) {
  const std::string fifo = (dir_ / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error("simulate /dev/zero", "character device");
  expect_error("simulate fifo.yaml", "FIFO");
  expect_error("cost --prices /dev/zero", "character device");
  expect_error("cost --prices fifo.yaml", "FIFO");
  expect_error("simulate .", "directory");
  expect_error("workload --model fifo.yaml --gpus 8", "FIFO");
  expect_error("trace --stats fifo.yaml", "FIFO");
}

TEST_F(BadInput, ParallelismMessagesNameTheRealProblem) {
  expect_error("simulate " + mixtral_8x7b_with("tp: 4", "tp: 3"), "workload.tp: tp 3 must divide");
  write("ep.yaml",
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, ep: 16, global_batch: 64}\n");
  expect_error("simulate ep.yaml", "workload.ep: ep 16 must divide the 8 experts");
  write("pp.yaml",
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, pp: 48, global_batch: 64}\n");
  expect_error("simulate pp.yaml", "workload.pp: pp 48 exceeds the 32 layers");
  write("gpus.yaml",
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, tp: 4, pp: 4, ep: 8}\n");
  expect_error("simulate gpus.yaml", "give dp");
  expect_error("workload --model mixtral-8x7b --gpus 0", "--gpus: must be at least 1, got 0");
  expect_error("workload --model mixtral-8x7b", "--gpus");
  expect_error("workload --model mixtral-8x7b --gpus 32 --ep 16", "--ep");
}

TEST_F(BadInput, EmptyOptionValuesBlameThatOption) {
  for (const char* args : {"trace --stats ''", "workload --model '' --gpus 8", "cost --prices ''",
                           "simulate x.yaml --out ''"}) {
    expect_error(args, "expected a value, got an empty string");
  }
}

TEST_F(BadInput, NumbersOutOfRangeInARoutingTrace) {
  write("inf.json",
        R"({"format": "mfabric-routing-trace", "version": 1, "ep": 2, "experts": 2,)"
        R"( "iterations": 1, "micro_batches": 1, "layers": [0], "records": [{"iteration": 0,)"
        R"( "layer": 0, "micro_batch": 0, "tokens": [[1, 1e999], [3, 4]]}]})");
  expect_error("trace --stats inf.json", "inf.json");
  expect_error("workload --model mixtral-8x7b --gpus 32 --ep 8 --routing inf.json", "inf.json");
}

TEST_F(BadInput, NonUtf8NamesGiveValidJson) {
  const std::string name = write("\xff.yaml", slurp(example("micro/all-reduce-ring.yaml")));
  const Outcome o = run("simulate '" + name + "' --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"iteration_time_s"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\xff'), std::string::npos);
}

TEST_F(BadInput, CostsTooLargeToPrintAreRefused) {
  write("prices.yaml", "link_speeds:\n  400G:\n    nic: 1e16\n");
  expect_error("cost --prices prices.yaml", "link_speeds.400G.nic");
}

}  // namespace
