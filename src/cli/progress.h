// Progress of a long command on stderr when it is a terminal (plain output stays clean when
// redirected): "compare: 12/100 runs, 95s elapsed, about 700s left", rewritten in place and
// erased at the end.
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
  // `label`: what runs ("compare", "sweep (rank 1 of 2)"); `noun`: what it counts ("runs").
  ProgressLine(std::string label, std::string noun)
      : enabled_(::isatty(STDERR_FILENO) != 0),
        label_(std::move(label)),
        noun_(std::move(noun)),
        start_(Clock::now()) {}
  void operator()(int done, int total) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double left = done > 0 ? elapsed / done * (total - done) : 0;
    const std::string line = fmt::format("{}: {}/{} {}, {:.0f}s elapsed, about {:.0f}s left",
                                         label_, done, total, noun_, elapsed, left);
    width_ = std::max(width_, line.size());
    std::cerr << "\r" << line << std::string(width_ - line.size(), ' ') << std::flush;
  }
  ~ProgressLine() {
    if (width_ > 0) std::cerr << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  std::string label_;
  std::string noun_;
  std::size_t width_ = 0;
  Clock::time_point start_;
};

}  // namespace mfabric::cli
