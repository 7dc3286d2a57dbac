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

// The same for flows that use channels several times over: flow f on channel c takes
// coefficient x rate of it (`coefficients` per flow, in route order; a flow absent from it uses
// each channel once). Progressive filling raises every unfixed flow's rate together; a channel
// fills when capacity left = share x the coefficients of its unfixed flows.
inline std::map<TransferId, double> reference_weighted_max_min(
    const std::map<TransferId, std::vector<ChannelId>>& paths,
    const std::map<TransferId, std::vector<double>>& coefficients, const std::vector<double>& cap) {
  const auto coefficient = [&](TransferId id, std::size_t i) {
    const auto it = coefficients.find(id);
    return it == coefficients.end() ? 1.0 : it->second[i];
  };
  std::vector<double> left = cap;
  std::vector<double> weight(cap.size(), 0.0);
  for (const auto& [id, p] : paths) {
    for (std::size_t i = 0; i < p.size(); ++i)
      weight[static_cast<std::size_t>(p[i])] += coefficient(id, i);
  }
  std::map<TransferId, double> rate;
  for (;;) {
    double best = INFINITY;
    std::size_t at = cap.size();
    for (std::size_t c = 0; c < cap.size(); ++c) {
      if (weight[c] > 1e-9 && left[c] / weight[c] < best) {
        best = left[c] / weight[c];
        at = c;
      }
    }
    if (at == cap.size()) break;
    for (const auto& [id, p] : paths) {
      if (rate.count(id) != 0) continue;
      bool crosses = false;
      for (ChannelId c : p)
        crosses = crosses || static_cast<std::size_t>(c) == at;
      if (!crosses) continue;
      rate[id] = best;
      for (std::size_t i = 0; i < p.size(); ++i) {
        const auto c = static_cast<std::size_t>(p[i]);
        left[c] = std::max(0.0, left[c] - best * coefficient(id, i));
        weight[c] -= coefficient(id, i);
      }
    }
    weight[at] = 0;
  }
  return rate;
}

}  // namespace mfabric::net::testing
