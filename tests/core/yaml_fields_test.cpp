// The YAML front end (core/yaml_fields.h): every limit of parse_yaml, and messages that quote
// input escaped and cut.
#include "core/yaml_fields.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/suggest.h"

namespace mfabric {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_yaml(text, "f.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ParseYaml, DeepNestingIsOneLineNamingThePlace) {
  // yaml-cpp's own guard (500 levels in 0.7) used to say only "bad file"; the event pass stops
  // at 64, before yaml-cpp's guard and before any node is built.
  std::string flow = "a: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  const std::string e = error_of(flow);
  EXPECT_TRUE(has(e, "f.yaml: lists and maps are nested more than 64 levels deep at line 1")) << e;
  std::string block;
  for (int i = 0; i < 700; ++i)
    block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  EXPECT_TRUE(has(error_of(block), "nested more than")) << error_of(block);
  // Our own limit, below yaml-cpp's: 64 levels.
  const std::string e65 = error_of(std::string(65, '[') + std::string(65, ']'));
  EXPECT_TRUE(has(e65, "nested more than 64 levels deep at line 1, column 65")) << e65;
  EXPECT_EQ(error_of(std::string(64, '[') + std::string(64, ']')), "");
}

TEST(ParseYaml, AnAliasBombIsRefused) {
  // Nine levels of ten aliases each: 10^9 nodes once expanded, 2 KB of text.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k)
      text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  const std::string e = error_of(text);
  EXPECT_TRUE(has(e, "more than 1000000 nodes once its aliases are expanded")) << e;
}

TEST(ParseYaml, AnAliasInsideItsOwnAnchorIsRefused) {
  const std::string e = error_of("a: &a [1, *a]\n");
  // yaml-cpp either refuses the alias or builds a cycle, which the depth limit stops.
  EXPECT_FALSE(e.empty());
}

TEST(ParseYaml, ASecondDocumentIsRefused) {
  EXPECT_EQ(error_of("a: 1\n---\nb: 2\n"),
            "f.yaml: the file holds a second YAML document (a line '---' starts another, at line "
            "2, column 1); mfabric reads one document per file");
  // A leading '---' starts the only document.
  EXPECT_EQ(error_of("---\na: 1\n"), "");
  EXPECT_TRUE(parse_yaml("", "f.yaml").IsNull());
}

TEST(ParseYaml, MalformedTextThatYamlCppWouldBuildWithoutEndIsRefused) {
  // Found by the prices fuzzer: 31 bytes whose second "document" yaml-cpp's LoadAll builds until
  // memory runs out (4 GB). The event pass stops at the second document before anything is built.
  const std::string text =
      ",ibre_length_i: \xCC"
      "e_le-1\n\xCC\xCC\xCC-1\n\x8D";
  EXPECT_TRUE(has(error_of(text), "second YAML document")) << error_of(text);
}

TEST(ParseYaml, TextOverTheCapIsRefusedBeforeParsing) {
  const std::string big =
      "a: '" + std::string(static_cast<std::size_t>(kMaxYamlFileBytes), 'x') + "'\n";
  EXPECT_TRUE(has(error_of(big), "more than the 1MiB mfabric reads")) << error_of(big);
}

TEST(YamlMessages, QuotedInputIsEscapedAndCut) {
  const YAML::Node node =
      parse_yaml("n: \"a\\e[31mb\\ac\\nd\"\nlong: '" + std::string(100000, 'y') + "'\n", "f.yaml");
  const Fields f(node, "f.yaml", "", {"n", "long"});
  try {
    (void)f.optional_double("n");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml: n: expected a number, got 'a\\x1B[31mb\\x07c\\nd'");
  }
  try {
    (void)f.optional_bool("long");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 160u) << e.what();
    EXPECT_TRUE(has(e.what(), "(100000 bytes)")) << e.what();
  }
}

TEST(YamlMessages, AnUnknownKeyIsEscapedAndCut) {
  try {
    const Fields f(parse_yaml("\"k\\e]0;x\\a\": 1\n", "f.yaml"), "f.yaml", "", {"a"});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "k\\x1B]0;x\\x07");
  }
  try {
    const Fields f(parse_yaml(std::string(5000, 'k') + ": 1\n", "f.yaml"), "f.yaml", "", {"a"});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_LT(e.field().size(), 100u);
  }
}

TEST(YamlMessages, TheTypoHintComparesOnlyKeysOfAboutTheFieldsLength) {
  const auto message_of = [](const std::string& key) {
    try {
      // An explicit key: yaml-cpp refuses an implicit one past 1024 characters.
      const Fields f(parse_yaml("? " + key + "\n: 1\n", "f.yaml"), "f.yaml", "",
                     {"layers", "hidden", "experts"});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Within two edits, longer or shorter: a hint.
  EXPECT_TRUE(has(message_of("layer"), "did you mean 'layers'?"));
  EXPECT_TRUE(has(message_of("layerss"), "did you mean 'layers'?"));
  EXPECT_TRUE(has(message_of("expertsxx"), "did you mean 'experts'?"));
  // Three characters longer than any field is three edits at least: no hint, and no distance
  // computed for a key of 1 MiB (the fuzzing build took 11 s over one such key before).
  EXPECT_FALSE(has(message_of("layersxxx"), "did you mean"));
  const std::string huge = "layer" + std::string(1000000, 'x') + "00";
  const std::string m = message_of(huge);
  EXPECT_TRUE(has(m, "unknown field")) << m.substr(0, 200);
  EXPECT_FALSE(has(m, "did you mean"));
}

// The nearest name wins over an earlier one that is also within reach, whatever the order.
TEST(Suggest, TheNearestNameWinsOverTheFirstWithinReach) {
  EXPECT_EQ(closest_name("deepseek-v4", {"deepseek-r1", "deepseek-v3"}), "deepseek-v3");
  EXPECT_EQ(closest_name("deepseek-v4", {"deepseek-v3", "deepseek-r1"}), "deepseek-v3");
  EXPECT_EQ(closest_name("abcd", {"abxy", "abcx"}), "abcx");
  EXPECT_EQ(closest_name("abzz", {"abxy", "abyx"}), "abxy");  // equally near: the first
  EXPECT_EQ(closest_name("qqqq", {"abcd"}), std::nullopt);
  // A swap of two neighbours is one edit: --otu meant --out, not --gpu (two replacements).
  EXPECT_EQ(edit_distance("otu", "out"), 1u);
  EXPECT_EQ(edit_distance("otu", "gpu"), 2u);
  EXPECT_EQ(closest_name("--otu", {"--gpu", "--out"}), "--out");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
}

}  // namespace
}  // namespace mfabric
