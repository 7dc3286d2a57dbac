// mfabric sweep: the table, the output set with its report, resuming, and one clear line for bad
// input. The same sweep under mpirun is tests/study/mpirun_sweep_test.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_harness.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using mfabric::testing::expect_error;
using mfabric::testing::Outcome;
using mfabric::testing::run;
using mfabric::testing::slurp;

const std::string kSweep =
    std::string(MFABRIC_TEST_DATA_DIR) + "/../../study/data/small-sweep.yaml";

class SweepCli : public mfabric::testing::ScratchDirTest {
 protected:
  SweepCli() : ScratchDirTest("mfabric_sweep_cli") {}
};

// Two points on 2 servers: the whole sweep, report included, takes a fraction of a second.
constexpr const char* kQuickSweep =
    "name: quick\n"
    "experiment:\n"
    "  cluster: {servers: 2, link: 400G}\n"
    "  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 4, global_batch: 8}\n"
    "grid:\n"
    "  cluster.link: [100G, 400G]\n";

// Every point fails when it runs: 1 server of 8 GPUs for a job of TP 4 x EP 8.
constexpr const char* kFailingSweep =
    "experiment:\n"
    "  cluster: {servers: 1, link: 400G}\n"
    "  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8, global_batch: 8}\n"
    "grid:\n"
    "  seed: [1, 2]\n";

// Every file of a directory, by name.
std::map<std::string, std::string> contents_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    out[entry.path().filename().string()] = slurp(entry.path());
  return out;
}

using mfabric::testing::lines_of;

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines)
    out += line + "\n";
  return out;
}

