// mfabric compare: the table, JSON and the output set on a small job, and one clear line for
// every bad choice.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "report/compare_html.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using mfabric::testing::expect_error;
using mfabric::testing::Outcome;
using mfabric::testing::run;

// 8 servers, Mixtral 8x7B on 64 GPUs, a short job: every fabric runs in well under a second.
constexpr const char* kSmall =
    "cluster: {servers: 8, link: 400G}\n"
    "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 8, "
    "micro_batch: 2, "
    "seq: 256}\n";

class CompareCli : public mfabric::testing::ScratchDirTest {
 protected:
  CompareCli() : ScratchDirTest("mfabric_compare_cli") {}
};

TEST_F(CompareCli, JsonHasEveryRunRelativeToTheFatTree) {
  const std::string file = write("small.yaml", kSmall);
  const Outcome o = run("compare " + file +
                        " --links 100G,400G --fabrics fat-tree,mfabric --jobs 2 --json --spread "
                        "none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], "mfabric.compare/1");
  EXPECT_EQ(j["seed"], 1);
  ASSERT_EQ(j["runs"].size(), 4u);
  EXPECT_EQ(j["runs"][0]["fabric"], "fat-tree");
  EXPECT_EQ(j["runs"][0]["link_gbps"], 100);
  EXPECT_EQ(j["runs"][0]["relative_iteration_time"], 1.0);
  EXPECT_EQ(j["runs"][1]["fabric"], "mfabric");
  EXPECT_GT(j["runs"][1]["reconfiguration"]["count"].get<int>(), 0);
  for (const auto& r : j["runs"]) {
    EXPECT_GT(r["iteration_time_s"].get<double>(), 0);
    EXPECT_GT(r["cost_usd"]["paper"].get<double>(), 0);
    EXPECT_GT(r["cost_usd"]["built"].get<double>(), 0);
    EXPECT_TRUE(r["perf_per_dollar_vs_fat_tree"].is_number());
    EXPECT_FALSE(r.contains("error"));
  }
  EXPECT_EQ(j["timeline"]["run"], "mixtral-8x7b 100G mfabric");
  EXPECT_FALSE(j["timeline"]["spans"].empty());
}

TEST_F(CompareCli, TableAndOutputSet) {
  const std::string file = write("small.yaml", kSmall);
  const fs::path out = dir_ / "out";
  const Outcome o =
      run("compare " + file +
          " --fabrics fat-tree,fat-tree-3to1,mfabric --spread none --baselines as-given --out " +
          out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("vs fat-tree"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mfabric at 400G (1 model;"), std::string::npos) << o.out;
  EXPECT_NE(
      o.out.find("wrote " + out.string() + "/results.json, " + out.string() + "/results.csv, " +
                 out.string() + "/report.html, " + out.string() + "/points.jsonl\n"),
      std::string::npos)
      << o.out;
  ASSERT_TRUE(fs::exists(out / "results.json"));
  ASSERT_TRUE(fs::exists(out / "results.csv"));
  // report.html: every figure drawn (an inline SVG), the runs in its table.
  const std::string html = mfabric::testing::slurp(out / "report.html");
  for (const char* id : mfabric::report::kCompareFigureIds) {
    const std::size_t figure = html.find("<figure id=\"" + std::string(id) + "\"");
    ASSERT_NE(figure, std::string::npos) << id;
    const std::size_t end = html.find("</figure>", figure);
    EXPECT_NE(html.substr(figure, end - figure).find("<svg"), std::string::npos) << id;
  }
  EXPECT_NE(html.find("3 runs (0 failed)"), std::string::npos);
  // Provenance: the version and command line in the CSV's first line, the JSON and the page.
  std::ifstream csv(out / "results.csv");
  std::string line;
  int lines = 0;
  std::string first_line;
  while (std::getline(csv, line)) {
    if (lines == 0) first_line = line;
    ++lines;
  }
  EXPECT_EQ(lines, 1 + 1 + 3);
  EXPECT_EQ(first_line.rfind("# mfabric ", 0), 0u) << first_line;
  EXPECT_NE(first_line.find(" (git "), std::string::npos) << first_line;
  EXPECT_NE(first_line.find("; command: mfabric compare " + file), std::string::npos) << first_line;
  EXPECT_NE(html.find("<p class=\"provenance\">Made by mfabric "), std::string::npos);
  const nlohmann::json results =
      nlohmann::json::parse(mfabric::testing::slurp(out / "results.json"));
  EXPECT_EQ(results["provenance"]["command"].get<std::string>().rfind("mfabric compare " + file, 0),
            0u);
  EXPECT_EQ(results["description"], "the job of " + file +
                                        ", with --fabrics "
                                        "fat-tree,fat-tree-3to1,mfabric");
  // What ran: the experiment's cluster and job (kSmall).
  EXPECT_EQ(results["cluster"]["servers"], 8);
  EXPECT_EQ(results["cluster"]["gpu"], "h800");
  EXPECT_EQ(results["models"][0]["model"], "mixtral-8x7b");
  EXPECT_EQ(results["models"][0]["tp"], 4);
  EXPECT_EQ(results["models"][0]["pp"], 2);
  EXPECT_EQ(results["models"][0]["ep"], 8);
  EXPECT_EQ(results["models"][0]["seq"], 256);
  // results.json has no wall times: the same comparison gives the same file.
  std::ifstream json(out / "results.json");
  std::stringstream first;
  first << json.rdbuf();
  EXPECT_EQ(first.str().find("wall_time_s"), std::string::npos);
  ASSERT_EQ(run("compare " + file +
                " --fabrics fat-tree,fat-tree-3to1,mfabric --spread none --baselines as-given "
                "--jobs 1 --out " +
                out.string())
                .exit_code,
            0);
  std::ifstream again(out / "results.json");
  std::stringstream second;
  second << again.rdbuf();
  EXPECT_EQ(mfabric::testing::without_provenance(first.str()),
            mfabric::testing::without_provenance(second.str()));
}

// Without gnuplot (an empty PATH) report.html cannot be drawn: one line before any run, and the
// previous set is left as it was.
TEST_F(CompareCli, WithoutGnuplotNothingIsWritten) {
  const std::string file = write("small.yaml", kSmall);
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "results.json") << "previous\n";
  const fs::path empty = dir_ / "empty-path";
  fs::create_directories(empty);
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", empty.c_str(), 1);
  const Outcome o =
      run("compare " + file + " --fabrics fat-tree --spread none --baselines as-given --out " +
          out.string());
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err,
            "mfabric: error: report.html: gnuplot not found: install gnuplot "
            "(scripts/install-deps.sh)\n");
  EXPECT_EQ(mfabric::testing::slurp(out / "results.json"), "previous\n");
  EXPECT_FALSE(fs::exists(out / "report.html"));
}

TEST_F(CompareCli, BadChoicesAreOneLine) {
  const std::string file = write("small.yaml", kSmall);
  expect_error("compare --models gpt-5", "--models: no paper setup for model 'gpt-5'");
  expect_error("compare " + file + " --links 300G", "--links: no prices for link speed 300G");
  expect_error("compare " + file + " --links 400", "--links");
  expect_error("compare " + file + " --fabrics torus", "--fabrics: unknown fabric 'torus'");
  expect_error("compare " + file + " --fabrics fat-tree,,mfabric", "--fabrics");
  expect_error("compare --servers 8", "--models: mixtral-8x22b");
  expect_error("compare " + file + " --jobs -1", "--jobs");
  const std::string micro =
      write("micro.yaml", "workload: {collective: all-reduce, bytes: 1MiB}\n");
  expect_error("compare " + micro, "compare needs a training job");
  expect_error("compare --models mixtral-8x7 --links 400G",
               "--models: no paper setup for model 'mixtral-8x7'; did you mean 'mixtral-8x7b'?");
  expect_error("compare " + file + " --gpu h900", "--gpu: unknown GPU 'h900'");
  expect_error("compare " + file + " --baselines best", "--baselines: unknown baselines 'best'");
}

// --gpu sets the cluster's GPU and its measured calibration, with or without an experiment
// file; every output names both; the model's other name (deepseek-v3 for deepseek-r1's setup)
// works and is the name every output prints.
TEST_F(CompareCli, GpuSetsTheClustersGpuAndItsCalibration) {
  const std::string file = write("small.yaml", kSmall);
  Outcome o = run("compare " + file + " --gpu h200 --fabrics fat-tree+direct --json -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["cluster"]["gpu"], "h200");
  EXPECT_EQ(j["calibration"], "h200-measured");
  o = run("compare " + file + " --gpu H100 --fabrics fat-tree+direct -q");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("h100 GPUs, calibration h100-measured"), std::string::npos) << o.out;
}

// Every option is checked before any run: a backend that does not exist is one line naming
// --backend (it was each run's error, blamed on the experiment file, after every run), and the
// previous output set is left as it was.
TEST_F(CompareCli, ABadBackendIsOneLineBeforeAnyRun) {
  const std::string file = write("small.yaml", kSmall);
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "results.json") << "previous\n";
  expect_error("compare " + file + " --fabrics fat-tree --backend quantum --out " + out.string(),
               "mfabric: error: --backend: unknown backend 'quantum' (known: flow, packet)");
  EXPECT_EQ(mfabric::testing::slurp(out / "results.json"), "previous\n");
  EXPECT_FALSE(fs::exists(out / "report.html"));
}

// An output directory is replaced only by a comparison with results: when every run fails
// (here each job is above the experiment's memory limit, found when it runs; the topology of
// 8 servers fits it), the previous set stays.
TEST_F(CompareCli, EveryRunFailedLeavesTheOutputAsItWas) {
  const std::string file =
      write("tiny.yaml", std::string(kSmall) + "simulation: {max_memory: 1MiB}\n");
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "results.json") << "previous\n";
  const Outcome o =
      run("compare " + file +
          " --fabrics fat-tree,mfabric --spread none --baselines as-given --quiet --out " +
          out.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err.rfind("mfabric: error: every run failed (nothing was written to " + out.string() +
                            "); the first: ",
                        0),
            0u)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(mfabric::testing::slurp(out / "results.json"), "previous\n");
  EXPECT_FALSE(fs::exists(out / "report.html"));
}

