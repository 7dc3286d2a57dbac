// Progress of a long command on stderr: "compare: 12/100 runs, 95s elapsed, about 700s left".
// On a terminal the line is rewritten in place and erased by finish(), which the command calls
// before it prints any result (so that a result never starts after a half-line of progress). On
// a pipe or a file (CI logs, `2> log`), whole lines, at most one per kPipeInterval and the last
// one, so that a log shows a long run advancing without a line per step.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>

namespace mfabric::cli {

class ProgressLine {
 public:
  static constexpr std::chrono::seconds kPipeInterval{10};

  // `label`: what runs ("compare", "sweep (rank 1 of 2)"); `quiet` (--quiet): show nothing.
  explicit ProgressLine(std::string label, bool quiet = false)
      : terminal_(::isatty(STDERR_FILENO) != 0),
        label_(std::move(label)),
        start_(Clock::now()),
        quiet_(quiet),
        finished_(quiet) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // "DONE/TOTAL NOUN, Es elapsed, about Ls left" (no estimate before the first is done).
  // Nothing for nothing to do; on a pipe, nothing before the first is done (the command's
  // opening line says what starts).
  void count(long long done, long long total, const char* noun) {
    if (total <= 0 || (!terminal_ && done == 0)) return;
    const double elapsed = elapsed_s();
    std::string status = fmt::format("{}/{} {}, {} elapsed", done, total, noun, seconds(elapsed));
    if (done > 0 && done < total) {
      status += fmt::format(", about {} left", seconds(elapsed / static_cast<double>(done) *
                                                       static_cast<double>(total - done)));
    }
    show(status, done >= total);
  }

  // Shows `status` after the label; `last` forces the line out on a pipe.
  void show(const std::string& status, bool last = false) {
    if (finished_) return;
    const std::string line = label_ + ": " + status;
    if (terminal_) {
      width_ = std::max(width_, line.size());
      std::cerr << "\r" << line << std::string(width_ - line.size(), ' ') << std::flush;
      return;
    }
    const auto now = Clock::now();
    if (!last && printed_ && now - last_print_ < kPipeInterval) return;
    if (last && line == last_line_) return;
    printed_ = true;
    last_print_ = now;
    last_line_ = line;
    std::cerr << line << "\n" << std::flush;
  }

  // Says `line` as a line of its own (a command's opening line), unless quiet.
  void say(const std::string& line) {
    if (quiet_) return;
    std::cerr << line << "\n" << std::flush;
  }

  // Erases the line on a terminal; nothing more is shown after.
  void finish() {
    if (finished_) return;
    finished_ = true;
    if (terminal_ && width_ > 0)
      std::cerr << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // "42s", "12.5min", "1.3h": one unit, chosen by size.
  static std::string seconds(double s) {
    if (s < 99.5) return fmt::format("{:.0f}s", s);
    if (s < 5940) return fmt::format("{:.1f}min", s / 60);
    return fmt::format("{:.1f}h", s / 3600);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_;
  std::string label_;
  Clock::time_point start_;
  bool quiet_;
  bool finished_;
  std::size_t width_ = 0;
  bool printed_ = false;
  Clock::time_point last_print_;
  std::string last_line_;
};

}  // namespace mfabric::cli
