#include "core/suggest.h"

#include <algorithm>

namespace mfabric {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_name(const std::string& word,
                                        const std::vector<std::string>& names,
                                        std::size_t max_edits) {
  if (word.size() >= 3) {
    std::optional<std::string> only;
    for (const std::string& name : names) {
      if (name.size() > word.size() && name.compare(0, word.size(), word) == 0) {
        if (only) {
          only.reset();  // ambiguous
          break;
        }
        only = name;
      }
    }
    if (only) return only;
  }
  for (const std::string& name : names) {
    // The distance is at least the difference in length.
    const std::size_t longer = std::max(word.size(), name.size());
    const std::size_t shorter = std::min(word.size(), name.size());
    if (longer - shorter > max_edits) continue;
    if (edit_distance(word, name) <= max_edits) return name;
  }
  return std::nullopt;
}

}  // namespace mfabric
