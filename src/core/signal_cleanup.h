// Removing half-written output when mfabric is interrupted. While a CleanupOnSignal is alive,
// SIGINT, SIGTERM and SIGHUP first run its steps (unlink / rmdir / rename of paths fixed when
// it was made: nothing but async-signal-safe system calls), then take their previous action
// (by default: terminate the process, so the shell still sees "killed by SIGINT"). A signal
// that was ignored when the guard was made stays ignored. Steps that fail (a path that does not
// exist yet or any more) are skipped, so the same steps fit every moment of a write.
//
// Only one guard may be alive at a time (output is written by one thread); SIGKILL and power
// loss cannot be caught: output_files.cpp removes their leftovers on the next write.
#pragma once

#include <string>
#include <vector>

namespace mfabric {

class CleanupOnSignal {
 public:
  enum class Op { Unlink, Rmdir, Rename };
  struct Step {
    Op op;
    std::string path;
    std::string to;  // Rename only
  };

  explicit CleanupOnSignal(std::vector<Step> steps);
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  std::vector<Step> steps_;
};

}  // namespace mfabric
