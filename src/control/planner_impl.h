// Internal to the planners: the allocation they build up and the greedy loop they share.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "control/planner.h"

namespace mfabric::control::detail {

// Circuits per demand pair and free OCS ports per server, while a planner works.
class Allocation {
 public:
  // No circuits yet; server s has limits.ports_of(s) free ports. Validates limits against the
  // demand's servers (mfabric::Error).
  Allocation(const ServerDemand& demand, const PlanLimits& limits);

  int servers() const { return servers_; }
  const std::vector<DemandPair>& pairs() const { return pairs_; }
  int circuits(std::size_t p) const { return circuits_[p]; }
  int free_ports(int server) const { return free_[static_cast<std::size_t>(server)]; }
  // Servers that still have a free port.
  int servers_with_free_ports() const { return open_servers_; }
  bool can_add(std::size_t p) const {
    return free_ports(pairs_[p].i) > 0 && free_ports(pairs_[p].j) > 0;
  }
  // One more circuit for pair p; the caller checked can_add(p).
  void add(std::size_t p);

  CircuitPlan to_plan() const;

 private:
  int servers_;
  std::vector<DemandPair> pairs_;
  std::vector<int> circuits_;
  std::vector<int> free_;
  int open_servers_ = 0;
};

// What the greedy loop ranks pairs by.
enum class GreedyKey {
  // Algorithm 1: +infinity for a pair without a circuit, bytes / circuits otherwise (as the
  // circuit time, which orders the same way).
  Paper,
  // The objective's pair_finish(): a pair without a circuit counts its EPS time. A pair is only
  // given a circuit when that lowers its time.
  Objective,
};

// Repeatedly takes the bottleneck pair (largest key; ties: larger demand, then smaller (i, j))
// and gives it a circuit when both ends have a free port. A pair that cannot take one is
// dropped (stop_at_first_blocked = false) or ends the loop (true: the printed Algorithm 1).
// Pairs that already have a full end when the loop starts (e.g. an end whose every port failed)
// are never candidates, so they never end the printed variant's loop.
void run_greedy(Allocation& allocation, const PlanLimits& limits, GreedyKey key,
                bool stop_at_first_blocked);

std::unique_ptr<Planner> make_greedy_planner(bool paper);
std::unique_ptr<Planner> make_optimal_planner();
std::unique_ptr<Planner> make_exact_planner();

}  // namespace mfabric::control::detail
