#include "core/json_input.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mfabric {
namespace {

std::string error_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_json_input(text, "f.json", "numbers are small", limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, ParsesValidJson) {
  EXPECT_EQ(parse_json_input(R"({"a": [1, 2]})", "f.json", "")->at("a").at(1), 2);
}

TEST(JsonInput, SyntaxErrorsNameTheFileAndPosition) {
  const std::string e = error_of("{\"a\": [1, 2,]}");
  EXPECT_EQ(e.rfind("f.json: invalid JSON: parse error at line 1, column 13", 0), 0u) << e;
}

TEST(JsonInput, AnOutOfRangeNumberNamesItsPathLineAndColumn) {
  // "1e999" starts at line 2, column 13 (after 12 characters of the second line).
  EXPECT_EQ(error_of("{\"a\": {\"b\": [0,\n  [1, 2, 3, 1e999]]}}"),
            "f.json: a.b[1][3]: number 1e999 at line 2, column 13 is out of range; numbers are "
            "small");
}

std::string nested(const std::string& open, const std::string& close, int levels) {
  std::string text;
  for (int i = 0; i < levels; ++i)
    text += open;
  for (int i = 0; i < levels; ++i)
    text += close;
  return text;
}

TEST(JsonInput, DeepNestingIsRefusedWithThePath) {
  // 100,000 levels used to reach recursive code (a dump in an error message, a recursive walk)
  // and overflow the stack.
  const std::string e = error_of("{\"demand_bytes\": " + nested("[", "]", 100000) + "}");
  EXPECT_EQ(e.rfind("f.json: demand_bytes[0][0]", 0), 0u) << e;
  EXPECT_NE(e.find("levels)"), std::string::npos) << e;
  EXPECT_NE(e.find("nested more than 256 levels deep"), std::string::npos) << e;
  EXPECT_LT(e.size(), 400u);
  // Objects too, and the limit is exact: 256 levels parse, 257 do not.
  EXPECT_NE(error_of(nested("{\"a\":", "}", 300)).find("nested more than"), std::string::npos);
  EXPECT_NO_THROW(parse_json_input(nested("[", "]", 256), "f.json", ""));
  EXPECT_NE(error_of(nested("[", "]", 257)).find("nested more than"), std::string::npos);
}

TEST(JsonInput, RepeatedKeysAreRefused) {
  EXPECT_EQ(error_of(R"({"a": {"b": 1, "b": 2}})"),
            "f.json: a.b: this key appears twice in one object; JSON keys must be unique (a "
            "reader would keep only one of the values)");
  // The same key in two objects is fine.
  EXPECT_NO_THROW(parse_json_input(R"([{"b": 1}, {"b": 2}])", "f.json", ""));
}

TEST(JsonInput, ADocumentOverTheMemoryLimitIsRefusedAsItIsRead) {
  // 100,000 numbers take 1.6 MB as a DOM: over a 1 MiB limit, under a 4 MiB one.
  std::string text = "{\"row\": [0";
  for (int i = 1; i < 100000; ++i)
    text += ",0";
  text += "]}";
  const std::string e = error_of(text, {kMaxJsonDepth, std::int64_t{1} << 20});
  EXPECT_EQ(e.rfind("f.json: row[", 0), 0u) << e;
  EXPECT_NE(e.find("]: the parsed document would take more than the 1MiB of memory allowed for "
                   "one JSON input ("),
            std::string::npos)
      << e;
  EXPECT_NO_THROW(parse_json_input(text, "f.json", "", {kMaxJsonDepth, std::int64_t{4} << 20}));
}

TEST(JsonInput, TheDefaultLimitsAreDocumented) {
  // docs/reliability.md states these.
  EXPECT_EQ(kMaxJsonDepth, 256);
  EXPECT_EQ(kMaxJsonMemory, std::int64_t{2} << 30);
}

TEST(ReleaseJson, FreesFlatDeepAndMixedDocuments) {
  nlohmann::json flat = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i)
    flat.push_back(i);
  release_json(flat);
  EXPECT_TRUE(flat.is_null());

  // Deeper than the fixed path (64), with leaves at every level.
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* at = &deep;
  for (int i = 0; i < 200; ++i) {
    at->push_back(i);
    at->push_back({{"k", "a string longer than fifteen bytes"}, {"e", nlohmann::json::array()}});
    at->push_back(nlohmann::json::array());
    at = &at->back();
  }
  release_json(deep);
  EXPECT_TRUE(deep.is_null());

  nlohmann::json scalar = 3;
  release_json(scalar);
  EXPECT_TRUE(scalar.is_null());
}

TEST(JsonDocument, HoldsTheParsedValue) {
  const JsonDocument doc = parse_json_input(R"({"a": [1, {"b": "c"}]})", "f.json", "");
  EXPECT_EQ(doc->at("a").at(1).at("b"), "c");
  EXPECT_EQ((*doc)["a"].size(), 2u);
}

}  // namespace
}  // namespace mfabric
