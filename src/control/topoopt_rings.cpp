// TotientPerms (TopoOpt section 4): ring permutations for the ring groups.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "control/topoopt_steps.h"

namespace mfabric::control::detail {

namespace {

// Local search evaluates at most about this many BFS steps per pass over one stride position;
// beyond it only every k-th candidate stride is tried (large groups).
constexpr std::int64_t kSearchBudgetPerPosition = 4'000'000;
constexpr int kSearchPasses = 8;

int ring_cost(std::size_t members) {
  return members == 2 ? 1 : 2;
}

}  // namespace

std::vector<int> coprime_strides(int m) {
  std::vector<int> result;
  if (m < 2) return result;
  if (m == 2) return {1};
  for (int p = 1; p <= m / 2; ++p) {
    if (std::gcd(p, m) == 1) result.push_back(p);
  }
  return result;
}

CirculantScore circulant_score(int m, const std::vector<int>& strides) {
  CirculantScore score;
  if (m <= 1) return score;
  std::vector<int> dist(static_cast<std::size_t>(m), -1);
  std::vector<int> queue;
  queue.reserve(static_cast<std::size_t>(m));
  dist[0] = 0;
  queue.push_back(0);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int v = queue[head];
    for (const int p : strides) {
      for (const int w : {(v + p) % m, ((v - p) % m + m) % m}) {
        if (dist[static_cast<std::size_t>(w)] >= 0) continue;
        dist[static_cast<std::size_t>(w)] = dist[static_cast<std::size_t>(v)] + 1;
        queue.push_back(w);
      }
    }
  }
  if (static_cast<int>(queue.size()) < m) return CirculantScore{-1, 0};
  for (const int d : dist) {
    score.diameter = std::max(score.diameter, d);
    score.total_distance += d;
  }
  return score;
}

std::vector<int> ring_strides(int m, int rings, bool search) {
  std::vector<int> result;
  if (rings <= 0 || m < 2) return result;
  const std::vector<int> candidates = coprime_strides(m);
  const int distinct = std::min(rings, static_cast<int>(candidates.size()));

  // Geometric start (TopoOpt picks strides close to a geometric sequence): with u strides
  // 1, b, b^2, ... and b = m^(1/u), every offset is a few steps of each.
  std::vector<int> chosen{1};
  for (int k = 1; k < distinct; ++k) {
    const double target = std::pow(static_cast<double>(m), static_cast<double>(k) / distinct);
    const auto unused = [&](int c) {
      return std::find(chosen.begin(), chosen.end(), c) == chosen.end();
    };
    // The first unused candidate at or above the target, else the largest unused one.
    const auto above = std::lower_bound(candidates.begin(), candidates.end(),
                                        static_cast<int>(std::lround(target)));
    auto pick = std::find_if(above, candidates.end(), unused);
    if (pick == candidates.end()) {
      pick = std::find_if(candidates.rbegin(), candidates.rend(), unused).base() - 1;
    }
    chosen.push_back(*pick);
  }

  if (search && distinct > 1) {
    const auto cost_per_try = static_cast<std::int64_t>(m) * distinct;
    const auto tries = static_cast<std::int64_t>(candidates.size());
    const std::int64_t step = std::max<std::int64_t>(
        1, (tries * cost_per_try + kSearchBudgetPerPosition - 1) / kSearchBudgetPerPosition);
    CirculantScore best = circulant_score(m, chosen);
    for (int pass = 0; pass < kSearchPasses; ++pass) {
      bool improved = false;
      // Stride 1 stays: it is the ring in member order, the one ring collectives walk.
      for (std::size_t k = 1; k < chosen.size(); ++k) {
        for (std::size_t c = 0; c < candidates.size(); c += static_cast<std::size_t>(step)) {
          const int stride = candidates[c];
          if (std::find(chosen.begin(), chosen.end(), stride) != chosen.end()) continue;
          std::vector<int> trial = chosen;
          trial[k] = stride;
          const CirculantScore score = circulant_score(m, trial);
          if (score.diameter >= 0 && score < best) {
            best = score;
            chosen = std::move(trial);
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
  }
  std::sort(chosen.begin() + 1, chosen.end());
  for (int r = 0; r < rings; ++r) {
    result.push_back(chosen[static_cast<std::size_t>(r % distinct)]);
  }
  return result;
}

std::vector<RingPlan> place_rings(const JobDemand& demand, int ring_degree, bool stride_search,
                                  PanelDraft& draft) {
  std::vector<std::size_t> order;
  for (std::size_t g = 0; g < demand.rings.size(); ++g) {
    if (demand.rings[g].network_bytes.count() > 0 && demand.rings[g].servers.size() >= 2) {
      order.push_back(g);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return demand.rings[x].network_bytes > demand.rings[y].network_bytes;
  });

  std::vector<int> used(static_cast<std::size_t>(draft.servers()), 0);
  std::vector<int> count(demand.rings.size(), 0);
  const auto fits = [&](std::size_t g) {
    const int cost = ring_cost(demand.rings[g].servers.size());
    return std::all_of(demand.rings[g].servers.begin(), demand.rings[g].servers.end(), [&](int s) {
      return used[static_cast<std::size_t>(s)] + cost <= ring_degree;
    });
  };
  const auto take = [&](std::size_t g) {
    const int cost = ring_cost(demand.rings[g].servers.size());
    for (const int s : demand.rings[g].servers)
      used[static_cast<std::size_t>(s)] += cost;
    ++count[g];
  };
  // One ring for every group first (TopoOpt gives every group at least one), heaviest first.
  for (const std::size_t g : order) {
    if (fits(g)) take(g);
  }
  // Then the remaining ring NICs in proportion to bytes (highest bytes / (rings + 1) next).
  for (;;) {
    std::size_t best = order.size();
    double best_value = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::size_t g = order[i];
      if (count[g] == 0 || !fits(g)) continue;
      const double value =
          static_cast<double>(demand.rings[g].network_bytes.count()) / (count[g] + 1);
      if (best == order.size() || value > best_value) {
        best = i;
        best_value = value;
      }
    }
    if (best == order.size()) break;
    take(order[best]);
  }

  std::vector<RingPlan> plans;
  for (const std::size_t g : order) {
    if (count[g] == 0) continue;
    RingPlan plan;
    plan.demand = static_cast<int>(g);
    plan.servers = demand.rings[g].servers;
    const int m = static_cast<int>(plan.servers.size());
    plan.strides = ring_strides(m, count[g], stride_search);
    plan.diameter = circulant_score(m, plan.strides).diameter;
    const int ring_index = static_cast<int>(plans.size());
    for (const int p : plan.strides) {
      const int links = m == 2 ? 1 : m;
      for (int i = 0; i < links; ++i) {
        draft.add(DraftLink{plan.servers[static_cast<std::size_t>(i)],
                            plan.servers[static_cast<std::size_t>((i + p) % m)], LinkPurpose::Ring,
                            ring_index, p});
      }
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace mfabric::control::detail
