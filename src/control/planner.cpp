// What every planner shares: limits, the plan, the objective, the registry.
#include "control/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "control/planner_impl.h"
#include "core/error.h"

namespace mfabric::control {

void PlanLimits::validate() const {
  fabric::check_alpha(alpha, kMaxAlpha + 1);  // the servers' NICs are not known here
  const auto check_rate = [](Rate rate, const char* field) {
    if (!std::isfinite(rate.bps()) || rate.bps() <= 0) {
      throw Error("", field, fmt::format("expected a positive rate, got {} bit/s", rate.bps()));
    }
  };
  check_rate(circuit_rate, "circuit_rate");
  check_rate(eps_rate, "eps_rate");
  for (std::size_t s = 0; s < ports.size(); ++s) {
    if (ports[s] < 0 || ports[s] > alpha) {
      throw Error(
          "", fmt::format("ports[{}]", s),
          fmt::format("expected 0 to alpha = {} working OCS ports, got {}", alpha, ports[s]));
    }
  }
}

void PlanLimits::validate(int servers) const {
  validate();
  if (!ports.empty() && ports.size() != static_cast<std::size_t>(servers)) {
    throw Error("", "ports",
                fmt::format("expected one entry per server of the region ({}), got {}", servers,
                            ports.size()));
  }
}

Rate eps_pair_rate(int nics, int alpha, Rate link, int servers) {
  const double eps_nics = static_cast<double>(std::max(nics - alpha, 0));
  return link * eps_nics / static_cast<double>(std::max(servers - 1, 1));
}

PlanLimits region_limits(int alpha, int nics, Rate link, int servers) {
  return PlanLimits{
      .alpha = alpha, .circuit_rate = link, .eps_rate = eps_pair_rate(nics, alpha, link, servers)};
}

int CircuitPlan::circuits_between(int a, int b) const {
  const int i = std::min(a, b);
  const int j = std::max(a, b);
  const auto it = std::lower_bound(circuits.begin(), circuits.end(), std::pair{i, j},
                                   [](const Circuit& c, const std::pair<int, int>& key) {
                                     return std::pair{c.i, c.j} < key;
                                   });
  return it != circuits.end() && it->i == i && it->j == j ? it->count : 0;
}

int CircuitPlan::total_circuits() const {
  int sum = 0;
  for (const Circuit& c : circuits)
    sum += c.count;
  return sum;
}

double pair_finish(std::int64_t bytes, int circuits, const PlanLimits& limits) {
  if (bytes <= 0) return 0.0;
  const double bits = static_cast<double>(bytes) * 8.0;
  if (circuits <= 0) return bits / limits.eps_rate.bps();
  return bits / (static_cast<double>(circuits) * limits.circuit_rate.bps());
}

double max_finish(const ServerDemand& demand, const CircuitPlan& plan, const PlanLimits& limits) {
  double worst = 0.0;
  for (const DemandPair& p : demand.pairs()) {
    worst = std::max(worst, pair_finish(p.bytes, plan.circuits_between(p.i, p.j), limits));
  }
  return worst;
}

void check_plan(const ServerDemand& demand, const CircuitPlan& plan, const PlanLimits& limits) {
  const int n = demand.servers();
  limits.validate(n);
  if (plan.servers != n || plan.ports_used.size() != static_cast<std::size_t>(n)) {
    throw Error("", "plan",
                fmt::format("the plan is for {} servers, the demand has {}", plan.servers, n));
  }
  std::vector<int> used(static_cast<std::size_t>(n), 0);
  for (std::size_t k = 0; k < plan.circuits.size(); ++k) {
    const Circuit& c = plan.circuits[k];
    if (c.i < 0 || c.i >= c.j || c.j >= n || c.count < 1) {
      throw Error("", "plan",
                  fmt::format("circuit {} joins servers {} and {} {} times: expected 0 <= i < j "
                              "< {} and a positive count",
                              k, c.i, c.j, c.count, n));
    }
    if (k > 0 && std::pair{plan.circuits[k - 1].i, plan.circuits[k - 1].j} >= std::pair{c.i, c.j}) {
      throw Error("", "plan", "circuits are not in increasing (i, j) order");
    }
    used[static_cast<std::size_t>(c.i)] += c.count;
    used[static_cast<std::size_t>(c.j)] += c.count;
  }
  for (int s = 0; s < n; ++s) {
    const int u = used[static_cast<std::size_t>(s)];
    if (u > limits.ports_of(s) || u != plan.ports_used[static_cast<std::size_t>(s)]) {
      const std::string most = limits.ports.empty() ? fmt::format("alpha = {}", limits.alpha)
                                                    : fmt::format("{} working ports (alpha = {})",
                                                                  limits.ports_of(s), limits.alpha);
      throw Error("", "plan",
                  fmt::format("server {} has {} circuits (ports_used says {}), at most {}", s, u,
                              plan.ports_used[static_cast<std::size_t>(s)], most));
    }
  }
}

PlannerRegistry& planners() {
  static PlannerRegistry registry(
      "planner",
      {
          {"greedy",
           "Algorithm 1 as the authors' simulator runs it: a bottleneck pair without a free port "
           "is "
           "skipped and the next one served",
           [] { return detail::make_greedy_planner(false); }},
          {"greedy-paper", "the printed Algorithm 1: stops at the first bottleneck it cannot serve",
           [] { return detail::make_greedy_planner(true); }},
          {"optimal",
           "the smallest max-finish exactly (threshold search), leftover ports as greedy",
           detail::make_optimal_planner},
          {"exact", "the min-max integer program solved with GLPK, regions of at most 16 servers",
           detail::make_exact_planner},
      });
  return registry;
}

std::vector<std::string> planner_names() {
  return planners().names();
}

std::unique_ptr<Planner> make_planner(const std::string& name) {
  return with_context("", "algorithm", [&] { return planners().at(name).factory(); });
}

namespace detail {

Allocation::Allocation(const ServerDemand& demand, const PlanLimits& limits)
    : servers_(demand.servers()), pairs_(demand.pairs()), circuits_(pairs_.size(), 0) {
  limits.validate(servers_);
  free_.reserve(static_cast<std::size_t>(servers_));
  for (int s = 0; s < servers_; ++s) {
    free_.push_back(limits.ports_of(s));
    if (free_.back() > 0) ++open_servers_;
  }
}

void Allocation::add(std::size_t p) {
  ++circuits_[p];
  for (const int s : {pairs_[p].i, pairs_[p].j}) {
    if (--free_[static_cast<std::size_t>(s)] == 0) --open_servers_;
  }
}

CircuitPlan Allocation::to_plan() const {
  CircuitPlan plan;
  plan.servers = servers_;
  plan.ports_used.assign(static_cast<std::size_t>(servers_), 0);
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    if (circuits_[p] == 0) continue;
    plan.circuits.push_back({pairs_[p].i, pairs_[p].j, circuits_[p]});
    plan.ports_used[static_cast<std::size_t>(pairs_[p].i)] += circuits_[p];
    plan.ports_used[static_cast<std::size_t>(pairs_[p].j)] += circuits_[p];
  }
  return plan;
}

namespace {

struct HeapEntry {
  double key;
  std::int64_t bytes;
  std::uint32_t pair;  // index into pairs(), which are in (i, j) order
};

// Orders the heap so that its top is the bottleneck: larger key, then larger demand, then
// smaller (i, j), i.e. smaller pair index.
bool lower_priority(const HeapEntry& a, const HeapEntry& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.pair > b.pair;
}

double key_of(GreedyKey key, std::int64_t bytes, int circuits, const PlanLimits& limits) {
  if (key == GreedyKey::Paper && circuits == 0) return std::numeric_limits<double>::infinity();
  return pair_finish(bytes, circuits, limits);
}

// The greedy's heap. Pairs with a full end can never take a circuit again; popping them one by
// one costs O(log P) each and dominates on large dense regions, so they are swept out in bulk
// (O(size)) once an estimate says they make up half the heap. The estimate adds, when a server
// fills up, the entries that touch it; it counts a pair with both ends full twice, so at a
// sweep at least a quarter of the heap goes, and all sweeps together cost O(P).
class GreedyHeap {
 public:
  GreedyHeap(const Allocation& allocation, GreedyKey key, const PlanLimits& limits)
      : allocation_(allocation) {
    const std::vector<DemandPair>& pairs = allocation.pairs();
    entries_.reserve(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      // A pair with a full end can never take a circuit (ports never free up): not a candidate.
      // This only matters to the printed variant, which would stop at it; on a fresh allocation
      // it is a pair with an end whose every port failed, never one of a region without failures
      // (alpha >= 1), so plans without failures are unchanged.
      if (!allocation.can_add(p)) continue;
      entries_.push_back({key_of(key, pairs[p].bytes, allocation.circuits(p), limits),
                          pairs[p].bytes, static_cast<std::uint32_t>(p)});
    }
    rebuild();
  }

