// What every harness shares: the fuzz input as a file the library's path API can read, and the
// one accepted outcome of bad input (mfabric::Error). Readers are fuzzed through their public
// path functions so that no library API exists only for fuzzing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace mfabric::fuzz {

// A directory private to this process on tmpfs (/dev/shm when present, else $TMPDIR or /tmp),
// so that an execution writes no disk. Created on first use, removed at exit; directories left
// by crashed runs whose process is gone are removed on creation.
const std::string& scratch_dir();

// Writes `bytes` to scratch_dir()/name (replacing it) and returns the path.
std::string write_scratch(const std::string& name, std::string_view bytes);

// Removes scratch_dir()/name if present (a file of an earlier execution must not leak into this
// one, e.g. a Chakra rank that this input does not have).
void remove_scratch(const std::string& name);

// The raw input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits `text` at every `separator` (at most max_parts parts; the rest stays in the last).
std::vector<std::string_view> split(std::string_view text, std::string_view separator,
                                    std::size_t max_parts);

// Runs fn. mfabric::Error is the documented result of bad input and is swallowed; any other
// exception is not caught here nor anywhere above, so it ends the process from the throw site
// (std::terminate prints its type and what(); libFuzzer reports the abort as a crash with the
// throwing stack).
template <class F>
void expect_only_mfabric_errors(F&& fn) {
  try {
    fn();
  } catch (const mfabric::Error&) {
  }
}

// Aborts with a message: a property the library promises does not hold (libFuzzer reports it as
// a crash and saves the input).
[[noreturn]] void property_failed(const std::string& what);

}  // namespace mfabric::fuzz
