// Planning around failed OCS ports: per-server port limits in every planner (PlanLimits::ports)
// and unusable NICs in map_to_nics.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/nic_mapping.h"
#include "control/planner.h"
#include "control/synthetic_demand.h"
#include "core/error.h"
#include "core/rng.h"

namespace mfabric::control {
namespace failed_ports_test {
namespace {

// 1 byte/s circuits, 0.5 byte/s over the EPS: a pair's time is its bytes on one circuit, its
// bytes / c on c circuits, 2 x its bytes on the EPS.
PlanLimits unit_limits(int alpha, std::vector<int> ports = {}) {
  return PlanLimits{.alpha = alpha,
                    .circuit_rate = Rate::bytes_per_second(1.0),
                    .eps_rate = Rate::bytes_per_second(0.5),
                    .ports = std::move(ports)};
}

ServerDemand demand_of(int servers, const std::vector<DemandPair>& pairs) {
  ServerDemand d(servers);
  for (const DemandPair& p : pairs)
    d.add(p.i, p.j, p.bytes);
  return d;
}

CircuitPlan plan_by(const std::string& planner, const ServerDemand& d, const PlanLimits& l) {
  return make_planner(planner)->plan(d, l);
}

bool same_plan(const CircuitPlan& a, const CircuitPlan& b) {
  if (a.servers != b.servers || a.ports_used != b.ports_used) return false;
  if (a.circuits.size() != b.circuits.size()) return false;
  for (std::size_t k = 0; k < a.circuits.size(); ++k) {
    const Circuit& x = a.circuits[k];
    const Circuit& y = b.circuits[k];
    if (x.i != y.i || x.j != y.j || x.count != y.count) return false;
  }
  return true;
}

TEST(FailedPorts, PortsOfIsAlphaWithoutEntries) {
  EXPECT_EQ(unit_limits(3).ports_of(0), 3);
  EXPECT_EQ(unit_limits(3).ports_of(7), 3);
  EXPECT_EQ(unit_limits(3, {3, 0, 2}).ports_of(1), 0);
  EXPECT_EQ(unit_limits(3, {3, 0, 2}).ports_of(2), 2);
}

TEST(FailedPorts, PortsAreValidated) {
  EXPECT_NO_THROW(unit_limits(2, {0, 1, 2}).validate());
  try {
    unit_limits(2, {0, 3, 2}).validate();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "ports[1]");
  }
  EXPECT_THROW(unit_limits(2, {-1}).validate(), Error);
  // One entry per server of the demand, for every planner and for check_plan.
  const ServerDemand d = demand_of(3, {{0, 1, 10}});
  for (const std::string& name : planner_names()) {
    try {
      plan_by(name, d, unit_limits(2, {2, 2}));
      FAIL() << name << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "ports") << name;
    }
    EXPECT_THROW(plan_by(name, d, unit_limits(2, {2, 2, 5})), Error) << name;
  }
  const CircuitPlan plan = plan_by("greedy", d, unit_limits(2));
  EXPECT_THROW(check_plan(d, plan, unit_limits(2, {2, 2, 2, 2})), Error);
}

TEST(FailedPorts, APairLosesACircuitWithAFailedPort) {
  // Two servers, alpha 2, 10 bytes: two circuits (5 s); with one of server 0's ports failed,
  // one circuit (10 s), for every planner.
  const ServerDemand d = demand_of(2, {{0, 1, 10}});
  for (const std::string& name : planner_names()) {
    const PlanLimits full = unit_limits(2);
    EXPECT_EQ(plan_by(name, d, full).circuits_between(0, 1), 2) << name;
    const PlanLimits failed = unit_limits(2, {1, 2});
    const CircuitPlan p = plan_by(name, d, failed);
    EXPECT_EQ(p.circuits_between(0, 1), 1) << name;
    EXPECT_EQ(p.ports_used, (std::vector<int>{1, 1})) << name;
    EXPECT_DOUBLE_EQ(max_finish(d, p, failed), 10.0) << name;
    EXPECT_NO_THROW(check_plan(d, p, failed)) << name;
    // The full plan breaks the failed server's limit.
    EXPECT_THROW(check_plan(d, plan_by(name, d, full), failed), Error) << name;
  }
}

TEST(FailedPorts, AServerWithoutWorkingPortsIsNoCandidateAndDoesNotStopThePaperGreedy) {
  // alpha 2; server 0 has no working port. (0, 1) = 100 is the bottleneck but can never have a
  // circuit: it is not a candidate, so even the printed algorithm (which stops at the first
  // bottleneck it cannot serve) goes on and gives (1, 2) both circuits (1 byte each way: +inf,
  // then 1 s, then 0.5 s).
  const ServerDemand d = demand_of(3, {{0, 1, 100}, {1, 2, 1}});
  const PlanLimits l = unit_limits(2, {0, 2, 2});
  for (const std::string name : {"greedy", "greedy-paper"}) {
    const CircuitPlan p = plan_by(name, d, l);
    EXPECT_EQ(p.circuits_between(0, 1), 0) << name;
    EXPECT_EQ(p.circuits_between(1, 2), 2) << name;
    EXPECT_EQ(p.ports_used, (std::vector<int>{0, 2, 2})) << name;
  }
  // The optimum is (0, 1) over the EPS: 200 s, whatever (1, 2) gets.
  for (const std::string name : {"optimal", "exact"}) {
    const CircuitPlan p = plan_by(name, d, l);
    EXPECT_EQ(p.ports_used[0], 0) << name;
    EXPECT_DOUBLE_EQ(max_finish(d, p, l), 200.0) << name;
  }
}

TEST(FailedPorts, TheOptimumMovesToThePortsThatWork) {
  // alpha 2, unit rates. D(0,1) = 12, D(0,2) = 12, D(1,2) = 2. Without failures the optimum is
  // one circuit on each pair with server 0's two ports: 12 s. With one of server 0's ports
  // failed, one of its pairs must use the EPS (24 s): 24 s, which the planners must not undercut
  // by breaking the limit.
  const ServerDemand d = demand_of(3, {{0, 1, 12}, {0, 2, 12}, {1, 2, 2}});
  for (const std::string name : {"optimal", "exact"}) {
    EXPECT_DOUBLE_EQ(max_finish(d, plan_by(name, d, unit_limits(2)), unit_limits(2)), 12.0) << name;
    const PlanLimits l = unit_limits(2, {1, 2, 2});
    const CircuitPlan p = plan_by(name, d, l);
    EXPECT_DOUBLE_EQ(max_finish(d, p, l), 24.0) << name;
    EXPECT_LE(p.ports_used[0], 1) << name;  // which pair, if any, is a tie
  }
}

// Property tests: random demands and random per-server ports.
class FailedPortsRandom : public ::testing::TestWithParam<int> {};

TEST_P(FailedPortsRandom, EveryPlannerKeepsEachServersPorts) {
  const int seed = GetParam();
  Rng rng = Rng(static_cast<std::uint64_t>(seed)).derive("failed-ports-test");
  const int servers = 3 + static_cast<int>(rng.below(8));  // 3..10: exact stays fast
  const int alpha = 1 + static_cast<int>(rng.below(6));
  const SyntheticDemand params{.servers = servers,
                               .density = 0.3 + 0.7 * rng.uniform(),
                               .skew = 1.5 * rng.uniform(),
                               .max_pair_bytes = 1 + static_cast<std::int64_t>(rng.below(1 << 30))};
  const ServerDemand d = synthetic_demand(params, rng);
  const PlanLimits full = region_limits(alpha, alpha + 2, Rate::gbps(400), servers);
  PlanLimits all_alpha = full;
  all_alpha.ports.assign(static_cast<std::size_t>(servers), alpha);
  PlanLimits failed = full;
  // About half the servers lose some ports, some all of them.
  for (int s = 0; s < servers; ++s) {
    failed.ports.push_back(
        rng.below(2) == 0 ? alpha
                          : static_cast<int>(rng.below(static_cast<std::uint64_t>(alpha) + 1)));
  }
  const std::string where = "seed " + std::to_string(seed);

  std::vector<double> objective;
  for (const std::string& name : planner_names()) {
    // No failures: the same plan whether ports is empty or alpha everywhere.
    const CircuitPlan plain = plan_by(name, d, full);
    EXPECT_TRUE(same_plan(plain, plan_by(name, d, all_alpha))) << where << " " << name;

    const CircuitPlan p = plan_by(name, d, failed);
    EXPECT_NO_THROW(check_plan(d, p, failed)) << where << " " << name;
    for (int s = 0; s < servers; ++s) {
      EXPECT_LE(p.ports_used[static_cast<std::size_t>(s)], failed.ports_of(s))
          << where << " " << name << " server " << s;
    }
    EXPECT_TRUE(same_plan(p, plan_by(name, d, failed))) << where << " " << name;  // determinism
    objective.push_back(max_finish(d, p, failed));
    // Losing ports never helps the exact planners.
    if (name == "optimal" || name == "exact") {
      EXPECT_GE(objective.back(), max_finish(d, plain, full) * (1 - 1e-9)) << where << " " << name;
    }
  }
  const double greedy = objective[0], optimal = objective[2], exact = objective[3];
  EXPECT_LE(optimal, greedy * (1 + 1e-12)) << where;
  EXPECT_NEAR(exact, optimal, 1e-6 * optimal) << where;

  // Greedy with failures: a pair with demand and no circuit has an end with no port left.
  const CircuitPlan g = plan_by("greedy", d, failed);
  for (const DemandPair& pair : d.pairs()) {
    if (g.circuits_between(pair.i, pair.j) > 0) continue;
    EXPECT_TRUE(g.ports_used[static_cast<std::size_t>(pair.i)] == failed.ports_of(pair.i) ||
                g.ports_used[static_cast<std::size_t>(pair.j)] == failed.ports_of(pair.j))
        << where << " pair " << pair.i << "-" << pair.j;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, FailedPortsRandom, ::testing::Range(1, 81));

TEST(FailedPorts, LargeRegionWithFailuresStaysWithinPorts) {
  Rng rng(17);
  const int servers = 200;
  const ServerDemand d = synthetic_demand({.servers = servers, .density = 0.5, .skew = 0.8}, rng);
  PlanLimits l = region_limits(6, 8, Rate::gbps(400), servers);
  for (int s = 0; s < servers; ++s)
    l.ports.push_back(s % 7 == 0 ? static_cast<int>(rng.below(6)) : 6);
  for (const std::string name : {"greedy", "greedy-paper", "optimal"}) {
    EXPECT_NO_THROW(check_plan(d, plan_by(name, d, l), l)) << name;
  }
}

// map_to_nics with unusable NICs.

CircuitPlan plan_with_circuits(int servers, std::vector<Circuit> circuits) {
  CircuitPlan p;
  p.servers = servers;
  p.ports_used.assign(static_cast<std::size_t>(servers), 0);
  for (const Circuit& c : circuits) {
    p.ports_used[static_cast<std::size_t>(c.i)] += c.count;
    p.ports_used[static_cast<std::size_t>(c.j)] += c.count;
  }
  p.circuits = std::move(circuits);
  return p;
}

TEST(FailedPorts, UnusableNicsAreNeverAssignedAndCountAsTaken) {
  // 8 NICs, alpha 6, 2 NUMA nodes: OCS NICs 2, 3 (node 0) and 4-7 (node 1). Server 0 cannot use
  // NIC 4, server 1 NIC 2. First circuit: node 1 at both ends (more free OCS NICs: 3 vs 2 at
  // server 0, 4 vs 1 at server 1), the lowest free there: NIC 5 at server 0, NIC 4 at server 1.
  // Second: node 0 at both ends (fewer of the pair's circuits): NIC 2 at server 0, NIC 3 at
  // server 1.
  const ServerNics nics{.nics = 8, .alpha = 6, .numa = 2};
  const auto ports = map_to_nics(plan_with_circuits(2, {{0, 1, 2}}), nics, {{0, 4}, {1, 2}});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0], (PortCircuit{0, 5, 1, 4}));
  EXPECT_EQ(ports[1], (PortCircuit{0, 2, 1, 3}));
  // Without unusable NICs: as before (NICs 4, then 2 at both ends).
  const auto plain = map_to_nics(plan_with_circuits(2, {{0, 1, 2}}), nics, {});
  EXPECT_EQ(plain, map_to_nics(plan_with_circuits(2, {{0, 1, 2}}), nics));
  EXPECT_EQ(plain[0], (PortCircuit{0, 4, 1, 4}));
}