  bool empty() const { return entries_.empty(); }
  HeapEntry pop() {
    std::pop_heap(entries_.begin(), entries_.end(), lower_priority);
    const HeapEntry top = entries_.back();
    entries_.pop_back();
    touch(top.pair, -1);
    return top;
  }
  void push(const HeapEntry& e) {
    entries_.push_back(e);
    std::push_heap(entries_.begin(), entries_.end(), lower_priority);
    touch(e.pair, +1);
  }
  // A server ran out of ports: its entries are dead.
  void server_full(int server) {
    dead_estimate_ += touching_[static_cast<std::size_t>(server)];
    if (2 * dead_estimate_ > entries_.size()) {
      std::erase_if(entries_, [&](const HeapEntry& e) { return !allocation_.can_add(e.pair); });
      rebuild();
    }
  }

 private:
  void rebuild() {
    std::make_heap(entries_.begin(), entries_.end(), lower_priority);
    touching_.assign(static_cast<std::size_t>(allocation_.servers()), 0);
    for (const HeapEntry& e : entries_)
      touch(e.pair, +1);
    dead_estimate_ = 0;
  }
  void touch(std::uint32_t p, int delta) {
    const DemandPair& pair = allocation_.pairs()[p];
    touching_[static_cast<std::size_t>(pair.i)] += static_cast<std::size_t>(delta);
    touching_[static_cast<std::size_t>(pair.j)] += static_cast<std::size_t>(delta);
  }

