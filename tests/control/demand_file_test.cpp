#include "control/demand_file.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace mfabric::control {
namespace {

// The error's text for `json` as a demand file named "d.json" ("" when it parses).
std::string error_of(const std::string& json) {
  try {
    parse_demand_json(json, "d.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DemandFile, ServerBytes) {
  const ServerDemand d = parse_demand_json(R"({"demand_bytes": [[0, 5, 1e3], [2, 0, 0],
                                               [0, 0, 0]]})",
                                           "d.json");
  EXPECT_EQ(d.servers(), 3);
  EXPECT_EQ(d.at(0, 1), 7);
  EXPECT_EQ(d.at(2, 0), 1000);
}

TEST(DemandFile, Tokens) {
  const ServerDemand d = parse_demand_json(
      R"({"tokens": [[0, 4], [0, 0]], "ep_ranks_per_server": 1, "experts_per_rank": 1,
          "bytes_per_token": 3})",
      "d.json");
  EXPECT_EQ(d.servers(), 2);
  EXPECT_EQ(d.at(0, 1), 12);
}

TEST(DemandFile, ErrorsNameFileAndField) {
  EXPECT_EQ(error_of(R"({"demand_bytes": [[0, 1e999], [0, 0]]})"),
            "d.json: demand_bytes[0][1]: number 1e999 at line 1, column 23 is out of range; every "
            "number in a demand file is a non-negative count or byte size");
  EXPECT_EQ(error_of(R"({"demand_bytes": [[0, 0.5], [0, 0]]})"),
            "d.json: demand_bytes[0][1]: expected a non-negative whole number of bytes, got 0.5");
  EXPECT_EQ(error_of(R"({"demand_bytes": [[0, 1], [1, 0]], "bytes_per_token": 2})"),
            "d.json: bytes_per_token: only goes with \"tokens\"");
  EXPECT_EQ(error_of(R"({"demand_bytes": [], "tokens": []})"),
            "d.json: expected exactly one of \"demand_bytes\" and \"tokens\"");
  EXPECT_NE(error_of("{").find("d.json: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"demand_bytes": [[0, 1]]})").find("square"), std::string::npos);
  EXPECT_NE(error_of(R"({"demand_bytes": []})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"tokens": [[1]], "ep_ranks_per_server": 1, "experts_per_rank": 1,
                         "bytes_per_token": -2})")
                .find("d.json: bytes_per_token: expected a whole number of bytes per token from 1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tokens": [[1]], "ep_ranks_per_server": 1, "experts_per_rank": 1,
                         "bytes_per_token": 2, "extra": 1})")
                .find("d.json: extra: unknown key"),
            std::string::npos);
}

}  // namespace
}  // namespace mfabric::control