TEST(FailedPorts, MappingRefusesPlansBeyondTheUsableNics) {
  const ServerNics nics{.nics = 4, .alpha = 2, .numa = 1};
  // Server 0 has one usable OCS NIC (3) and two circuits.
  try {
    map_to_nics(plan_with_circuits(2, {{0, 1, 2}}), nics, {{0, 2}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "plan");
    EXPECT_NE(std::string(e.what()).find("1 usable"), std::string::npos) << e.what();
  }
  // One circuit fits, on NIC 3.
  const auto one = map_to_nics(plan_with_circuits(2, {{0, 1, 1}}), nics, {{0, 2}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0], (PortCircuit{0, 3, 1, 2}));
  // Unusable entries must be OCS NICs of the plan's servers.
  EXPECT_THROW(map_to_nics(plan_with_circuits(2, {}), nics, {{0, 1}}), Error);  // an EPS NIC
  EXPECT_THROW(map_to_nics(plan_with_circuits(2, {}), nics, {{0, 4}}), Error);  // no such NIC
  EXPECT_THROW(map_to_nics(plan_with_circuits(2, {}), nics, {{2, 2}}), Error);  // no such server
  EXPECT_THROW(map_to_nics(plan_with_circuits(2, {}), nics, {{-1, 2}}), Error);
}

TEST(FailedPorts, RandomPlansAvoidUnusableNics) {
  Rng rng(23);
  for (int round = 0; round < 60; ++round) {
    const int servers = 2 + static_cast<int>(rng.below(16));
    const ServerNics nics{.nics = 8, .alpha = 1 + static_cast<int>(rng.below(7)), .numa = 2};
    std::set<std::pair<int, int>> unusable;
    PlanLimits limits = region_limits(nics.alpha, nics.nics, Rate::gbps(400), servers);
    limits.ports.assign(static_cast<std::size_t>(servers), nics.alpha);
    for (int s = 0; s < servers; ++s) {
      for (int nic = nics.first_ocs_nic(); nic < nics.nics; ++nic) {
        if (rng.below(4) == 0) {
          unusable.insert({s, nic});
          --limits.ports[static_cast<std::size_t>(s)];
        }
      }
    }
    const ServerDemand d = synthetic_demand({.servers = servers, .density = 0.8}, rng);
    const CircuitPlan plan = make_planner("greedy")->plan(d, limits);
    const auto ports = map_to_nics(plan, nics, unusable);
    EXPECT_EQ(static_cast<int>(ports.size()), plan.total_circuits());
    std::set<std::pair<int, int>> used;
    for (const PortCircuit& c : ports) {
      for (const std::pair<int, int>& end :
           {std::pair{c.server, c.nic}, std::pair{c.peer_server, c.peer_nic}}) {
        EXPECT_FALSE(unusable.contains(end)) << "round " << round;
        EXPECT_GE(end.second, nics.first_ocs_nic());
        EXPECT_TRUE(used.insert(end).second) << "round " << round;
      }
    }
  }
}

}  // namespace
}  // namespace failed_ports_test
}  // namespace mfabric::control
