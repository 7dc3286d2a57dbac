// The "optimal" planner (docs/control-plane.md): the smallest max_finish() exactly, by a search
// over thresholds, then the ports left over for the pairs below the bottleneck.
//
// Why a threshold search is exact: a pair's time only depends on its own circuit count and falls
// as the count grows, so "every pair finishes within T" holds iff giving each pair the fewest
// circuits that bring it within T, need(T), fits every server's working ports (ports_of(s),
// alpha without failures). need(T) only grows
// as T shrinks, so the feasible thresholds form an interval, and the optimum is one of the
// pair_finish(bytes, c) values, c = 0..alpha: the smallest feasible one.
#include <algorithm>
#include <cmath>

#include "control/planner_impl.h"

namespace mfabric::control::detail {
namespace {

// The fewest circuits (0..alpha) that bring the pair within t, or alpha + 1 when none does.
int circuits_needed(std::int64_t bytes, double t, const PlanLimits& limits) {
  if (pair_finish(bytes, 0, limits) <= t) return 0;
  const double bits = static_cast<double>(bytes) * 8.0;
  double estimate = std::ceil(bits / (limits.circuit_rate.bps() * t));
  if (!(estimate >= 1.0)) estimate = 1.0;
  if (estimate > static_cast<double>(limits.alpha) + 1.0) return limits.alpha + 1;
  int c = static_cast<int>(estimate);
  // The estimate may be off by one through rounding; settle it with the same pair_finish() the
  // candidates came from.
  while (c > 1 && pair_finish(bytes, c - 1, limits) <= t)
    --c;
  while (c <= limits.alpha && pair_finish(bytes, c, limits) > t)
    ++c;
  return c;
}

// need(t) for every pair when it fits every server's working ports, else false.
bool fits(const std::vector<DemandPair>& pairs, int servers, double t, const PlanLimits& limits,
          std::vector<int>& need) {
  std::vector<int> used(static_cast<std::size_t>(servers), 0);
  need.resize(pairs.size());
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const int c = circuits_needed(pairs[p].bytes, t, limits);
    if (c > limits.alpha) return false;
    need[p] = c;
    for (const int s : {pairs[p].i, pairs[p].j}) {
      if ((used[static_cast<std::size_t>(s)] += c) > limits.ports_of(s)) return false;
    }
  }
  return true;
}

class OptimalPlanner final : public Planner {
 public:
  std::string name() const override { return "optimal"; }

  CircuitPlan plan(const ServerDemand& demand, const PlanLimits& limits) const override {
    Allocation allocation(demand, limits);  // validates limits
    const std::vector<DemandPair>& pairs = allocation.pairs();
    if (pairs.empty()) return allocation.to_plan();

    std::vector<double> candidates;
    candidates.reserve(pairs.size() * static_cast<std::size_t>(limits.alpha + 1));
    for (const DemandPair& p : pairs) {
      for (int c = 0; c <= limits.alpha; ++c)
        candidates.push_back(pair_finish(p.bytes, c, limits));
    }
    // The smallest feasible candidate, by selection (no full sort): the largest candidate is
    // feasible (every pair within its own EPS time with no circuit).
    std::vector<int> need;
    auto lo = candidates.begin();
    auto hi = candidates.end();  // the answer lies in [lo, hi)
    double best = *std::max_element(lo, hi);
    while (lo != hi) {
      auto mid = lo + (hi - lo) / 2;
      std::nth_element(lo, mid, hi);
      if (fits(pairs, demand.servers(), *mid, limits, need)) {
        best = *mid;
        hi = mid;  // the answer is *mid or smaller
      } else {
        lo = mid + 1;
      }
    }
    fits(pairs, demand.servers(), best, limits, need);
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      for (int k = 0; k < need[p]; ++k)
        allocation.add(p);
    }
    // The max is settled; the ports left serve the other pairs, bottleneck first.
    run_greedy(allocation, limits, GreedyKey::Objective, /*stop_at_first_blocked=*/false);
    return allocation.to_plan();
  }
};

}  // namespace

std::unique_ptr<Planner> make_optimal_planner() {
  return std::make_unique<OptimalPlanner>();
}

}  // namespace mfabric::control::detail
