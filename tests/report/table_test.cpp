// Text tables (report/table.h): names with control characters or invalid UTF-8 cannot break
// the layout, and columns are as wide as their widest cell in characters.
#include "report/table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/output_text.h"

namespace mfabric::report {
namespace {

TEST(Table, AlignsColumns) {
  Table t({"name", "count"});
  t.add_row({"a", "1"});
  t.add_row({"longer", "1,000"});
  EXPECT_EQ(t.render(),
            "name    count\n"
            "-------------\n"
            "a           1\n"
            "longer  1,000\n");
}

TEST(Table, ControlCharactersAndInvalidUtf8StayOnTheirLine) {
  Table t({"fabric", "cost"});
  t.add_row({"evil\nname\x1B[2J", "$1"});
  t.add_row({"bad\xFF", "$2"});
  const std::string out = t.render();
  EXPECT_TRUE(is_valid_utf8(out));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4);  // header, rule, two rows
  EXPECT_EQ(out.find('\x1B'), std::string::npos);
  EXPECT_NE(out.find("evil\\nname\\x1B[2J"), std::string::npos) << out;
}

TEST(Table, WidthCountsCharactersNotBytes) {
  Table t({"name", "n"});
  t.add_row({"\xC3\xA9t\xC3\xA9", "1"});  // "été": 3 characters, 5 bytes
  t.add_row({"abcd", "2"});
  EXPECT_EQ(t.render(),
            "name  n\n"
            "-------\n"
            "\xC3\xA9t\xC3\xA9   1\n"
            "abcd  2\n");
}

}  // namespace
}  // namespace mfabric::report
