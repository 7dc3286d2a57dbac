// UTF-8 repair, printable text and CSV fields (core/output_text.h). Expected values are written
// from the Unicode standard's table 3-7 and RFC 4180, byte by byte.
#include "core/output_text.h"

#include <gtest/gtest.h>

#include <string>

namespace mfabric {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, WellFormedSequencesAreValid) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9"));          // U+00E9
  EXPECT_TRUE(is_valid_utf8("\xE2\x82\xAC"));      // U+20AC
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));  // U+1F600
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
}

TEST(Utf8, IllFormedSequencesAreInvalid) {
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\x80"));              // lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));
}

TEST(Utf8, RepairReplacesEachMaximalSubpart) {
  EXPECT_EQ(valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(valid_utf8("\xFF\xFE"), kFffd + kFffd);
  // A truncated three-byte sequence is one maximal subpart: one replacement, then 'A'.
  EXPECT_EQ(valid_utf8("\xE2\x82"
                       "A"),
            kFffd + "A");
  // A surrogate's lead E0..EF is valid but its second byte is not: ED is one subpart, then each
  // continuation byte on its own.
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_TRUE(is_valid_utf8(valid_utf8("\xC0\xAF\xF8\x88\x80\x80\x80 \xE0\x80")));
}

TEST(Printable, EscapesControlCharactersAndRepairsUtf8) {
  EXPECT_EQ(printable("mixtral-8x7b"), "mixtral-8x7b");
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable("\x1B[31mred"), "\\x1B[31mred");
  EXPECT_EQ(printable("\x7F"), "\\x7F");
  EXPECT_EQ(printable("\xC2\x9B"
                      "2J"),
            "\\u009B2J");  // C1 CSI
  EXPECT_EQ(printable("exp\xFF.yaml"), "exp" + kFffd + ".yaml");
  EXPECT_EQ(printable("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // letters stay
}

TEST(Printable, DisplayWidthCountsCharacters) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("\xC3\xA9t\xC3\xA9"), 3u);
  EXPECT_EQ(display_width(kFffd), 1u);
}

TEST(CsvField, QuotesPerRfc4180) {
  EXPECT_EQ(csv_field("gpu0"), "gpu0");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field("x\xFFy"), "x" + kFffd + "y");
}

}  // namespace
}  // namespace mfabric