  const Allocation& allocation_;
  std::vector<HeapEntry> entries_;
  std::vector<std::size_t> touching_;  // per server: entries of pairs that end there
  std::size_t dead_estimate_ = 0;
};

}  // namespace

void run_greedy(Allocation& allocation, const PlanLimits& limits, GreedyKey key,
                bool stop_at_first_blocked) {
  GreedyHeap heap(allocation, key, limits);
  // A circuit needs two servers with a free port; once fewer remain no pair can take one.
  while (!heap.empty() && allocation.servers_with_free_ports() >= 2) {
    HeapEntry top = heap.pop();
    const int next = allocation.circuits(top.pair) + 1;
    const bool improves = key == GreedyKey::Paper || pair_finish(top.bytes, next, limits) < top.key;
    if (!allocation.can_add(top.pair) || !improves) {
      if (stop_at_first_blocked) return;
      continue;
    }
    allocation.add(top.pair);
    top.key = key_of(key, top.bytes, next, limits);
    heap.push(top);
    const DemandPair& pair = allocation.pairs()[top.pair];
    // The printed variant must meet its first blocked pair, so it never sweeps; it stops there
    // anyway.
    for (const int s : {pair.i, pair.j}) {
      if (!stop_at_first_blocked && allocation.free_ports(s) == 0) heap.server_full(s);
    }
  }
}

}  // namespace detail
}  // namespace mfabric::control
