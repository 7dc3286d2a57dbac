// report.html of `mfabric simulate --out DIR` (docs/telemetry.md): one self-contained page
// (inline CSS and SVG, no scripts) with the run's summary, link utilisation over time per link
// class, a table of the classes, and the files written next to it.
#pragma once

#include <string>
#include <vector>

#include "report/simulation_report.h"
#include "report/utilisation.h"

namespace mfabric::report {

// `files`: the names written into DIR with the page (listed on it). mfabric::Error for field
// "report.html" when gnuplot is missing or fails: the page is whole or not made.
std::string simulation_html(const SimulationReport& r, const UtilisationSeries& series,
                            const std::vector<std::string>& files);

}  // namespace mfabric::report
