// A comparison against the mFabric paper's stated figures (docs/compare.md, "Against the
// paper"): per model and link, mFabric against the fat-tree, perf/$, TopoOpt and the 3:1
// fat-tree against mFabric, each next to what the paper states and whether it is within 10%.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "study/compare.h"

namespace mfabric::report {

struct PaperCheck {
  std::string model;
  double link_gbps = 0;
  std::string figure;  // "mfabric / fat-tree", "perf/$ vs fat-tree", ...
  double value = 0;
  double paper_low = 0, paper_high = 0;  // the paper's stated range (low == high: one figure)
  std::string paper;                     // as the paper states it
  // Within 10% of the range: 0.9 x low <= value <= 1.1 x high.
  bool within = false;
};

// The checks the runs allow (a figure whose runs are missing or failed is left out).
std::vector<PaperCheck> paper_checks(const study::CompareResult& r);
std::string paper_checks_text(const std::vector<PaperCheck>& checks);
nlohmann::json paper_checks_json(const std::vector<PaperCheck>& checks);

}  // namespace mfabric::report
