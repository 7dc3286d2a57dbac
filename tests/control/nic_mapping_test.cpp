#include "control/nic_mapping.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "control/synthetic_demand.h"
#include "core/error.h"
#include "core/rng.h"

namespace mfabric::control {
namespace {

CircuitPlan plan_of(int servers, std::vector<Circuit> circuits) {
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

TEST(NicMapping, OcsNicsAreTheLastAlphaAndNumaSplitsEvenly) {
  const ServerNics nics{.nics = 8, .alpha = 6, .numa = 2};
  EXPECT_EQ(nics.first_ocs_nic(), 2);
  // 8 NICs on 2 nodes: 0-3 on node 0, 4-7 on node 1 (topology.h: floor(j * numa / n)).
  EXPECT_EQ(nics.numa_of(3), 0);
  EXPECT_EQ(nics.numa_of(4), 1);
}

TEST(NicMapping, ParallelCircuitsSpreadOverNumaNodesAtBothEnds) {
  // 8 NICs, alpha 6, 2 NUMA nodes: OCS NICs 2, 3 on node 0 and 4-7 on node 1. Two circuits
  // between servers 0 and 1: one per node at each end; by the rule, the first on the node with
  // more free OCS NICs (node 1, lowest NIC 4), the second on node 0 (NIC 2).
  const auto ports =
      map_to_nics(plan_of(2, {{0, 1, 2}}), ServerNics{.nics = 8, .alpha = 6, .numa = 2});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0], (PortCircuit{0, 4, 1, 4}));
  EXPECT_EQ(ports[1], (PortCircuit{0, 2, 1, 2}));
}

TEST(NicMapping, FourCircuitsTwoPerNode) {
  const ServerNics nics{.nics = 8, .alpha = 6, .numa = 2};
  const auto ports = map_to_nics(plan_of(2, {{0, 1, 4}}), nics);
  ASSERT_EQ(ports.size(), 4u);
  int per_node[2] = {0, 0};
  for (const PortCircuit& c : ports) {
    ++per_node[nics.numa_of(c.nic)];
    EXPECT_EQ(nics.numa_of(c.nic), nics.numa_of(c.peer_nic));
  }
  EXPECT_EQ(per_node[0], 2);
  EXPECT_EQ(per_node[1], 2);
}

TEST(NicMapping, PairsWithMoreCircuitsArePlacedFirst) {
  // Server 0: alpha 2 on 4 NICs, 2 NUMA nodes: OCS NIC 2 on node 1, NIC 3 on node 1: no choice.
  // With 4 NUMA nodes over 8 NICs, alpha 4: OCS NICs 4, 5 (node 2) and 6, 7 (node 3).
  const ServerNics nics{.nics = 8, .alpha = 4, .numa = 4};
  // (0, 2) has 2 circuits and goes first although (0, 1) is the smaller pair.
  const auto ports = map_to_nics(plan_of(3, {{0, 1, 1}, {0, 2, 2}}), nics);
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].peer_server, 2);
  EXPECT_EQ(ports[1].peer_server, 2);
  EXPECT_NE(nics.numa_of(ports[0].nic), nics.numa_of(ports[1].nic));
  EXPECT_EQ(ports[2].peer_server, 1);
}

TEST(NicMapping, EveryNicOnceOverRandomPlans) {
  Rng rng(11);
  for (int round = 0; round < 50; ++round) {
    const int servers = 2 + static_cast<int>(rng.below(20));
    const ServerNics nics{.nics = 8, .alpha = 1 + static_cast<int>(rng.below(7)), .numa = 2};
    const ServerDemand d = synthetic_demand({.servers = servers, .density = 0.7}, rng);
    const CircuitPlan plan = make_planner("greedy")->plan(
        d, region_limits(nics.alpha, nics.nics, Rate::gbps(400), servers));
    const auto ports = map_to_nics(plan, nics);
    EXPECT_EQ(static_cast<int>(ports.size()), plan.total_circuits());
    std::set<std::pair<int, int>> used;
    for (const PortCircuit& c : ports) {
      EXPECT_LT(c.server, c.peer_server);
      EXPECT_GE(c.nic, nics.first_ocs_nic());
      EXPECT_GE(c.peer_nic, nics.first_ocs_nic());
      EXPECT_LT(c.nic, nics.nics);
      EXPECT_TRUE(used.insert({c.server, c.nic}).second);
      EXPECT_TRUE(used.insert({c.peer_server, c.peer_nic}).second);
    }
    // Circuits per pair as planned.
    for (const Circuit& c : plan.circuits) {
      int count = 0;
      for (const PortCircuit& pc : ports)
        count += pc.server == c.i && pc.peer_server == c.j;
      EXPECT_EQ(count, c.count);
    }
  }
}

TEST(NicMapping, Errors) {
  EXPECT_THROW(map_to_nics(plan_of(2, {{0, 1, 3}}), {.nics = 4, .alpha = 2, .numa = 2}), Error);
  EXPECT_THROW(map_to_nics(plan_of(2, {{1, 0, 1}}), {.nics = 4, .alpha = 2, .numa = 2}), Error);
  EXPECT_THROW(map_to_nics(plan_of(2, {}), {.nics = 4, .alpha = 4, .numa = 2}), Error);
  EXPECT_THROW(map_to_nics(plan_of(2, {}), {.nics = 4, .alpha = 2, .numa = 5}), Error);
  EXPECT_THROW(map_to_nics(plan_of(2, {}), {.nics = 1, .alpha = 1, .numa = 1}), Error);
}

}  // namespace
}  // namespace mfabric::control
