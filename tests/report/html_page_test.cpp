#include "report/html_page.h"

#include <gtest/gtest.h>

#include <string>

namespace mfabric::report {
namespace {

TEST(HtmlPage, HtmlTextEscapesMarkupAndRepairsUtf8) {
  EXPECT_EQ(html_text("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_text("x\xff"), "x\xEF\xBF\xBD");
  EXPECT_EQ(html_text("a\x01"
                      "b\tc\x7f"),
            "a\xEF\xBF\xBD"
            "b\tc\xEF\xBF\xBD");
}

TEST(HtmlPage, TheStyleSheetIsCssForBothReports) {
  const std::string style = report_style();
  EXPECT_NE(style.find("body {"), std::string::npos);
  EXPECT_NE(style.find("figure"), std::string::npos);
}

}  // namespace
}  // namespace mfabric::report
