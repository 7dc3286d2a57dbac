#include "core/json_input.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mfabric {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_input(text, "f.json", "numbers are small");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, ParsesValidJson) {
  EXPECT_EQ(parse_json_input(R"({"a": [1, 2]})", "f.json", "").at("a").at(1), 2);
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

}  // namespace
}  // namespace mfabric
