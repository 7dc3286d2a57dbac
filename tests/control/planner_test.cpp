#include "control/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "control/synthetic_demand.h"
#include "core/error.h"
#include "core/rng.h"

namespace mfabric::control {
namespace {

// 1 byte/s circuits and 0.5 byte/s over the EPS: times in seconds are bytes, or 2 x bytes.
PlanLimits unit_limits(int alpha) {
  return PlanLimits{.alpha = alpha,
                    .circuit_rate = Rate::bytes_per_second(1.0),
                    .eps_rate = Rate::bytes_per_second(0.5)};
}

ServerDemand demand_of(int servers, const std::vector<DemandPair>& pairs) {
  ServerDemand d(servers);
  for (const DemandPair& p : pairs)
    d.add(p.i, p.j, p.bytes);
  return d;
}

CircuitPlan plan_with(const std::string& planner, const ServerDemand& d, const PlanLimits& l) {
  return make_planner(planner)->plan(d, l);
}

TEST(Planner, RegistryNamesAndUnknownName) {
  for (const std::string& name : planner_names()) {
    EXPECT_EQ(make_planner(name)->name(), name);
  }
  try {
    make_planner("magic");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "algorithm");
    EXPECT_NE(std::string(e.what()).find("greedy, greedy-paper, optimal, exact"),
              std::string::npos);
  }
}

TEST(Planner, LimitsAreValidated) {
  const ServerDemand d = demand_of(2, {{0, 1, 10}});
  PlanLimits l = unit_limits(0);
  EXPECT_THROW(plan_with("greedy", d, l), Error);
  l = unit_limits(2);
  l.eps_rate = Rate::bits_per_second(std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(plan_with("optimal", d, l), Error);
  l = unit_limits(2);
  l.circuit_rate = Rate::bits_per_second(0);
  EXPECT_THROW(plan_with("exact", d, l), Error);
}

TEST(Planner, EpsRateSharesTheServersEpsNics) {
  // 8 NICs, 6 on the OCS: 2 x 400G shared by 7 peers.
  EXPECT_DOUBLE_EQ(eps_pair_rate(8, 6, Rate::gbps(400), 8).gbps(), 800.0 / 7.0);
  EXPECT_DOUBLE_EQ(eps_pair_rate(8, 6, Rate::gbps(400), 1).gbps(), 800.0);
  const PlanLimits l = region_limits(6, 8, Rate::gbps(400), 8);
  EXPECT_EQ(l.alpha, 6);
  EXPECT_DOUBLE_EQ(l.circuit_rate.gbps(), 400.0);
}

TEST(Planner, ObjectiveByHand) {
  const ServerDemand d = demand_of(3, {{0, 1, 10}, {1, 2, 3}});
  CircuitPlan plan;
  plan.servers = 3;
  plan.circuits = {{0, 1, 2}};
  plan.ports_used = {2, 2, 0};
  // Pair (0, 1): 10 bytes on 2 circuits of 1 B/s = 5 s; pair (1, 2): 3 bytes on the EPS at
  // 0.5 B/s = 6 s.
  EXPECT_DOUBLE_EQ(max_finish(d, plan, unit_limits(2)), 6.0);
  EXPECT_DOUBLE_EQ(pair_finish(10, 2, unit_limits(2)), 5.0);
  EXPECT_DOUBLE_EQ(pair_finish(0, 0, unit_limits(2)), 0.0);
  EXPECT_EQ(plan.circuits_between(1, 0), 2);
  EXPECT_EQ(plan.circuits_between(1, 2), 0);
  EXPECT_NO_THROW(check_plan(d, plan, unit_limits(2)));
  EXPECT_THROW(check_plan(d, plan, unit_limits(1)), Error);
}

TEST(Planner, FourServersAlphaOneIsAMatchingOnTheHeaviestPairs) {
  // By hand: the heaviest pair (0, 1) first, then (2, 3): a perfect matching; (0, 2) and (1, 3)
  // find both ends full.
  const ServerDemand d = demand_of(4, {{0, 1, 100}, {2, 3, 90}, {0, 2, 80}, {1, 3, 70}});
  for (const std::string name : {"greedy", "greedy-paper"}) {
    const CircuitPlan p = plan_with(name, d, unit_limits(1));
    ASSERT_EQ(p.circuits.size(), 2u) << name;
    EXPECT_EQ(p.circuits_between(0, 1), 1) << name;
    EXPECT_EQ(p.circuits_between(2, 3), 1) << name;
    EXPECT_EQ(p.ports_used, (std::vector<int>{1, 1, 1, 1})) << name;
  }
}

TEST(Planner, GreedySkipsABlockedPairWhereThePaperStops) {
  // alpha 1. (0, 1) = 100 is served; (0, 2) = 90 is blocked at server 0: the printed algorithm
  // stops there, the practical one goes on and serves (2, 3) = 50.
  const ServerDemand d = demand_of(4, {{0, 1, 100}, {0, 2, 90}, {2, 3, 50}});
  const CircuitPlan paper = plan_with("greedy-paper", d, unit_limits(1));
  EXPECT_EQ(paper.total_circuits(), 1);
  const CircuitPlan greedy = plan_with("greedy", d, unit_limits(1));
  EXPECT_EQ(greedy.total_circuits(), 2);
  EXPECT_EQ(greedy.circuits_between(2, 3), 1);
}

TEST(Planner, TiesGoToLargerDemandThenSmallerPair) {
  // alpha 1, every pair a candidate for server 0's single port... (0, 2) and (0, 3) tie on
  // demand: (0, 2) is the smaller pair.
  const ServerDemand d = demand_of(4, {{0, 3, 50}, {0, 2, 50}, {0, 1, 20}});
  const CircuitPlan p = plan_with("greedy", d, unit_limits(1));
  EXPECT_EQ(p.circuits_between(0, 2), 1);
  EXPECT_EQ(p.total_circuits(), 1);
}

TEST(Planner, GreedyIsSuboptimalWhereOptimalIsNot) {
  // By hand, alpha 2: greedy gives every pair one circuit first, (0, 1) = 10 bytes on one
  // circuit: 10 s. Best: (0, 1) on two circuits (5 s) and the small pairs on the EPS (2 s).
  const ServerDemand d = demand_of(3, {{0, 1, 10}, {0, 2, 1}, {1, 2, 1}});
  const PlanLimits l = unit_limits(2);
  EXPECT_DOUBLE_EQ(max_finish(d, plan_with("greedy", d, l), l), 10.0);
  EXPECT_DOUBLE_EQ(max_finish(d, plan_with("optimal", d, l), l), 5.0);
  EXPECT_DOUBLE_EQ(max_finish(d, plan_with("exact", d, l), l), 5.0);
  const CircuitPlan best = plan_with("optimal", d, l);
  EXPECT_EQ(best.circuits_between(0, 1), 2);
}

TEST(Planner, EmptyDemandGivesNoCircuits) {
  const ServerDemand d(5);
  for (const std::string& name : planner_names()) {
    const CircuitPlan p = plan_with(name, d, unit_limits(3));
    EXPECT_EQ(p.servers, 5);
    EXPECT_TRUE(p.circuits.empty()) << name;
    EXPECT_DOUBLE_EQ(max_finish(d, p, unit_limits(3)), 0.0);
  }
}

TEST(Planner, ExactRefusesLargeRegions) {
  const ServerDemand d(kMaxExactServers + 1);
  try {
    plan_with("exact", d, unit_limits(2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 16 servers"), std::string::npos) << e.what();
  }
}

// Property tests over many seeded random demands.
class RandomDemands : public ::testing::TestWithParam<int> {};

TEST_P(RandomDemands, PlannersKeepTheirPromises) {
  const int seed = GetParam();
  Rng rng = Rng(static_cast<std::uint64_t>(seed)).derive("planner-test");
  const int servers = 3 + static_cast<int>(rng.below(8));  // 3..10: exact stays fast
  const int alpha = 1 + static_cast<int>(rng.below(6));
  const SyntheticDemand params{.servers = servers,
                               .density = 0.3 + 0.7 * rng.uniform(),
                               .skew = 1.5 * rng.uniform(),
                               .max_pair_bytes = 1 + static_cast<std::int64_t>(rng.below(1 << 30))};
  const ServerDemand d = synthetic_demand(params, rng);
  // Circuit 400G; the EPS sometimes slow (the usual case), sometimes faster than a circuit.
  PlanLimits l = region_limits(alpha, alpha + 2, Rate::gbps(400), servers);
  if (seed % 5 == 0) l.eps_rate = Rate::gbps(600);
  const std::string where = "seed " + std::to_string(seed);

  double objective[4] = {0, 0, 0, 0};
  const std::vector<std::string> names = planner_names();
  for (std::size_t k = 0; k < names.size(); ++k) {
    const CircuitPlan p = plan_with(names[k], d, l);
    EXPECT_NO_THROW(check_plan(d, p, l)) << where << " " << names[k];
    objective[k] = max_finish(d, p, l);
    // Deterministic.
    const CircuitPlan again = plan_with(names[k], d, l);
    EXPECT_EQ(again.ports_used, p.ports_used) << where;
    EXPECT_EQ(again.total_circuits(), p.total_circuits()) << where;
  }
  const double greedy = objective[0], paper = objective[1], optimal = objective[2],
               exact = objective[3];
  // With the EPS faster than a circuit, greedy's extra circuits can slow a pair down.
  if (l.eps_rate <= l.circuit_rate) {
    EXPECT_LE(greedy, paper) << where;
  }
  EXPECT_LE(optimal, greedy * (1 + 1e-12)) << where;
  // Two routes to the same optimum; GLPK's tolerance is 1e-7 relative on the scaled rows.
  EXPECT_NEAR(exact, optimal, 1e-6 * optimal) << where;

  // Greedy: a pair with demand and no circuit had a full end (ports never free up again); so
  // every pair with demand got one circuit before any got a second while ports allowed.
  const CircuitPlan g = plan_with("greedy", d, l);
  for (const DemandPair& pair : d.pairs()) {
    if (g.circuits_between(pair.i, pair.j) > 0) continue;
    EXPECT_TRUE(g.ports_used[static_cast<std::size_t>(pair.i)] == alpha ||
                g.ports_used[static_cast<std::size_t>(pair.j)] == alpha)
        << where << " pair " << pair.i << "-" << pair.j;
  }
}

TEST_P(RandomDemands, GreedyServesEveryPairOnceWhenPortsAllow) {
  const int seed = GetParam();
  Rng rng = Rng(static_cast<std::uint64_t>(seed)).derive("planner-test-full");
  const int servers = 2 + static_cast<int>(rng.below(30));
  const ServerDemand d =
      synthetic_demand({.servers = servers, .density = rng.uniform(), .skew = 1.0}, rng);
  // alpha = servers - 1: one port per peer, so every pair with demand can have a circuit.
  const PlanLimits l = region_limits(servers - 1, servers + 1, Rate::gbps(400), servers);
  const CircuitPlan g = plan_with("greedy", d, l);
  for (const DemandPair& pair : d.pairs()) {
    EXPECT_GE(g.circuits_between(pair.i, pair.j), 1) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomDemands, ::testing::Range(1, 121));

TEST(Planner, LargeRegionStaysWithinAlpha) {
  Rng rng(7);
  const ServerDemand d = synthetic_demand({.servers = 256, .density = 0.5, .skew = 0.8}, rng);
  const PlanLimits l = region_limits(6, 8, Rate::gbps(400), 256);
  for (const std::string name : {"greedy", "greedy-paper", "optimal"}) {
    const CircuitPlan p = plan_with(name, d, l);
    EXPECT_NO_THROW(check_plan(d, p, l)) << name;
  }
  EXPECT_LE(max_finish(d, plan_with("optimal", d, l), l),
            max_finish(d, plan_with("greedy", d, l), l));
}

}  // namespace
}  // namespace mfabric::control
