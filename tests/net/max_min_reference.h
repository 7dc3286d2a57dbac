// An independent max-min fair allocation for the flow backend's and its solver's tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <map>
#include <vector>

#include "net/backend.h"

namespace mfabric::net::testing {

// Max-min fair rates by plain progressive filling: repeatedly the channel with the smallest
// fair share (capacity left / flows not yet fixed) fixes its flows at that share.
inline std::map<TransferId, double> reference_max_min(
    const std::map<TransferId, std::vector<ChannelId>>& paths, const std::vector<double>& cap) {
  std::vector<TransferId> ids;
  std::vector<std::vector<std::size_t>> on(cap.size());
  for (const auto& [id, p] : paths) {
    for (ChannelId c : p)
      on[static_cast<std::size_t>(c)].push_back(ids.size());
    ids.push_back(id);
  }
  std::vector<double> left = cap;
  std::vector<int> unfixed(cap.size());
  for (std::size_t c = 0; c < cap.size(); ++c)
    unfixed[c] = static_cast<int>(on[c].size());
  std::vector<bool> fixed(ids.size(), false);
  std::map<TransferId, double> rate;
  for (;;) {
    double best = INFINITY;
    std::size_t at = cap.size();
    for (std::size_t c = 0; c < cap.size(); ++c) {
      if (unfixed[c] > 0 && left[c] / unfixed[c] < best) {
        best = left[c] / unfixed[c];
        at = c;
      }
    }
    if (at == cap.size()) break;
    for (std::size_t i : on[at]) {
      if (fixed[i]) continue;
      fixed[i] = true;
      rate[ids[i]] = best;
      for (ChannelId c : paths.at(ids[i])) {
        left[static_cast<std::size_t>(c)] = std::max(0.0, left[static_cast<std::size_t>(c)] - best);
        --unfixed[static_cast<std::size_t>(c)];
      }
    }
  }
  return rate;
}

}  // namespace mfabric::net::testing
