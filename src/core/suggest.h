// "Did you mean": the name a mistyped word most likely meant, for messages about unknown YAML
// fields, subcommands and options.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mfabric {

// The only one of `names` that `word` (3 characters or more) is the start of ("comp":
// "compare"), or else the nearest within `max_edits` edits (edit_distance) of it, the first of equally near ones; nullopt when none.
// A name much longer or shorter than `word` is skipped without computing its distance, so that
// a hostile megabyte-long word costs no more than its length.
std::optional<std::string> closest_name(const std::string& word,
                                        const std::vector<std::string>& names,
                                        std::size_t max_edits = 2);

// Edits between a and b: single-character inserts, deletes, replacements and swaps of two
// neighbouring characters (the optimal string alignment distance).
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace mfabric
