// The repeat markers of fuzz_support.h: every text harness expands its input with them, so a
// mistake here would silently change what all of them fuzz (and what the seeds and regression
// inputs mean).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "fuzz_support.h"

namespace mfabric::fuzz {
namespace {

std::string expanded(std::string_view raw, std::size_t max_bytes = kMaxExpandedBytes) {
  const std::optional<std::string> out = expand_repeats(raw, max_bytes);
  EXPECT_TRUE(out.has_value()) << raw;
  return out.value_or("<over the cap>");
}

TEST(ExpandRepeats, TextWithoutMarkersIsUnchanged) {
  for (const std::string_view raw :
       {"", "plain", "@", "@@", "@@@", "@@rank@@", "a@@b", "@@12", "@@12(", "@@12(x", "@@12(x)@",
        "@@12)@@", "@@(x)@@", "@@x(y)@@", "@@ 2(x)@@", "@@-2(x)@@", "@@#@@", "x@@#@@y"}) {
    EXPECT_EQ(expanded(raw), raw);
  }
}

TEST(ExpandRepeats, RepeatsTheSegment) {
  EXPECT_EQ(expanded("a@@3(xy)@@b"), "axyxyxyb");
  EXPECT_EQ(expanded("@@1(x)@@"), "x");
  EXPECT_EQ(expanded("@@0(x)@@"), "");
  EXPECT_EQ(expanded("a@@0(x)@@b"), "ab");
  EXPECT_EQ(expanded("@@5()@@"), "");
  EXPECT_EQ(expanded("@@2(a)@@@@3(b)@@"), "aabbb");
  EXPECT_EQ(expanded("@@0000002(a)@@"), "aa");  // seven digits
  // Binary bytes and newlines are segment text like any other.
  EXPECT_EQ(expanded(std::string_view("@@2(\0\n)@@", 9)), std::string_view("\0\n\0\n", 4));
}

TEST(ExpandRepeats, TheFirstCloseEndsTheSegmentAndMarkersDoNotNest) {
  EXPECT_EQ(expanded("@@2(a)@@)@@"), "aa)@@");
  // The segment is "@@3(x": repeated as text, not expanded again.
  EXPECT_EQ(expanded("@@2(@@3(x)@@)@@"), "@@3(x@@3(x)@@");
  EXPECT_EQ(expanded("@@2(()@@"), "((");
}

TEST(ExpandRepeats, AnAtBeforeAMarkerStaysText) {
  EXPECT_EQ(expanded("@@@2(x)@@"), "@xx");
  EXPECT_EQ(expanded("@@@@2(x)@@"), "@@xx");
}

TEST(ExpandRepeats, CountsAboveTheLimitAreText) {
  EXPECT_EQ(expanded("@@1000000(a)@@"), std::string(kMaxRepeat, 'a'));
  EXPECT_EQ(expanded("@@1000001(a)@@"), "@@1000001(a)@@");
  EXPECT_EQ(expanded("@@9999999(a)@@"), "@@9999999(a)@@");
  // An eighth digit is not part of the count, so no '(' follows it.
  EXPECT_EQ(expanded("@@00000001(a)@@"), "@@00000001(a)@@");
}

TEST(ExpandRepeats, IndexInsideASegment) {
  EXPECT_EQ(expanded("@@3(k@@#@@,)@@"), "k0,k1,k2,");
  EXPECT_EQ(expanded("@@2(@@#@@-@@#@@ )@@"), "0-0 1-1 ");
  EXPECT_EQ(expanded("@@12(@@#@@)@@"), "01234567891011");
  // Outside a segment it is text.
  EXPECT_EQ(expanded("@@#@@@@2(x)@@@@#@@"), "@@#@@xx@@#@@");
}

TEST(ExpandRepeats, TheIssuesReproducers) {
  // 100,000 nested arrays in a demand file (issue 24).
  const std::string deep = expanded(R"({"demand_bytes": @@100000([)@@1@@100000(])@@})");
  EXPECT_EQ(deep, R"({"demand_bytes": )" + std::string(100000, '[') + "1" +
                      std::string(100000, ']') + "}");
  // A long row.
  const std::string row = expanded(R"({"demand_bytes": [[@@1000000(1,)@@1]]})");
  EXPECT_EQ(row.size(), 19 + 2'000'000u + 4);
}

TEST(ExpandRepeats, TheCapOnTheExpandedSize) {
  EXPECT_EQ(expanded("@@4(ab)@@", 8), "abababab");
  EXPECT_FALSE(expand_repeats("@@4(ab)@@c", 8));
  EXPECT_FALSE(expand_repeats("c@@4(ab)@@", 8));
  EXPECT_FALSE(expand_repeats("@@5(ab)@@", 8));
  EXPECT_FALSE(expand_repeats("123456789", 8));
  EXPECT_EQ(expanded("@@10(@@#@@)@@", 10), "0123456789");
  EXPECT_FALSE(expand_repeats("@@11(@@#@@)@@", 11));  // "012345678910" is 12
  // The default cap: 4 MiB of 5-byte segments is too long, 4 MiB exactly is not.
  EXPECT_FALSE(expand_repeats("@@1000000(12345)@@"));
  EXPECT_EQ(expanded("@@1000000(1234)@@@@194304(1)@@").size(), kMaxExpandedBytes);
  EXPECT_FALSE(expand_repeats("@@1000000(1234)@@@@194305(1)@@"));
}

}  // namespace
}  // namespace mfabric::fuzz
