// The reports' gnuplot helpers (gnuplot.h): script lines, quoting, inlined SVG, errors, timeout.
#include "report/gnuplot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"

// Helpers in a namespace of their own: test files are compiled several to a translation unit.
namespace mfabric::report::gnuplot_test {
namespace {

namespace fs = std::filesystem;

TEST(Gnuplot, CanvasTicsAndDataBlocksAreTheScriptsOwnLines) {
  EXPECT_EQ(gnuplot_svg_canvas(960, 420),
            "set encoding utf8\n"
            "set terminal svg size 960,420 fixed noenhanced font 'sans,13' background rgb "
            "'white'\n");
  EXPECT_EQ(gnuplot_tic_list({"a", "it's"}), "'a' 0, 'it''s' 1");
  EXPECT_EQ(gnuplot_tic_list({}), "");
  EXPECT_EQ(gnuplot_data_block("s0", {{1, 2.5}, {3, -4}}), "$s0 << EOD\n1 2.5\n3 -4\nEOD\n");
}

TEST(Gnuplot, StringsAreSingleQuotedWithQuotesDoubled) {
  EXPECT_EQ(gnuplot_string("it's"), "'it''s'");
  EXPECT_EQ(gnuplot_string("a\nb\tc"), "'a b c'");
  EXPECT_EQ(gnuplot_string("$x \"y\" \\n"), "'$x \"y\" \\n'");
}

TEST(Gnuplot, InlineSvgPrefixesIdsAndReferencesOnly) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<svg id=\"a\">\n<defs><path id='p1'/><path id='p10'/></defs>"
      "<use xlink:href='#p1'/><use xlink:href='#p10'/><g filter='url(#p1)'/>"
      "<text>'#p1' \"#p1\"</text><rect fill=\"#p1\"/></svg>";
  EXPECT_EQ(inline_svg(svg, "x-"),
            "<svg id=\"x-a\">\n<defs><path id='x-p1'/><path id='x-p10'/></defs>"
            "<use xlink:href='#x-p1'/><use xlink:href='#x-p10'/><g filter='url(#x-p1)'/>"
            "<text>'#p1' \"#p1\"</text><rect fill=\"#x-p1\"/></svg>");
}

TEST(Gnuplot, AFailingScriptIsAnError) {
  try {
    run_gnuplot("set terminal svg\nplot $nothing using 1:2\n", "report.html");
    ADD_FAILURE() << "expected mfabric::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "report.html");
    EXPECT_EQ(e.message(), "gnuplot failed: line 2: no datablock named $nothing");
  }
}

// Runs fn() with TMPDIR set to a new empty directory; true if the directory is empty after.
template <class F>
bool leaves_no_temporary_files(F&& fn) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  const fs::path dir =
      fs::temp_directory_path() / ("mfabric-html-tmpdir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::setenv("TMPDIR", dir.c_str(), 1);
  fn();
  if (old)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  const bool empty = fs::is_empty(dir);
  fs::remove_all(dir);
  return empty;
}

TEST(Gnuplot, TemporaryDirectoryIsRemovedAfterSuccessAndFailure) {
  EXPECT_TRUE(leaves_no_temporary_files([] {
    EXPECT_NE(run_gnuplot("set terminal svg\nplot x\n", "report.html").find("</svg>"),
              std::string::npos);
  }));
  EXPECT_TRUE(leaves_no_temporary_files(
      [] { EXPECT_THROW(run_gnuplot("plot $nothing\n", "report.html"), Error); }));
}

TEST(Gnuplot, ARunPastItsTimeIsStopped) {
  const auto start = std::chrono::steady_clock::now();
  try {
    run_gnuplot("pause 20\n", "report.html", 0.3);
    ADD_FAILURE() << "expected mfabric::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "gnuplot did not finish within 0.3 s");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace mfabric::report::gnuplot_test
