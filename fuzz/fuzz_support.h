// What every harness shares: the fuzz input as a file the library's path API can read, and the
// one accepted outcome of bad input (mfabric::Error). Readers are fuzzed through their public
// path functions so that no library API exists only for fuzzing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// --- Repeat markers: small inputs that stand for deep or large ones ---------------------------
//
// libFuzzer's inputs are kept small (fuzz.sh's max_len: 64 to 4096 bytes) so that mutation stays
// fast, yet the parsers' hardest cases are deep (JSON nested 100,000 levels overflowed the stack)
// or large (a 240 MB demand row ran out of memory). Every text harness therefore expands its
// input before handing it to the library:
//
//   @@<count>(<segment>)@@   the segment, count times (count: 1 to 7 decimal digits, at most
//                            kMaxRepeat; 0 drops the segment). The segment is everything up to
//                            the first ")@@": markers do not nest.
//   @@#@@                    inside a segment: the copy's index, 0-based decimal, so that
//                            repeats can differ ("k@@#@@": distinct keys, ids, names)
//
// e.g. {"a": @@100000([)@@1@@100000(])@@} is 34 bytes that read as 100,000 nested arrays. Anything
// else is copied as it is, "@@" included, so inputs without markers (the seed corpora, the
// reproducers of earlier crashes) mean what they meant. The tokens are in every text harness's
// dictionary (fuzz/dict/*.dict), from which libFuzzer inserts them.
inline constexpr std::size_t kMaxRepeat = 1'000'000;
// The expansion of one input is at most this long, else the input is skipped (the harness returns
// -1, which keeps it out of the corpus). 4 MiB is above the largest input limit that a size cap
// cuts before parsing (YAML's 1 MiB, core/yaml_fields.h), so that the cap and what lies just
// under it are reached; it holds 100,000 levels of nesting (200 KB) and a row of a million
// numbers (2 MB); and it keeps one execution under ASan below about a second and a parsed
// document well under libFuzzer's 1 GiB RSS limit (fuzz.sh), so that a large input is not
// reported as an out-of-memory of its own.
inline constexpr std::size_t kMaxExpandedBytes = std::size_t{4} << 20;

// `raw` with its repeat markers expanded; nullopt if the result would be longer than max_bytes.
std::optional<std::string> expand_repeats(std::string_view raw,
                                          std::size_t max_bytes = kMaxExpandedBytes);

// The cap the harnesses expand under: kMaxExpandedBytes, or the environment's
// MFABRIC_FUZZ_MAX_EXPANDED (bytes) if that is smaller. fuzz.sh's smoke run (make test) sets it
// to 64 KiB: a tenth of its executions would otherwise expand past 100 KB, which made the smoke
// five times slower; 64 KiB still nests deeper than every depth limit. Campaigns and the
// regression replay use the full cap.
std::size_t max_expanded_bytes();

// The fuzz input as text with its repeat markers expanded (nullopt: skip the input).
inline std::optional<std::string> expanded_text(const std::uint8_t* data, std::size_t size) {
  return expand_repeats(as_text(data, size), max_expanded_bytes());
}

// The fuzz input, its repeat markers expanded, written to the scratch file `name`: its path, or
// nullopt when the expansion is over the cap (the harness then returns -1, skipping the input).
std::optional<std::string> expanded_scratch_file(const std::string& name, const std::uint8_t* data,
                                                 std::size_t size);

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
