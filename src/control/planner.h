// Circuit planning for one region: how many OCS circuits join each pair of servers, given the
// region's demand and alpha OCS NICs per server (docs/control-plane.md). Planners share one
// interface and one objective, max_finish().
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "control/demand.h"
#include "core/registry.h"
#include "core/units.h"
#include "fabric/ocs_params.h"

namespace mfabric::control {

// Most OCS NICs per server a plan may use (fabric/ocs_params.h).
using fabric::kMaxAlpha;

struct PlanLimits {
  int alpha = 6;  // circuits per server: its OCS NICs
  // One circuit's rate (one NIC's link rate) and the rate a pair without a circuit gets over the
  // EPS (see eps_pair_rate()).
  Rate circuit_rate = Rate::gbps(400);
  Rate eps_rate = Rate::gbps(400) * 2.0 / 7.0;
  // Per region server: the OCS ports that work (failed NICs and ports held by a pinned relay
  // circuit taken away), 0..alpha. Empty: alpha for every server. When not empty it has one
  // entry per server of the demand (the planners check).
  std::vector<int> ports = {};

  // The circuits server s may take: ports[s], or alpha when ports is empty. s must be a server
  // of the region (0 <= s < ports.size() when ports is not empty).
  int ports_of(int server) const {
    return ports.empty() ? alpha : ports[static_cast<std::size_t>(server)];
  }

  // mfabric::Error naming the field unless 1 <= alpha <= kMaxAlpha, both rates are finite and
  // positive, and every entry of ports is 0..alpha.
  void validate() const;
  // validate(), and ports is empty or has one entry per server of a region of `servers`.
  void validate(int servers) const;
};

// The per-pair EPS rate of a region of `servers` servers with `nics` NICs of `link` each, alpha
// of them on the OCS: a server's nics - alpha EPS NICs shared evenly by its servers - 1 peers,
// (nics - alpha) x link / (servers - 1); with one server, (nics - alpha) x link. This is the
// share every pair gets when all pairs of the region send over the EPS at once (the fat-tree
// itself taken as non-blocking).
Rate eps_pair_rate(int nics, int alpha, Rate link, int servers);

// Limits for a region of mFabric servers: alpha circuits of one `link` each, the EPS rate of
// eps_pair_rate().
PlanLimits region_limits(int alpha, int nics, Rate link, int servers);

// Circuits between servers i < j.
struct Circuit {
  int i = 0;
  int j = 0;
  int count = 0;
};

struct CircuitPlan {
  int servers = 0;
  std::vector<Circuit> circuits;  // (i, j) order, count >= 1
  std::vector<int> ports_used;    // per server: circuits that end there

  // Circuits between a and b (either order); 0 when none.
  int circuits_between(int a, int b) const;
  int total_circuits() const;
};

// The time in seconds a pair's demand takes: bytes / (circuits x circuit_rate) with circuits,
// bytes / eps_rate without; 0 without demand.
double pair_finish(std::int64_t bytes, int circuits, const PlanLimits& limits);

// The planners' objective: the largest pair_finish() over the pairs with demand, in seconds.
double max_finish(const ServerDemand& demand, const CircuitPlan& plan, const PlanLimits& limits);

// mfabric::Error (field "plan") when the plan does not fit the demand's region or gives a server
// more than limits.ports_of(server) circuits (field "ports" when limits.ports does not have one
// entry per server).
void check_plan(const ServerDemand& demand, const CircuitPlan& plan, const PlanLimits& limits);

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // Never more than limits.ports_of(s) circuits at server s; only pairs of the demand's region.
  // Deterministic. limits are validated, limits.ports against the demand's servers
  // (mfabric::Error). A pair with an end without working ports is never a candidate.
  virtual CircuitPlan plan(const ServerDemand& demand, const PlanLimits& limits) const = 0;
};

// The planners by name, one line each in control/planner.cpp: greedy (the default),
// greedy-paper, optimal, exact. A new planner is control/<name>_planner.cpp plus a line there.
using PlannerRegistry = Registry<std::function<std::unique_ptr<Planner>()>>;
PlannerRegistry& planners();

// The planner named `name`; mfabric::Error (field "algorithm") listing the known ones otherwise.
std::unique_ptr<Planner> make_planner(const std::string& name);
std::vector<std::string> planner_names();
inline constexpr const char* kDefaultPlanner = "greedy";

// Servers the exact (integer program) planner accepts.
inline constexpr int kMaxExactServers = 16;

}  // namespace mfabric::control
