// The figure of simulate's report.html (docs/telemetry.md): link utilisation over time, a line
// per link class, drawn by gnuplot (report/gnuplot.h).
#pragma once

#include <string>

#include "report/gnuplot_script.h"
#include "report/utilisation.h"

namespace mfabric::report {

inline constexpr const char* kUtilisationFigureId = "plot-utilisation";

// The gnuplot script: a step line per class over its bins, y from 0 to 1, x in seconds (in
// milliseconds for a run shorter than a second), a key naming the classes.
GnuplotScript utilisation_script(const UtilisationSeries& series);

// The <figure> with its caption and the plot inlined as SVG. mfabric::Error for field `field`
// when gnuplot is missing or fails.
std::string utilisation_figure_html(const UtilisationSeries& series, const std::string& field);

}  // namespace mfabric::report