TEST_F(SweepCli, WritesTheSetAndResumes) {
  const std::string out = (dir_ / "out").string();
  const Outcome o = run("sweep " + kSweep + " --out " + out + " --jobs 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("sweep small: 7 points (0 failed, 0 resumed)"), std::string::npos) << o.out;
  for (const char* f : {"results.json", "results.csv", "report.html", "points.jsonl"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  const nlohmann::json j = nlohmann::json::parse(slurp(fs::path(out) / "results.json"));
  EXPECT_EQ(j["schema_version"], "mfabric.sweep/1");
  ASSERT_EQ(j["points"].size(), 7u);
  EXPECT_EQ(j["points"][0]["fields"]["fabric.reconfiguration"], "10us");
  EXPECT_FALSE(j["points"][0].contains("wall_time_s"));  // results.json is byte-stable
  // A longer reconfiguration delay never makes an iteration shorter (same link).
  EXPECT_LE(j["points"][1]["iteration_time_s"].get<double>(),
            j["points"][3]["iteration_time_s"].get<double>());
  EXPECT_LE(j["points"][3]["iteration_time_s"].get<double>(),
            j["points"][5]["iteration_time_s"].get<double>());
  // One column per name: the swept `fabric` is `fields.fabric`, next to the figure `fabric`.
  // The first line is the provenance comment, the second the header.
  const std::string csv = slurp(fs::path(out) / "results.csv");
  ASSERT_EQ(csv.rfind("# mfabric ", 0), 0u) << csv;
  EXPECT_NE(csv.find("; command: mfabric sweep "), std::string::npos) << csv;
  const std::size_t header_start = csv.find('\n') + 1;
  std::set<std::string> columns;
  std::stringstream header(csv.substr(header_start, csv.find('\n', header_start) - header_start));
  for (std::string name; std::getline(header, name, ',');)
    EXPECT_TRUE(columns.insert(name).second) << "column " << name << " twice in " << csv;
  EXPECT_TRUE(columns.count("fields.fabric") == 1 && columns.count("fabric") == 1 &&
              columns.count("fabric.reconfiguration") == 1)
      << csv;
  const std::string html = slurp(fs::path(out) / "report.html");
  for (const char* id : {"plot-iteration-time", "plot-tokens", "plot-perf-per-dollar"}) {
    const std::size_t at = html.find(std::string("<figure id=\"") + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_LT(html.find("<svg", at), html.find("</figure>", at)) << id;
  }
  const std::string first = slurp(fs::path(out) / "results.json");
  const Outcome again = run("sweep " + kSweep + " --out " + out);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(0 failed, 7 resumed)"), std::string::npos) << again.out;
  EXPECT_EQ(mfabric::testing::without_provenance(slurp(fs::path(out) / "results.json")),
            mfabric::testing::without_provenance(first));
}

TEST_F(SweepCli, BadInputIsOneLine) {
  expect_error("sweep " + write("s.yaml", "experiment: {}\ngrid: {seed: []}\n"),
               "grid.seed: expected a non-empty list");
  expect_error("sweep " + write("t.yaml",
                                "experiment: {workload: {model: mixtral-8x7b}}\n"
                                "grid: {cluster.servrs: [2]}\n"),
               "point 0 (cluster.servrs=2)");
  expect_error("sweep " + kSweep + " --jobs -1", "--jobs: must be 0 or more");
  expect_error("sweep " + (dir_ / "none.yaml").string(), "none.yaml");
  // --out on a file: refused before any point runs.
  expect_error("sweep " + kSweep + " --out " + write("file", "x"), "file");
}

// A --jobs far above the machine (100,000 threads would exhaust memory, and crashed with
// "terminate called without an active exception") runs on the machine's threads, with a note.
TEST_F(SweepCli, JobsAboveTheMachineAreCappedWithANote) {
  const Outcome o = run("sweep " + write("q.yaml", kQuickSweep) + " --jobs 100000 --quiet");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("mfabric: note: --jobs 100000 is more than this machine's ", 0), 0u)
      << o.err;
  EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.out.find("sweep quick: 2 points (0 failed, 0 resumed)"), std::string::npos);
}

// An output directory is replaced only by a sweep with results: when every point fails, the
// previous set stays byte for byte, and a new directory is not created.
TEST_F(SweepCli, EveryPointFailedLeavesTheOutputAsItWas) {
  const fs::path out = dir_ / "out";
  ASSERT_EQ(run("sweep " + write("q.yaml", kQuickSweep) + " --out " + out.string()).exit_code, 0);
  const auto before = contents_of(out);
  ASSERT_EQ(before.size(), 4u);
  const std::string failing = write("f.yaml", kFailingSweep);
  const Outcome o = run("sweep " + failing + " -q --out " + out.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err.rfind("mfabric: error: every point failed (nothing was written to " +
                            out.string() + "); the first: ",
                        0),
            0u)
      << o.err;
  EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
  EXPECT_EQ(contents_of(out), before);
  EXPECT_EQ(run("sweep " + failing + " --out " + (dir_ / "new").string()).exit_code, 1);
  EXPECT_FALSE(fs::exists(dir_ / "new"));
}

// The journal is input when resuming: a bad record is one line naming the journal, its line
// and its member, before anything runs, and the directory is left as it was.
TEST_F(SweepCli, ABadJournalRecordIsOneLineBeforeAnyRun) {
  const fs::path out = dir_ / "out";
  const std::string sweep = write("q.yaml", kQuickSweep);
  ASSERT_EQ(run("sweep " + sweep + " --out " + out.string()).exit_code, 0);
  const std::vector<std::string> good = lines_of(slurp(out / "points.jsonl"));
  ASSERT_EQ(good.size(), 2u);
  const auto with = [&](const char* member, const nlohmann::json& value) {
    nlohmann::json record = nlohmann::json::parse(good[1]);
    record[member] = value;
    std::ofstream(out / "points.jsonl", std::ios::binary) << good[0] + "\n" + record.dump() + "\n";
    return contents_of(out);
  };
  const std::string journal = (out / "points.jsonl").string();
  for (const auto& [member, value, expected] :
       std::vector<std::tuple<const char*, nlohmann::json, std::string>>{
           {"gpus", 1e30, "line 2: gpus: expected a whole number from 0 to 2147483647, got 1e+30"},
           {"iteration_time_s", -1.5, "line 2: iteration_time_s: expected a time in seconds"},
           {"tokens_per_s", 5e-324, "line 2: tokens_per_s: expected 0 or a number"}}) {
    const auto before = with(member, value);
    expect_error("sweep " + sweep + " --out " + out.string(), journal + ": " + expected);
    EXPECT_EQ(contents_of(out), before) << member;
  }
}

// Records at the edges of what the journal accepts (the shortest time, tokens/s and costs from
// 1e-30 to 1e30) still give a report: gnuplot never sees a value it cannot plot.
TEST_F(SweepCli, RecordsAtTheLimitsStillDrawTheReport) {
  const fs::path out = dir_ / "out";
  const std::string sweep = write("q.yaml", kQuickSweep);
  ASSERT_EQ(run("sweep " + sweep + " --out " + out.string()).exit_code, 0);
  std::vector<std::string> lines = lines_of(slurp(out / "points.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json record = nlohmann::json::parse(lines[i]);
    record["iteration_time_s"] = 1e-12;
    record["tokens_per_s"] = i == 0 ? 1e-30 : 1e30;
    for (auto& [name, cost] : record["cost_paper_usd_by_component"].items())
      cost = i == 0 ? 1e30 : 1e-30;
    lines[i] = record.dump();
  }
  std::ofstream(out / "points.jsonl", std::ios::binary) << joined(lines);
  const Outcome o = run("sweep " + sweep + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("(0 failed, 2 resumed)"), std::string::npos) << o.out;
  const std::string html = slurp(out / "report.html");
  for (const char* id : {"plot-iteration-time", "plot-tokens", "plot-perf-per-dollar"}) {
    const std::size_t at = html.find(std::string("<figure id=\"") + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_LT(html.find("<svg", at), html.find("</figure>", at)) << id;
  }
  // The journal written with them (its totals and ratios beyond 1e30) is read back.
  const Outcome again = run("sweep " + sweep + " --out " + out.string());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(0 failed, 2 resumed)"), std::string::npos) << again.out;
}

// A sweep killed while writing a record leaves a last line without its newline: it is dropped
// with a note (its point runs again), cut off the journal, and the results are those of a sweep
// that was never stopped.
TEST_F(SweepCli, ATornJournalLineIsDroppedWithANote) {
  const fs::path out = dir_ / "out";
  const std::string sweep = write("q.yaml", kQuickSweep);
  ASSERT_EQ(run("sweep " + sweep + " --out " + out.string()).exit_code, 0);
  const std::string results = slurp(out / "results.json");
  const std::vector<std::string> lines = lines_of(slurp(out / "points.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  std::ofstream(out / "points.jsonl", std::ios::binary)
      << lines[0] + "\n" + lines[1].substr(0, lines[1].size() / 2);
  const Outcome o = run("sweep " + sweep + " -q --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "mfabric: note: " + (out / "points.jsonl").string() +
                       ": line 2 was cut short (the sweep was stopped while writing it): dropped, "
                       "its point runs again\n");
  EXPECT_NE(o.out.find("(0 failed, 1 resumed)"), std::string::npos) << o.out;
  EXPECT_EQ(mfabric::testing::without_provenance(slurp(out / "results.json")),
            mfabric::testing::without_provenance(results));
  EXPECT_EQ(lines_of(slurp(out / "points.jsonl")).size(), 2u);
}

// Text from the sweep file reaches the terminal without its control characters.
TEST_F(SweepCli, ControlCharactersInTheSweepFileNeverReachTheTerminal) {
  const std::string sweep =
      write("c.yaml", std::string("name: \"red\\e[31mtext\\a\\nmore\"\n") + (kQuickSweep + 12));
  const Outcome o = run("sweep " + sweep);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\a'), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("sweep red\\x1B[31mtext\\x07\\nmore: 2 points"), std::string::npos) << o.out;
}

// One cost answer: the sweep's cost and perf/$ figures count the paper's formulas unless
// --convention built says otherwise, and the output names the convention.
TEST_F(SweepCli, TheCostConventionIsNamedAndAFlagAway) {
  const std::string sweep = write("q.yaml", kQuickSweep);
  const Outcome paper = run("sweep " + sweep + " --json -q");
  const Outcome built = run("sweep " + sweep + " --json -q --convention built");
  ASSERT_EQ(paper.exit_code, 0) << paper.err;
  ASSERT_EQ(built.exit_code, 0) << built.err;
  EXPECT_EQ(nlohmann::json::parse(paper.out)["cost_convention"], "paper");
  EXPECT_EQ(nlohmann::json::parse(built.out)["cost_convention"], "built");
  const Outcome text = run("sweep " + sweep + " -q --convention built");
  EXPECT_NE(text.out.find("network (built topology)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("perf/$ (tokens/s per $M)"), std::string::npos) << text.out;
  EXPECT_NE(run("sweep " + sweep + " -q").out.find("network (paper formulas)"), std::string::npos);
  // perf/$ under built = tokens/s / built cost x 1e6, from the record's own figures.
  const fs::path out = dir_ / "built";
  ASSERT_EQ(run("sweep " + sweep + " -q --convention built -o " + out.string()).exit_code, 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(out / "results.json"));
  const double tokens = j["points"][0]["tokens_per_s"].get<double>();
  const double cost = j["points"][0]["cost_usd"]["built"].get<double>();
  const std::vector<std::string> csv = lines_of(slurp(out / "results.csv"));
  ASSERT_GE(csv.size(), 3u);
  std::vector<std::string> header, row;
  for (auto [line, cells] : {std::pair{csv[1], &header}, std::pair{csv[2], &row}}) {
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');)
      cells->push_back(cell);
  }
  const auto column = std::find(header.begin(), header.end(), "tokens_per_s_per_musd");
  ASSERT_NE(column, header.end());
  EXPECT_NEAR(std::stod(row[static_cast<std::size_t>(column - header.begin())]),
              tokens / cost * 1e6, 1e-6 * tokens / cost * 1e6);
  // The per-GPU figures: in both files, and tokens/s per GPU is tokens/s over the GPUs.
  const nlohmann::json& point = j["points"][0];
  EXPECT_DOUBLE_EQ(point["tokens_per_s_per_gpu"].get<double>(),
                   tokens / point["gpus"].get<double>());
  EXPECT_GT(point["mfu"].get<double>(), 0);
  // How skewed its routing was: the synthetic default puts the busiest expert above the mean.
  EXPECT_GT(point["busiest_expert_over_mean"].get<double>(), 1.0);
  const auto mfu = std::find(header.begin(), header.end(), "mfu");
  ASSERT_NE(mfu, header.end());
  EXPECT_EQ(std::stod(row[static_cast<std::size_t>(mfu - header.begin())]),
            point["mfu"].get<double>());
  expect_error("sweep " + sweep + " --convention calculator", "--convention");
}

// A sweep says what it starts (its points, those resumed, threads and a rough estimate) and
// its progress on stderr, also when stderr is not a terminal.
TEST_F(SweepCli, OpensWithItsPointsAndShowsProgressOnAPipe) {
  const std::string sweep = write("q.yaml", kQuickSweep);
  const fs::path out = dir_ / "out";
  Outcome o = run("sweep " + sweep + " -j 1 -o " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("sweep: 2 points; 2 to run on 1 thread, roughly ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("\nsweep: 2/2 points, "), std::string::npos) << o.err;
  o = run("sweep " + sweep + " -o " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "sweep: 2 points, 2 already in " + (out / "points.jsonl").string() + "\n");
}

}  // namespace