// A --jobs far above the machine runs on the machine's threads, with a note.
TEST_F(CompareCli, JobsAboveTheMachineAreCappedWithANote) {
  const std::string file = write("small.yaml", kSmall);
  const Outcome o =
      run("compare " + file +
          " --fabrics fat-tree --jobs 100000 --quiet --spread none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("mfabric: note: --jobs 100000 is more than this machine's ", 0), 0u)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

// --backend replaces the file's backend; the packet settings of a file written for the packet
// backend are then not used, which a note says (they were checked for a backend that no longer
// runs them). Moving a flow file to the packet backend, or naming the file's own backend, says
// nothing.
TEST_F(CompareCli, AnotherBackendThanTheFilesSaysItsPacketSettingsAreNotUsed) {
  const std::string packet =
      write("packet.yaml", std::string(kSmall) +
                               "simulation: {backend: packet, transport: roce-dcqcn, mtu: 4KiB}\n");
  Outcome o = run("compare " + packet +
                  " --fabrics fat-tree --backend flow -q --spread none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "mfabric: note: --backend flow: the packet settings of " + packet +
                       " (simulation.transport and the rest) are not used\n");
  const std::string flow = write("flow.yaml", kSmall);
  o = run("compare " + flow +
          " --fabrics fat-tree --backend flow -q --spread none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
}

// A comparison stopped (SIGTERM, as Ctrl-C's SIGINT) after some runs keeps them in its journal;
// the rerun runs only the others and writes the same results, byte for byte, as a comparison
// that was never stopped.
TEST_F(CompareCli, AStoppedComparisonResumesToTheSameResults) {
  const std::string file = write("small.yaml", kSmall);
  const std::string args = "compare " + file + " --links 400G --jobs 1 -q --out ";
  const fs::path whole = dir_ / "whole";
  ASSERT_EQ(run(args + whole.string()).exit_code, 0);
  // The fat-tree and rail-optimized with each of their 3 all-to-alls (the strongest baseline),
  // mFabric once: 7 runs; then the fat-tree's kept one and mFabric's at 2 more seeds and 2 more
  // skews (the spread): 8 more.
  ASSERT_EQ(mfabric::testing::lines_of(mfabric::testing::slurp(whole / "points.jsonl")).size(),
            15u);

  const fs::path stopped = dir_ / "stopped";
  const std::string journal = (stopped / "points.jsonl").string();
  const fs::path stderr_file = dir_ / "stopped.err";
  const std::string script = "( " + std::string(MFABRIC_BINARY) + " " + args + stopped.string() +
                             " >/dev/null 2>" + stderr_file.string() + " & pid=$!; while [ ! -s " +
                             journal +
                             " ]; do sleep 0.01; done; kill -TERM $pid; wait $pid; exit $? )";
  const int status = std::system(("bash -c '" + script + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << "the comparison finished before it was stopped";
  const std::size_t kept = mfabric::testing::lines_of(mfabric::testing::slurp(journal)).size();
  ASSERT_GE(kept, 1u);
  ASSERT_LT(kept, 15u);
  // It said how far it got and how to go on (the count is of runs that finished: the last may
  // be kept a moment before it is counted).
  const std::string said = mfabric::testing::slurp(stderr_file);
  bool counted = false;
  for (const std::size_t n : {kept, kept - 1}) {
    counted |= said.find(fmt::format("mfabric: stopped after {} of 15 runs; {} keeps the ones "
                                     "that finished, and the same command runs only the others\n",
                                     n, journal)) != std::string::npos;
  }
  EXPECT_TRUE(counted) << said;
  EXPECT_FALSE(fs::exists(stopped / "results.json"));

  const Outcome o = run("compare " + file + " --links 400G --out " + stopped.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find(fmt::format("compare: 15 runs (of them 6 the electrical baselines tried "
                                   "with each all-to-all; 8 the verdicts' runs at other seeds "
                                   "and skews), {} already in {}; {} to run",
                                   kept, journal, 15 - kept)),
            std::string::npos)
      << o.err;
  // The same results; the command lines (one with -q) differ only in the provenance.
  EXPECT_EQ(mfabric::testing::without_provenance(mfabric::testing::slurp(stopped / "results.json")),
            mfabric::testing::without_provenance(mfabric::testing::slurp(whole / "results.json")));
  for (const char* name : {"results.csv", "report.html"}) {
    EXPECT_EQ(mfabric::testing::without_provenance_line(mfabric::testing::slurp(stopped / name)),
              mfabric::testing::without_provenance_line(mfabric::testing::slurp(whole / name)))
        << name;
  }
  EXPECT_EQ(mfabric::testing::lines_of(mfabric::testing::slurp(journal)).size(), 15u);
}

// Stopped without --out, it says that nothing was kept and how to keep the runs next time.
TEST_F(CompareCli, AStoppedComparisonWithoutOutSaysNothingWasKept) {
  const std::string file = write("small.yaml", kSmall);
  const fs::path err = dir_ / "stopped.err";
  const std::string script = "( " + std::string(MFABRIC_BINARY) + " compare " + file +
                             " --links 400G --jobs 1 >/dev/null 2>" + err.string() +
                             " & pid=$!; while [ ! -s " + err.string() +
                             " ]; do sleep 0.01; done; kill -TERM $pid; wait $pid; exit $? )";
  const int status = std::system(("bash -c '" + script + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << "the comparison finished before it was stopped";
  const std::string said = mfabric::testing::slurp(err);
  EXPECT_NE(said.find(" of 15 runs; nothing was kept (with --out DIR a comparison keeps each as "
                      "it finishes, and the same command resumes it)\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("mfabric: stopped after "), std::string::npos) << said;
}

// Progress reaches stderr when it is not a terminal (a CI log): the opening line with the runs
// and an estimate, and a last line when they are done; --quiet shows neither.
TEST_F(CompareCli, ProgressIsShownWhenStderrIsAPipe) {
  const std::string file = write("small.yaml", kSmall);
  Outcome o = run("compare " + file + " --fabrics fat-tree,mfabric --jobs 1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // The fat-tree runs with each of its 3 all-to-alls (the strongest baseline), mFabric once,
  // and both again at 2 more seeds and 2 more skews (the spread).
  EXPECT_EQ(o.err.rfind("compare: 12 runs (of them 3 the electrical baselines tried with each "
                        "all-to-all; 8 the verdicts' runs at other seeds and skews); running on 1 "
                        "thread, roughly ",
                        0),
            0u)
      << o.err;
  EXPECT_NE(o.err.find("\ncompare: 12/12 runs, "), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\r'), std::string::npos) << o.err;
  o = run("compare " + file +
          " --fabrics fat-tree,mfabric --quiet --spread none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
}

// A model the cluster cannot hold is left out with a note; the others run. Only when no model
// fits is it an error.
TEST_F(CompareCli, AModelThatDoesNotFitIsSkippedWithANote) {
  Outcome o =
      run("compare --models mixtral-8x7b,deepseek-r1 --servers 16 --links 400G --fabrics "
          "fat-tree -q --spread none --baselines as-given");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("mfabric: note: skipped deepseek-r1 (TP 1 x PP 16 x EP 64) on 128 GPUs "
                        "(16 servers): ",
                        0),
            0u)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_NE(o.out.find("mixtral-8x7b"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("deepseek-r1  400G"), std::string::npos) << o.out;
  expect_error("compare --models deepseek-r1 --servers 16 --links 400G --fabrics fat-tree",
               "--models: deepseek-r1 (TP 1 x PP 16 x EP 64) on 128 GPUs (16 servers)");
}

// The files written are named as typed, without a doubled slash ("out//results.json").
TEST_F(CompareCli, TheWrittenFilesAreNamedWithoutADoubledSlash) {
  const std::string file = write("small.yaml", kSmall);
  const std::string out = (dir_ / "out").string();
  const Outcome o =
      run("compare " + file + " --fabrics fat-tree -q --spread none --baselines as-given -o " +
          out + "//");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("wrote " + out + "/results.json, " + out + "/results.csv"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("//"), std::string::npos) << o.out;
}

}  // namespace
