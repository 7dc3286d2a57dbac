// compare's per-run GPU figures (tokens/s, model TFLOP/s and MFU per GPU) in results.json,
// results.csv and the text table.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "report/compare_report.h"
#include "report/compare_samples.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

// The cells of a CSV line without quoted fields, the empty last one included.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t from = 0;
  for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
    cells.push_back(line.substr(from, comma - from));
  cells.push_back(line.substr(from));
  return cells;
}

TEST(CompareReport, EveryRunHasItsGpuFigures) {
  CompareResult r;
  CompareRun f = run("mixtral-8x7b", 400, "fat-tree", 2.0, cost(1e6, 1e6, 1e6, 0, 0, 1e5), 0, 0);
  f.tokens_per_s_per_gpu = f.tokens_per_s / f.gpus;
  f.model_tflops_per_gpu = 185.5;
  f.mfu = 0.1875;
  r.runs.push_back(f);
  const nlohmann::json j = compare_json(r, false).at("runs").at(0);
  EXPECT_EQ(j.at("tokens_per_s_per_gpu").get<double>(), f.tokens_per_s / 64);
  EXPECT_EQ(j.at("model_tflops_per_gpu").get<double>(), 185.5);
  EXPECT_EQ(j.at("mfu").get<double>(), 0.1875);
  EXPECT_TRUE(j.contains("tokens_per_s"));  // the keys before them stay

  std::ostringstream csv;
  write_compare_csv(r, csv);
  std::stringstream lines(csv.str());
  std::string provenance, header, row;
  std::getline(lines, provenance);
  std::getline(lines, header);
  std::getline(lines, row);
  const std::vector<std::string> names = csv_cells(header);
  const std::vector<std::string> values = csv_cells(row);
  ASSERT_EQ(names.size(), values.size()) << header << "\n" << row;
  const auto value = [&](const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return values[i];
    ADD_FAILURE() << "no column " << name << " in " << header;
    return std::string();
  };
  EXPECT_EQ(std::stod(value("tokens_per_s_per_gpu")), f.tokens_per_s / 64);
  EXPECT_EQ(value("model_tflops_per_gpu"), "185.5");
  EXPECT_EQ(value("mfu"), "0.1875");
  EXPECT_EQ(std::stod(value("tokens_per_s")), f.tokens_per_s);

  const std::string text = compare_text(r);
  EXPECT_NE(text.find(" MFU "), std::string::npos) << text;
  EXPECT_NE(text.find(" 18.8% "), std::string::npos) << text;
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
