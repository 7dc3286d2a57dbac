// The heatmaps of a sweep report (docs/sweep.md, "Heatmaps"): each point's iteration time over
// its reference point's (study::SweepHeatmap), laid out by two fields, one map per combination
// of the others.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::report {

struct HeatmapCell {
  std::string panel;  // the point's other fields, "a=1 b=2" (the reference fields left out)
  std::string x, y;   // its values of the heatmap's x and y fields
  double ratio = 0;   // its iteration time / its reference point's
};

// The cells of the sweep's heatmap, panels in order of first appearance; points that failed,
// reference points, and points without a (successful) reference are left out.
std::vector<HeatmapCell> heatmap_cells(const study::SweepSpec& spec, const study::SweepResult& r);

// The values of one axis in plotting order: by their number when they all read as numbers of one
// kind (axis_numbers), else in order of first appearance.
std::vector<std::string> heatmap_axis(const std::vector<std::string>& values);

// {"x", "y", "reference": {path: value}, "cells": [{"panel", "x", "y", "ratio"}]}.
nlohmann::json heatmap_json(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells);
// One figure per panel (gnuplot); mfabric::Error (field "report.html") when gnuplot fails.
std::string heatmap_html(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells);
// A table per panel: rows y, columns x, cells the ratio.
std::string heatmap_text(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells);

}  // namespace mfabric::report
