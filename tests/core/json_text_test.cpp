// JSON serialisation for output (core/json_text.h): valid UTF-8 whatever the strings hold,
// non-finite numbers refused, and streamed documents that parse back to what was streamed.
#include "core/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/json_input.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

using nlohmann::json;

TEST(JsonText, InvalidUtf8IsReplacedNotThrown) {
  const json j = {{"experiment", "exp\xFF.yaml"}, {"name\xFE", "model \xC3"}};
  // What the plain dump does: the reason for json_text.
  EXPECT_THROW((void)j.dump(), json::type_error);
  const std::string text = json_text(j);
  EXPECT_TRUE(is_valid_utf8(text));
  const json back = json::parse(text);
  EXPECT_EQ(back.at("experiment"), "exp\xEF\xBF\xBD.yaml");
  EXPECT_EQ(back.at("name\xEF\xBF\xBD"), "model \xEF\xBF\xBD");
}

TEST(JsonText, ControlCharactersAreEscaped) {
  const std::string text = json_text(json{{"name", "a\nb\x01"}}, -1);
  EXPECT_EQ(text, "{\"name\":\"a\\nb\\u0001\"}");
}

TEST(JsonText, IndentAndCompact) {
  const json j = {{"a", 1}, {"b", {1, 2}}};
  EXPECT_EQ(json_text(j, -1), "{\"a\":1,\"b\":[1,2]}");
  EXPECT_EQ(json_text(j, 2), "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}");
}

TEST(JsonText, NonFiniteNumbersAreErrorsNamingThePath) {
  const double inf = std::numeric_limits<double>::infinity();
  try {
    (void)json_text(json{{"cost_usd", {{"total", inf}}}});
    FAIL() << "accepted infinity";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cost_usd.total");
    EXPECT_NE(e.message().find("infinite"), std::string::npos) << e.what();
  }
  try {
    (void)json_text(json{{"times", {1.0, std::nan("")}}});
    FAIL() << "accepted NaN";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "times[1]");
    EXPECT_NE(e.message().find("NaN"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)json_text(json{{"max", std::numeric_limits<double>::max()}}));
}

TEST(JsonArrayStream, CompactDocumentParsesBack) {
  std::ostringstream out;
  JsonArrayStream s(out, {{"displayTimeUnit", "ms"}}, "traceEvents", -1);
  s.add({{"name", "x\xFF"}, {"ts", 1.5}});
  s.add({{"name", "y\"z"}, {"ts", 2}});
  s.finish();
  EXPECT_EQ(out.str(),
            "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
            "{\"name\":\"x\xEF\xBF\xBD\",\"ts\":1.5},\n"
            "{\"name\":\"y\\\"z\",\"ts\":2}\n]}\n");
  const json back = json::parse(out.str());
  EXPECT_EQ(back.at("traceEvents").size(), 2u);
  EXPECT_EQ(back.at("traceEvents")[1].at("name"), "y\"z");
}

TEST(JsonArrayStream, PrettyDocumentParsesBack) {
  std::ostringstream out;
  JsonArrayStream s(out, {{"format", "f"}, {"ep", 2}}, "records", 2);
  s.add({{"k", 1}});
  s.add({{"k", 2}});
  s.finish();
  EXPECT_EQ(out.str(),
            "{\n  \"ep\": 2,\n  \"format\": \"f\",\n  \"records\": [\n    {\"k\":1},\n"
            "    {\"k\":2}\n  ]\n}\n");
  // A member's value stays on its line.
  std::ostringstream one;
  JsonArrayStream t(one, {{"layers", {1, 4}}}, "records", 2);
  t.finish();
  EXPECT_EQ(one.str(), "{\n  \"layers\": [1,4],\n  \"records\": []\n}\n");
  EXPECT_EQ(json::parse(out.str()).at("records")[1].at("k"), 2);
}

TEST(JsonArrayStream, EmptyHeadAndEmptyArray) {
  for (int indent : {-1, 2}) {
    std::ostringstream out;
    JsonArrayStream s(out, json::object(), "items", indent);
    s.finish();
    EXPECT_EQ(json::parse(out.str()), json({{"items", json::array()}})) << out.str();
  }
}

TEST(JsonArrayStream, NonFiniteElementIsAnError) {
  std::ostringstream out;
  JsonArrayStream s(out, json::object(), "items", -1);
  EXPECT_THROW(s.add({{"ts", std::numeric_limits<double>::infinity()}}), Error);
}

}  // namespace
}  // namespace mfabric

namespace mfabric {
namespace {

TEST(JsonText, ADocumentNestedTooDeepIsAnErrorNotAStackOverflow) {
  // Built iteratively here; nlohmann's dump would recurse 100,000 times.
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* at = &deep;
  for (int i = 0; i < 100000; ++i) {
    at->push_back(nlohmann::json::array());
    at = &at->back();
  }
  try {
    (void)json_text(deep);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 256 levels deep"), std::string::npos)
        << e.what();
  }
  release_json(deep);
}

TEST(JsonText, TheNonFinitePathIsFoundIteratively) {
  nlohmann::json j = {{"a", {1, 2, {{"b", {0.5, std::nan("")}}}}}};
  try {
    (void)json_text(j);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "a[2].b[1]");
  }
}

TEST(JsonExcerpt, IsShortWhateverTheValue) {
  EXPECT_EQ(json_excerpt(nlohmann::json(3)), "3");
  EXPECT_EQ(json_excerpt(nlohmann::json("ab")), "\"ab\"");
  EXPECT_EQ(json_excerpt(nlohmann::json::array({1, 2, 3})), "an array of 3");
  EXPECT_EQ(json_excerpt(nlohmann::json::object({{"a", 1}})), "an object of 1 member");
  EXPECT_EQ(json_excerpt(nlohmann::json::array()), "[]");
  // A long string is cut and its length given; control characters are escaped.
  const std::string excerpt = json_excerpt(nlohmann::json(std::string(10'000'000, 'x')));
  EXPECT_LT(excerpt.size(), 80u);
  EXPECT_NE(excerpt.find("(10000000 bytes)"), std::string::npos) << excerpt;
  EXPECT_EQ(json_excerpt(nlohmann::json("a\x1b[31mb")), "\"a\\u001b[31mb\"");
}

}  // namespace
}  // namespace mfabric
