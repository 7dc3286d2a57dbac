// The reproductions of every crash, hang and misleading message found by trying the tool with bad
// input (issues 7 and 24): each gives one clear line naming the file, field or option, exit code
// 1, no output on stdout, within a time limit and (outside sanitizer builds) under 1 GB of memory.
// The big inputs are generated here, not stored.
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
  expect_error(
      "workload --model mixtral-8x7b --no-recipe --gpus 8 --global-batch 100000000 --micro-batch 1",
      "--global-batch");
  expect_error("trace --model deepseek-r1 --ep 256 --micro-batches 100000 --out x.json",
               "--micro-batches");
  expect_error("trace --model deepseek-r1 --ep 256 --micro-batches 30000 --out x.json",
               "--max-memory");
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
  expect_error("simulate " + example("mixtral-8x22b.yaml") + " --iterations 100000000",
               "--iterations: must be between 1 and 10000");
  expect_error("simulate " + example("mixtral-8x22b.yaml") + " --iterations 0", "--iterations");
  // 25,000 micro-batches a pipeline: all of them (--exact) would not fit; extrapolated from 13
  // (docs/shortcuts.md) the job runs, and says so.
  const std::string huge = mixtral_8x7b_with("global_batch: 128", "global_batch: 200000");
  expect_error("simulate " + huge + " --exact",
               "simulation.max_memory: the job needs an estimated");
  const Outcome extrapolated = run("simulate " + huge);
  EXPECT_EQ(extrapolated.exit_code, 0) << extrapolated.err;
  EXPECT_NE(extrapolated.out.find("Steady state: simulated 13 of 25000 micro-batches"),
            std::string::npos)
      << extrapolated.out;
  EXPECT_NE(extrapolated.out.find("sent of the job's"), std::string::npos) << extrapolated.out;
  // --extrapolate false is the full run (refused the same way); a value other than true, false
  // or auto, or --extrapolate beside --exact, names the option.
  expect_error("simulate " + huge + " --extrapolate false",
               "simulation.max_memory: the job needs an estimated");
  for (const char* usage : {" --extrapolate maybe", " --exact --extrapolate true"}) {
    const Outcome o = run("simulate " + huge + usage);
    EXPECT_EQ(o.exit_code, 2) << usage << "\n" << o.err;  // a usage error
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find("--extrapolate"), std::string::npos) << o.err;
  }
  expect_error("simulate " + example("mixtral-8x7b.yaml") + " --max-memory 1MiB", "--max-memory");
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 128 --tp 4 --pp 4 --ep 8 "
      "--max-memory 1KiB",
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
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, convention: paper, ep: 16, "
        "global_batch: 64}\n");
  expect_error("simulate ep.yaml", "workload.ep: ep 16 must divide the 8 experts");
  write("pp.yaml",
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, convention: paper, pp: 48, "
        "global_batch: 64}\n");
  expect_error("simulate pp.yaml", "workload.pp: pp 48 exceeds the 32 layers");
  write("gpus.yaml",
        "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, "
        "ep: 8}\n");
  expect_error("simulate gpus.yaml", "give dp");
  expect_error("workload --model mixtral-8x7b --gpus 0", "--gpus: must be at least 1, got 0");
  // Without the recipe (which names its GPUs) the job size must be given.
  expect_error("workload --model mixtral-8x7b --no-recipe", "--gpus");
  expect_error("workload --model mixtral-8x7b --convention paper --gpus 32 --ep 16", "--ep");
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
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 32 --ep 8 --routing inf.json",
      "inf.json");
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

// --- issue 24 ---------------------------------------------------------------------------------

std::string nested(int levels) {
  return std::string(static_cast<std::size_t>(levels), '[') +
         std::string(static_cast<std::size_t>(levels), ']');
}

TEST_F(BadInput, JsonNestedDeepIsOneLineNotACrash) {
  // 100,000 levels died with SIGSEGV (a recursive dump in the message, a recursive walk).
  write("demand.json", "{\"demand_bytes\": " + nested(100000) + "}");
  expect_error("plan --demand demand.json",
               "demand.json: demand_bytes[0][0][0][0][0][0][0]...(246 levels)...[0][0]: arrays "
               "and objects are nested more than 256 levels deep here");
  write("format.json", "{\"format\": " + nested(100000) + "}");
  expect_error("trace --stats format.json", "format.json: format[0]");
  expect_error("predict --model mixtral-8x7b --trace format.json", "format.json: format[0]");
  expect_error(
      "workload --model mixtral-8x7b --convention paper --gpus 32 --ep 8 --routing format.json",
      "format.json: format[0]");
  // A repeated key is refused, not silently resolved to the last one.
  write("twice.json", R"({"demand_bytes": [[0, 1], [1, 0]], "demand_bytes": [[0]]})");
  expect_error("plan --demand twice.json", "demand_bytes: this key appears twice");
}

