// Plots drawn by gnuplot (Debian's gnuplot-nox) for the HTML reports (docs/compare.md).
// gnuplot runs as a child process (posix_spawn, no shell) on a script written to a private
// temporary directory that is removed whatever happens; its SVG comes back as text, ready to be
// inlined into an HTML page.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mfabric::report {

// The full path of `program` on $PATH (an executable regular file), or nothing.
std::optional<std::string> find_on_path(std::string_view program);

// The full path of gnuplot on $PATH; mfabric::Error for field `field` when it is not there
// ("gnuplot not found: install gnuplot (scripts/install-deps.sh)").
std::string require_gnuplot(const std::string& field);

// `text` as a gnuplot string literal: single-quoted (gnuplot expands nothing inside), inner
// quotes doubled, ill-formed UTF-8 replaced and control characters (which would end the command
// line) written as spaces. Use it with `noenhanced` text, where ^ _ { } @ & ~ are plain.
std::string gnuplot_string(std::string_view text);

// A number for a gnuplot script or data block: shortest round-trip form, C locale.
std::string gnuplot_number(double x);

// The first lines of every mfabric plot: UTF-8 text on a white SVG canvas of this many pixels
// (fixed size, sans 13, noenhanced text).
std::string gnuplot_svg_canvas(int width, int height);

// `'a' 0, 'b' 1, ...`: each label at its position, for `set xtics (...)`.
std::string gnuplot_tic_list(const std::vector<std::string>& labels);

// A tic mark of an axis: its label and where it stands, in the axis's numbers.
struct GnuplotTic {
  std::string label;
  double at = 0;
};
// `'1us' 1e-06, '1ms' 0.001, ...`: for `set xtics (...)`; tics at a position that is not finite
// are left out.
std::string gnuplot_tics(const std::vector<GnuplotTic>& tics);

// A data block `$name` of numeric rows (gnuplot reads it like a data file), a row per line.
std::string gnuplot_data_block(const std::string& name,
                               const std::vector<std::vector<double>>& rows);

// Runs gnuplot with default settings (no ~/.gnuplot) on `script`, which must set the svg
// terminal and write to stdout (no `set output`), and returns what gnuplot wrote. mfabric::Error
// for field `field` when gnuplot is not on $PATH (require_gnuplot), fails (with its first error
// line), runs longer than `timeout_s`, or writes no SVG.
std::string run_gnuplot(const std::string& script, const std::string& field, double timeout_s = 60);

// gnuplot's SVG document made ready for inlining into HTML: the XML declaration is dropped and
// every id (and each reference to it) is prefixed with `id_prefix`, so that several plots on one
// page keep their ids unique.
std::string inline_svg(std::string_view svg, std::string_view id_prefix);

}  // namespace mfabric::report
