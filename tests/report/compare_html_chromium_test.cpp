// compare's report.html rendered in headless Chromium (skipped when chromium is not installed).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "report/compare_html.h"
#include "report/compare_report.h"
#include "report/compare_samples.h"
#include "report/gnuplot.h"
#include "test_text.h"

// In the namespace of compare_samples.h (test files are compiled several to a translation unit).
namespace mfabric::report::compare_html_test {
namespace {

using testing::slurp;

struct Child {
  pid_t pid = -1;
};

// Starts `argv` in its own process group with stdout to `out`, stderr to `err`.
Child start(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::setpgid(0, 0);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (std::string& a : copy)
      args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

// The exit code, or -1 when the child (and its process group) was killed past `timeout`.
int finish(const Child& c, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
      ::kill(-c.pid, SIGKILL);  // helpers Chromium may have left behind
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-c.pid, SIGKILL);
      ::waitpid(c.pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// sample() and a rail-optimized run for each fat-tree run with its time and cost: the two
// coincide at (1, 1) of the Pareto plot, as they nearly do in real comparisons.
CompareResult with_rail_on_the_fat_tree(CompareResult r) {
  std::vector<CompareRun> rail;
  for (const CompareRun& run : r.runs)
    if (run.fabric == "fat-tree") {
      CompareRun copy = run;
      copy.fabric = "rail-optimized";
      rail.push_back(copy);
    }
  r.runs.insert(r.runs.end(), rail.begin(), rail.end());
  return r;
}

// "$4,700,000": whole dollars with thousands separators.
std::string usd(double x) {
  std::string digits = std::to_string(std::llround(x));
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return "$" + digits;
}

// Text as Chromium serialises a text node: & < > escaped, quotes as they are.
std::string dom_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// The verdict the page should open with, a sentence per mfabric run, computed here from the
// runs' own figures (compare.h's definitions, the paper's cost convention).
std::vector<std::string> expected_verdict(const CompareResult& r) {
  std::vector<std::string> out;
  for (const CompareRun& m : r.runs) {
    if (m.fabric != "mfabric") continue;
    for (const CompareRun& f : r.runs) {
      if (f.fabric != "fat-tree" || f.model != m.model || f.link_gbps != m.link_gbps) continue;
      const double speed = f.iteration_time_s / m.iteration_time_s;
      const double cost_ratio = m.cost_paper.total() / f.cost_paper.total();
      out.push_back(fmt::format(
          "{} at {:g}G: mFabric trains at {:.2f}x the speed of the fat-tree ({}: {:.2f} s vs "
          "{:.2f} s per iteration) for {:.2f}x its network cost ({} vs {}, paper formulas), "
          "{:.2f}x its perf/$.",
          m.model, m.link_gbps, speed,
          speed >= 1 ? fmt::format("{:.2f}x faster", speed)
                     : fmt::format("{:.2f}x slower", 1 / speed),
          m.iteration_time_s, f.iteration_time_s, cost_ratio, usd(m.cost_paper.total()),
          usd(f.cost_paper.total()), speed / cost_ratio));
      if (m.busiest_expert_over_mean) {
        out.back() +=
            fmt::format(" Its expert routing gives the busiest expert {:.2f}x the mean's tokens.",
                        *m.busiest_expert_over_mean);
      }
      break;
    }
  }
  return out;
}

// The value of attribute `name` in the tag `tag` ("" when absent), quoted either way.
std::string attribute(const std::string& tag, const std::string& name) {
  const std::vector<std::string> values = attribute_values(tag, name, true);
  return values.empty() ? "" : values.front();
}

// A point gnuplot drew: where (its translate), how large (its scale), its colour and shape.
struct Marker {
  std::string at;
  double scale = 0;
  std::string colour;  // "rgb(78,121,167)"
  std::string shape;   // the symbol it uses
};

std::vector<Marker> markers(const std::string& svg) {
  std::vector<Marker> out;
  for (std::size_t at = svg.find("<use"); at != std::string::npos; at = svg.find("<use", at + 1)) {
    const std::string tag = svg.substr(at, svg.find('>', at) - at);
    const std::string transform = attribute(tag, "transform");
    const std::size_t scale = transform.find(" scale(");
    if (transform.rfind("translate(", 0) != 0 || scale == std::string::npos) continue;
    Marker m;
    m.at = transform.substr(0, scale);
    m.scale = std::stod(transform.substr(scale + 7));
    for (char c : attribute(tag, "color"))
      if (c != ' ') m.colour += c;
    m.shape = attribute(tag, "xlink:href");
    out.push_back(m);
  }
  return out;
}

TEST(CompareHtmlChromium, RendersEveryPlot) {
  const std::optional<std::string> chromium = find_on_path("chromium");
  if (!chromium) GTEST_SKIP() << "chromium not installed (scripts/install-deps.sh installs it)";

  const fs::path dir =
      fs::temp_directory_path() / ("mfabric-html-chromium-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Removed also when an assertion below ends the test early.
  struct RemoveAtEnd {
    fs::path path;
    ~RemoveAtEnd() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_at_end{dir};
  const fs::path page = dir / "report.html";
  const CompareResult result = with_rail_on_the_fat_tree(sample());
  {
    std::ofstream out(page, std::ios::binary);
    out << compare_html(result);
  }
  const fs::path shot = dir / "report.png";
  const std::string url = "file://" + page.string();
  const std::vector<std::string> common = {*chromium,          "--headless",
                                           "--no-sandbox",     "--disable-gpu",
                                           "--no-first-run",   "--disable-dev-shm-usage",
                                           "--hide-scrollbars"};
  std::vector<std::string> dump = common, screenshot = common;
  dump.push_back("--user-data-dir=" + (dir / "profile-dom").string());
  dump.insert(dump.end(), {"--dump-dom", url});
  screenshot.push_back("--user-data-dir=" + (dir / "profile-png").string());
  screenshot.insert(screenshot.end(),
                    {"--screenshot=" + shot.string(), "--window-size=1400,4000", url});
  // Both at once: each Chromium spends most of its time starting up.
  const Child dom_child = start(dump, dir / "dom.html", dir / "dom.err");
  const Child png_child = start(screenshot, dir / "png.out", dir / "png.err");
  const int dom_exit = finish(dom_child, std::chrono::seconds(60));
  const int png_exit = finish(png_child, std::chrono::seconds(60));
  ASSERT_EQ(dom_exit, 0) << slurp(dir / "dom.err");
  ASSERT_EQ(png_exit, 0) << slurp(dir / "png.err");

  // The DOM as Chromium parsed it: every figure with its svg (a broken escape would have
  // moved or dropped elements), and the table with the failed run.
  const std::string dom = slurp(dir / "dom.html");
  for (const char* id : kCompareFigureIds) {
    SCOPED_TRACE(id);
    const std::string f = figure(dom, id);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(count(f, "<svg"), 1u);
    EXPECT_GE(most_drawn_in_a_plot(f), 3u);
  }
  EXPECT_NE(dom.find("<tr class=\"failed\">"), std::string::npos);

  // The page opens with the verdict, before any figure: a sentence per model and link speed.
  const std::vector<std::string> verdict = expected_verdict(result);
  ASSERT_EQ(verdict.size(), 4u);
  for (const std::string& sentence : verdict) {
    const std::size_t at = dom.find("<p class=\"verdict\">" + dom_text(sentence) + "</p>");
    EXPECT_NE(at, std::string::npos) << sentence;
    EXPECT_LT(at, dom.find("<figure"));
  }
  EXPECT_NE(dom.find("runs (1 failed)"), std::string::npos);

  // The Pareto plot: a key entry per link speed, and every fabric's points drawn, one per run
  // and one in the key (gnuplot's colours of the page's fabric palette).
  const std::string pareto = figure(dom, "plot-cost-vs-time");
  for (const char* link : {">100 Gb/s<", ">400 Gb/s<"})
    EXPECT_NE(pareto.find(link), std::string::npos) << link;
  const std::vector<Marker> drawn = markers(pareto);
  const auto count_colour = [&](const std::string& colour) {
    return std::count_if(drawn.begin(), drawn.end(),
                         [&](const Marker& m) { return m.colour == colour; });
  };
  EXPECT_EQ(count_colour("rgb(78,121,167)"), 5) << "fat-tree";
  EXPECT_EQ(count_colour("rgb(242,142,43)"), 5) << "topo";
  EXPECT_EQ(count_colour("rgb(225,87,89)"), 5) << "mfabric";
  EXPECT_EQ(count_colour("rgb(118,183,178)"), 0) << "the failed run's fabric";
  EXPECT_EQ(count_colour("rgb(89,161,79)"), 5) << "rail-optimized";
  EXPECT_EQ(count_colour("rgb(85,85,85)"), 2) << "the link speeds' key entries";
  // Points at one place: those of different fabrics are drawn largest first, so that each shows
  // around the next; the fat-tree's and rail-optimized's do coincide, with both link speeds'
  // shapes.
  bool coincide = false;
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    std::set<std::string> colours = {drawn[i].colour}, shapes = {drawn[i].shape};
    for (std::size_t j = i + 1; j < drawn.size(); ++j) {
      if (drawn[j].at != drawn[i].at) continue;
      colours.insert(drawn[j].colour);
      shapes.insert(drawn[j].shape);
      if (drawn[j].colour != drawn[i].colour) {
        EXPECT_GT(drawn[i].scale, drawn[j].scale) << drawn[i].at << " " << drawn[j].colour;
      }
    }
    coincide |= colours.size() >= 2 && shapes.size() >= 2;
  }
  EXPECT_TRUE(coincide);
  // Each point carries its figures as a tooltip (16 runs in the plot).
  EXPECT_GE(count(pareto, "<title>"), 16u);
  EXPECT_NE(pareto.find("<title>qwen'moe, rail-optimized at 100 Gb/s: 5 s per iteration against "
                        "the fat-tree's 5 s (1.00x)"),
            std::string::npos);

  // The screenshot: a PNG of the window's size with something on it (a blank page of this
  // size compresses to a few KB).
  ASSERT_TRUE(fs::exists(shot));
  const std::string png = slurp(shot);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 1400u);
  EXPECT_EQ(be32(20), 4000u);
  EXPECT_GT(png.size(), 100u * 1024);
  if (const char* keep = std::getenv("MFABRIC_KEEP_REPORT")) {
    fs::copy_file(page, fs::path(keep) / "report.html", fs::copy_options::overwrite_existing);
    fs::copy_file(shot, fs::path(keep) / "report.png", fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace mfabric::report::compare_html_test
