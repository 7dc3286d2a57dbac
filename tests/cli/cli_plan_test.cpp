// mfabric plan: circuits, NICs and TL1 commands for one region's demand, and one clear line for
// every bad input.
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
using mfabric::testing::expect_error;
using mfabric::testing::Outcome;
using mfabric::testing::run;

class PlanCli : public mfabric::testing::ScratchDirTest {
 protected:
  PlanCli() : ScratchDirTest("mfabric_plan_cli") {}
};

// Four servers, alpha 1: by hand, the heaviest pair (0, 1) and then (2, 3) (a perfect matching);
// (0, 2) and (1, 3) find their ends full.
constexpr const char* kFourServers =
    R"({"demand_bytes": [[0, 100, 80, 0], [0, 0, 0, 70], [0, 0, 0, 90], [0, 0, 0, 0]]})";

TEST_F(PlanCli, JsonPlanOfFourServers) {
  const std::string file = write("d.json", kFourServers);
  const Outcome o = run("plan --demand " + file + " --alpha 1 --nics 2 --numa 1 --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["algorithm"], "greedy");
  EXPECT_EQ(j["circuits"], nlohmann::json::parse("[[0, 1, 1], [2, 3, 1]]"));
  // The single OCS NIC of each server is NIC 1 (the last of 2).
  ASSERT_EQ(j["ports"].size(), 2u);
  EXPECT_EQ(j["ports"][0],
            nlohmann::json::parse(R"({"server": 0, "nic": 1, "peer_server": 1, "peer_nic": 1})"));
  // The slowest pair: (0, 2), 80 bytes over the EPS: 1 EPS NIC of 400G shared by 3 peers.
  EXPECT_NEAR(j["max_finish"].get<double>(), 80.0 * 8 / (400e9 / 3), 1e-18);
  EXPECT_GE(j["wall_time_s"].get<double>(), 0.0);
}

TEST_F(PlanCli, TextTable) {
  const std::string file = write("d.json", kFourServers);
  const Outcome o = run("plan --demand " + file + " --alpha 1 --nics 2 --numa 1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("plan: greedy, 4 servers, alpha 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("circuits: 2, ports used 4 of 4"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("EPS"), std::string::npos) << o.out;
}

TEST_F(PlanCli, Tl1FromAnEmptyOcs) {
  const std::string file = write("d.json", kFourServers);
  // Ports: server s's OCS NIC on port s (alpha 1), numbered from 1: (0, 1) -> 1,2; (2, 3) -> 3,4.
  const Outcome o = run("plan --demand " + file + " --alpha 1 --nics 2 --numa 1 --tl1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "ENT-PATCH::1,2:1:;\nENT-PATCH::3,4:2:;\n");
}

TEST_F(PlanCli, TokensFileAndEveryAlgorithm) {
  // 2 EP ranks per server, 1 expert per rank, 4 ranks: servers 0 and 1. Rank 0 sends 3 tokens
  // to expert 2 (server 1), rank 3 sends 1 token to expert 0: (3 + 1) x 1000 bytes.
  const std::string file = write("t.json", R"({"tokens": [[5, 0, 3, 0], [0, 0, 0, 0],
      [0, 0, 0, 0], [1, 0, 0, 0]], "ep_ranks_per_server": 2, "experts_per_rank": 1,
      "bytes_per_token": 1000})");
  for (const std::string algorithm : {"greedy", "greedy-paper", "optimal", "exact"}) {
    const Outcome o = run("plan --demand " + file + " --algorithm " + algorithm + " --json");
    ASSERT_EQ(o.exit_code, 0) << algorithm << ": " << o.err;
    const nlohmann::json j = nlohmann::json::parse(o.out);
    EXPECT_EQ(j["algorithm"], algorithm);
    // One pair, alpha 6: all six circuits on it; 4000 bytes on 6 x 400G.
    EXPECT_EQ(j["circuits"], nlohmann::json::parse("[[0, 1, 6]]")) << algorithm;
    EXPECT_NEAR(j["max_finish"].get<double>(), 4000.0 * 8 / (6 * 400e9), 1e-18);
  }
}

TEST_F(PlanCli, BadInputIsOneLine) {
  const auto plan = [&](const std::string& json, const std::string& extra = "") {
    return "plan --demand " + write("bad.json", json) + " " + extra;
  };
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1]]})"), "demand_bytes[1]: ragged");
  expect_error(plan(R"({"demand_bytes": [[0, 1, 2], [1, 0, 2]]})"), "square");
  expect_error(plan(R"({"demand_bytes": [[0, -1], [1, 0]]})"), "demand_bytes[0][1]");
  expect_error(plan(R"({"demand_bytes": [[0, 1.5], [1, 0]]})"), "whole number of bytes");
  expect_error(plan(R"({"demand_bytes": [[0, 1e999], [1, 0]]})"), "demand_bytes[0][1]");
  expect_error(plan(R"({"demand_bytes": [[0, NaN], [1, 0]]})"), "invalid JSON");
  expect_error(plan(R"({"demand_bytes": [[0, "5"], [1, 0]]})"), "demand_bytes[0][1]");
  expect_error(plan(R"({"demand_bytes": [[0, 1e300], [1, 0]]})"), "from 0 to");
  expect_error(plan(R"({"demand": [[0]]})"), "demand: unknown key");
  expect_error(plan(R"({"tokens": [[1, 2]], "experts_per_rank": 1, "bytes_per_token": 2})"),
               "ep_ranks_per_server: missing");
  expect_error(plan(R"({"tokens": [[1, 2]], "ep_ranks_per_server": 1, "experts_per_rank": 1,
                        "bytes_per_token": 2})"),
               "expected 1 experts");
  expect_error(plan(R"({"tokens": [[1]], "ep_ranks_per_server": 0.5, "experts_per_rank": 1,
                        "bytes_per_token": 2})"),
               "ep_ranks_per_server");
  expect_error(plan(R"([[0, 1], [1, 0]])"), "expected a JSON object");
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1, 0]]})", "--alpha 8"), "--alpha");
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1, 0]]})", "--alpha 0"), "--alpha");
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1, 0]]})", "--numa 9"), "--numa");
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1, 0]]})", "--link 400"), "--link");
  expect_error(plan(R"({"demand_bytes": [[0, 1], [1, 0]]})", "--algorithm magic"),
               "--algorithm: unknown planner 'magic' (known: greedy, greedy-paper, optimal, "
               "exact)");
  // 17 servers are too many for the exact planner.
  std::string big = R"({"demand_bytes": [)";
  for (int r = 0; r < 17; ++r) {
    big += std::string(r ? "," : "") + "[";
    for (int c = 0; c < 17; ++c)
      big += std::string(c ? "," : "") + (r == c ? "0" : "1");
    big += "]";
  }
  big += "]}";
  expect_error(plan(big, "--algorithm exact"), "at most 16 servers");
  expect_error("plan --demand " + (dir_ / "missing.json").string(), "missing.json");
  expect_error("plan --demand " + dir_.string(), "demand file");
}

TEST_F(PlanCli, TooManyServersIsRefused) {
  // 1025 rows of one entry each: refused on the row count before anything else.
  std::string rows = R"({"demand_bytes": [)";
  for (int r = 0; r < 1025; ++r)
    rows += std::string(r ? "," : "") + "[0]";
  rows += "]}";
  expect_error("plan --demand " + write("big.json", rows), "1025 rows is more than the 1024");
}

}  // namespace
