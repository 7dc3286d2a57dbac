// mfabric sweep: the table, the output set with its report, resuming, and one clear line for bad
// input. The same sweep under mpirun is tests/study/mpirun_sweep_test.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

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
  const std::string csv = slurp(fs::path(out) / "results.csv");
  std::set<std::string> columns;
  std::stringstream header(csv.substr(0, csv.find('\n')));
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
  EXPECT_EQ(slurp(fs::path(out) / "results.json"), first);
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

}  // namespace
