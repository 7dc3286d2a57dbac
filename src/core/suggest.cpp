#include "core/suggest.h"

#include <algorithm>

namespace mfabric {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Three rows of the optimal-string-alignment table: the one before the previous is what a
  // transposition of two neighbours ("otu" for "out", one slip of the fingers) steps back to.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
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
  // The nearest (the first of equally near ones): "deepseek-v4" meant deepseek-v3 (1 edit), not
  // deepseek-r1 (2), whichever is listed first.
  std::optional<std::string> nearest;
  std::size_t best = max_edits + 1;
  for (const std::string& name : names) {
    // The distance is at least the difference in length.
    const std::size_t longer = std::max(word.size(), name.size());
    const std::size_t shorter = std::min(word.size(), name.size());
    if (longer - shorter >= best) continue;
    const std::size_t d = edit_distance(word, name);
    if (d < best) {
      best = d;
      nearest = name;
    }
  }
  return nearest;
}

}  // namespace mfabric