TEST_F(BadInput, RunningOutOfMemoryWhileParsingJsonIsOneLine) {
  // A row of 48 million numbers needs a 1 GiB array: under the 1 GB address-space limit of
  // these tests, memory runs out while parsing. It used to abort ("terminate called") inside
  // nlohmann's noexcept destructor; the partial document is now freed without allocating. (A
  // 240 MB row on a 4 GB machine is refused by the 2 GiB estimate instead: JsonInput tests.)
  if (kSanitized) GTEST_SKIP() << "ASan reserves terabytes of address space: no ulimit";
  {
    std::ofstream out(dir_ / "row.json", std::ios::binary);
    out << "{\"demand_bytes\": [[0";
    const std::string chunk = [] {
      std::string c;
      for (int i = 0; i < 1000; ++i)
        c += ",0";
      return c;
    }();
    for (int i = 0; i < 48000; ++i)
      out << chunk;
    out << "]]}";
  }
  expect_error("plan --demand row.json", "row.json: demand_bytes[0][");
  const Outcome o = run("plan --demand row.json");
  EXPECT_NE(o.err.find("out of memory after"), std::string::npos) << o.err;
}

TEST_F(BadInput, OutputsNeverReplaceDevicesFifosOrDanglingLinks) {
  const std::string trace = "trace --model mixtral-8x7b --ep 8 --out ";
  expect_error(trace + "/dev/null", "/dev/null: --out: is a character device, not a regular file");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  expect_error(trace + "fifo", "fifo: --out: is a FIFO");
  fs::create_symlink(dir_ / "missing" / "x.json", dir_ / "dangling.json");
  expect_error(trace + "dangling.json", "is a symbolic link to a missing file");
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::lstat((dir_ / "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.json"));
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

TEST_F(BadInput, ControlCharactersFromInputAreEscaped) {
  // ESC, BEL and newlines in a key, a value and an option reach the terminal escaped, on one line.
  write("keys.yaml", "cluster: {\"serv\\e[2Jers\\n\": 8}\nworkload: {collective: \"a\\ab\"}\n");
  Outcome o = run("simulate keys.yaml");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("serv\\x1B[2Jers\\n"), std::string::npos) << o.err;
  o = run("cost --bogus$'\\x1b[2J\\a'");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\a'), std::string::npos) << o.err;
  // A long value is cut in the message, its length given.
  write("long.yaml", "cluster: {link: '" + std::string(500000, '9') + "'}\nworkload: {}\n");
  o = run("simulate long.yaml");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_LT(o.err.size(), 400u) << o.err.substr(0, 400);
  EXPECT_NE(o.err.find("(500000 bytes)"), std::string::npos) << o.err.substr(0, 400);
}

TEST_F(BadInput, YamlThatIsAcceptedButWrongIsRefused) {
  write("two.yaml", "workload: {collective: all-reduce, bytes: 1GiB}\n---\nworkload: {}\n");
  expect_error("simulate two.yaml", "two.yaml: the file holds a second YAML document");
  write("name.yaml", "name: {a: 1}\nworkload: {collective: all-reduce, bytes: 1GiB}\n");
  expect_error("simulate name.yaml", "name.yaml: name: expected text, got a map");
  write("description.yaml",
        "description: [a, b]\nworkload: {collective: all-reduce, bytes: 1GiB}\n");
  expect_error("simulate description.yaml", "description: expected text, got a list");
  // A 2 MiB experiment (one huge unknown key used to reach 4 GB) is refused by its size.
  std::string list;
  for (int k = 0; k < (1 << 20); ++k)
    list += "0,";
  write("big.yaml", "workload: {collective: all-reduce, bytes: 1GiB}\nx: [" + list + "0]\n");
  expect_error("simulate big.yaml", "larger than the 1MiB mfabric reads");
  expect_error("predict --model mixtral-8x7b --top-k 0", "--top-k: expected at least 1");
}

TEST_F(BadInput, SizesInRangeThatNoMachineHoldsAreRefusedBeforeTheyAreBuilt) {
  // 65,536 servers x 1,024 GPUs x 1,024 NICs grew to 3.95 GB before "out of memory".
  const std::string cluster = "--servers 65536 --gpus-per-server 1024 --nics-per-server 1024";
  expect_error("cost " + cluster, "make a topology of about");
  expect_error("topology " + cluster, "more than the limit of 8GiB");
  write("huge.yaml",
        "cluster: {servers: 65536, gpus_per_server: 1024, nics_per_server: 1024}\n"
        "workload: {collective: all-reduce, bytes: 1GiB}\n");
  expect_error("simulate huge.yaml",
               "huge.yaml: simulation.max_memory: simulating the cluster's 65536 servers");
  // A failures list longer than the cluster's parts is refused before it is read.
  std::string failures =
      "cluster: {servers: 2}\nworkload: {collective: all-reduce, bytes: 1GiB}\n"
      "failures:\n";
  for (int k = 0; k < 40; ++k)
    failures += "  - {kind: nic, server: 0, index: 0}\n";
  write("failures.yaml", failures);
  expect_error("simulate failures.yaml", "failures: lists 40 failures, more than the 34 parts");
  expect_error("cost --fabric fat-tree:oversubscription=1e308", "oversubscription");
  expect_error("cost --fabric fat-tree:radix=1000000000", "radix: must be an even number");
  expect_error("cost --fabric mfabric:ocs_ports=1000000000", "ocs_ports: must be at most 4096");
}

}  // namespace
