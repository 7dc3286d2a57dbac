// The cost convention (paper or built) named by every cost and perf/$ figure of compare.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "fabric/cost.h"
#include "report/compare_html.h"
#include "report/compare_report.h"
#include "report/compare_samples.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

TEST(CompareConvention, EveryCostAndPerfPerDollarFigureNamesTheConvention) {
  CompareResult r = one_model();
  for (const auto convention : {fabric::CostConvention::Paper, fabric::CostConvention::Built}) {
    r.cost_convention = convention;
    study::relate_to_fat_tree(r.runs, convention);
    const bool built = convention == fabric::CostConvention::Built;
    const std::string name = built ? "built topology" : "paper formulas";
    SCOPED_TRACE(name);
    // perf/$ of mFabric: (10 x 4) / (12.5 x 1) = 3.2 on paper, (10 x 3) / (12.5 x 2) = 1.2 built.
    const double per_dollar = built ? 1.2 : 3.2;
    EXPECT_NEAR(*r.runs[1].perf_per_dollar_vs_fat_tree, per_dollar, 1e-12);
    const std::string text = compare_text(r);
    EXPECT_NE(text.find("cost (" + name + ")"), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("{:.2f}x", per_dollar)), std::string::npos) << text;
    EXPECT_NE(text.find("network cost by " + name), std::string::npos) << text;
    const nlohmann::json j = compare_json(r, false);
    EXPECT_EQ(j.at("cost_convention"), built ? "built" : "paper");
    EXPECT_NEAR(j.at("runs").at(1).at("perf_per_dollar_vs_fat_tree").get<double>(), per_dollar,
                1e-12);
    std::ostringstream csv;
    write_compare_csv(r, csv);
    EXPECT_NE(csv.str().find(fmt::format(",{},", built ? "built" : "paper")), std::string::npos);
    const std::string html = compare_html(r);
    EXPECT_NE(html.find("<th>perf/$ vs fat-tree (" + name + ")</th>"), std::string::npos);
    EXPECT_NE(html.find("<th>network cost, " + name + " (USD)</th>"), std::string::npos);
    EXPECT_NE(figure(html, "plot-cost-components").find("(" + name + ")"), std::string::npos);
    // The axes (gnuplot's SVG text keeps the quote as it is).
    EXPECT_NE(figure(html, "plot-perf-per-dollar").find("fat-tree's (" + name + ")"),
              std::string::npos);
    EXPECT_NE(figure(html, "plot-cost-vs-time").find("fat-tree's (" + name + ")"),
              std::string::npos);
    // The cost bars are the convention's: mFabric's total in million USD.
    EXPECT_NE(figure(html, "plot-cost-components").find(built ? ">2<" : ">1<"), std::string::npos);
    // The other names are not used for the figure.
    for (const char* old : {"perf. per dollar", "performance per dollar", "tokens/s per $M"}) {
      EXPECT_EQ(html.find(old), std::string::npos) << old;
      EXPECT_EQ(text.find(old), std::string::npos) << old;
    }
  }
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
