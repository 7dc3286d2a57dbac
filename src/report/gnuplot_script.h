// A gnuplot script for a fixed-size SVG canvas, built a line at a time (report/gnuplot.h runs it):
// pixel positions for multiplot panels, data blocks, and a shared key strip.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "report/gnuplot.h"

namespace mfabric::report {

// One gnuplot script drawing into an SVG canvas of a fixed size; positions are given in pixels
// from the canvas's top-left corner. axes() and key_strip() draw in the style of compare's
// multiplots.
class GnuplotScript {
 public:
  GnuplotScript(int width, int height)
      : width_(width), height_(height), text_(gnuplot_svg_canvas(width, height)) {}

  void line(const std::string& command) {
    text_ += command;
    text_ += '\n';
  }
  // A data block `$name` of numeric rows (gnuplot reads it like a data file).
  void block(const std::string& name, const std::vector<std::vector<double>>& rows) {
    text_ += gnuplot_data_block(name, rows);
  }
  // The plot area of the next plot: left, top, right and bottom edges in pixels.
  void area(double left, double top, double right, double bottom) {
    line(fmt::format("set lmargin at screen {}", x(left)));
    line(fmt::format("set rmargin at screen {}", x(right)));
    line(fmt::format("set tmargin at screen {}", y(top)));
    line(fmt::format("set bmargin at screen {}", y(bottom)));
  }
  // Borders, tics and grid of a plot (after a key strip, which has none).
  void axes() {
    line("set border 3 lc rgb '#444444'");
    // `set xtics` alone would bring back the mirrored tics on the top and right.
    line("set xtics nomirror out; set ytics nomirror out");
    line("set grid ytics back lc rgb '#dddddd' lw 1 dt 1");
  }
  // A multiplot's key, shared by its panels: a plot of its own across the canvas between
  // top_px and bottom_px that draws only `entries` (keyentry ... title ...).
  void key_strip(double top_px, double bottom_px, const std::vector<std::string>& entries) {
    area(10, top_px, width_ - 10, bottom_px);
    line("unset border; unset tics; unset grid; unset title; unset xlabel; unset ylabel");
    line("set xrange [0:1]; set yrange [0:1]");
    line("set key inside center center horizontal samplen 2 width 1 spacing 1.2");
    // gnuplot 5.4 asserts on a plot of key entries alone: NaN draws nothing and keeps it happy.
    std::string plot = "plot NaN notitle";
    for (const std::string& e : entries)
      plot += ", \\\n  " + e;
    line(plot);
    line("unset key");
    axes();
  }
  std::string x(double px) const { return gnuplot_number(px / width_); }
  std::string y(double px) const { return gnuplot_number(1 - px / height_); }
  int width() const { return width_; }
  int height() const { return height_; }
  const std::string& text() const { return text_; }

 private:
  int width_;
  int height_;
  std::string text_;
};

}  // namespace mfabric::report
