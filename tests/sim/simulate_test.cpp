// Whole-path analytic checks: experiment text -> fabric + task graph -> engine -> flow backend.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "config/experiment.h"
#include "report/simulation_report.h"
#include "sim/engine.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

RunResult run_yaml(const std::string& yaml) {
  return sim::simulate(parse_experiment(yaml, "test.yaml")).result;
}

TEST(SimulateAnalytic, RingAllReduceTakesTwoNMinusOneOverNTimesSOverB) {
  // 16 hosts on one 64-port leaf: every path is NIC -> leaf -> NIC, 2 cables of 1us.
  const RunResult r = run_yaml(R"(
cluster: {servers: 16, gpus_per_server: 1, nics_per_server: 1, link: 400G, link_latency: 1us}
fabric: fat-tree
workload: {collective: all-reduce, bytes: 1GiB, algorithm: ring}
)");
  const double n = 16, S = 1024.0 * 1024 * 1024 * 8, B = 400e9;
  const double expected = 2 * (n - 1) / n * S / B + 2 * (n - 1) * 2e-6;
  EXPECT_NEAR(r.iteration_times[0].seconds(), expected, expected * 0.01);
}

TEST(SimulateAnalytic, RingAllReduceAcrossSpinesOnANonBlockingFatTree) {
  // 64 hosts at radix 16: 8 leaves of 8 hosts, 8 spines; ring neighbours on different leaves
  // cross a spine (4 cables). Non-blocking: the ring still runs at the NIC rate.
  const RunResult r = run_yaml(R"(
cluster: {servers: 64, gpus_per_server: 1, nics_per_server: 1, link: 100G, link_latency: 1us}
fabric: {kind: fat-tree, radix: 16}
workload: {collective: all-reduce, bytes: 256MiB, algorithm: ring}
)");
  const double n = 64, S = 256.0 * 1024 * 1024 * 8, B = 100e9;
  const double bandwidth_term = 2 * (n - 1) / n * S / B;
  // Latency: between 2 and 4 cables per ring edge.
  EXPECT_GE(r.iteration_times[0].seconds(), bandwidth_term + 2 * (n - 1) * 2e-6 - 1e-9);
  EXPECT_LE(r.iteration_times[0].seconds(), (bandwidth_term + 2 * (n - 1) * 4e-6) * 1.01);
}

TEST(SimulateAnalytic, AllToAllOnAnOversubscribedFatTreeIsBoundByTheLeafUplinks) {
  // 48 hosts, radix 16, 3:1: 4 leaves of 12 hosts with 4 uplinks each. Each host sends S/48 to
  // every host; a leaf sends 12 x 36 x S/48 bytes off the leaf through 4 x B.
  const RunResult r = run_yaml(R"(
cluster: {servers: 48, gpus_per_server: 1, nics_per_server: 1, link: 100G, link_latency: 1us}
fabric: {kind: fat-tree, radix: 16, oversubscription: 3}
workload: {collective: all-to-all, bytes: 48MiB}
)");
  const double S = 48.0 * 1024 * 1024 * 8, B = 100e9;
  const double bisection_bound = 12.0 * 36.0 * (S / 48.0) / (4 * B);
  const double nic_bound = 47.0 * (S / 48.0) / B;
  ASSERT_GT(bisection_bound, nic_bound * 2);  // the uplinks, not the NICs, are the bottleneck
  const double t = r.iteration_times[0].seconds();
  EXPECT_GE(t, bisection_bound * 0.999);
  // ECMP hashes flows over the 4 spines unevenly, so allow 30% above the ideal split.
  EXPECT_LE(t, bisection_bound * 1.3);
}

TEST(SimulateAnalytic, HierarchicalAllReduceUsesEveryNic) {
  // 4 servers x 8 GPUs, 1 GiB: NVSwitch reduce-scatter (7/8 S at 7.2 Tbps), 8 concurrent rings of
  // the 1/8 shards over 4 servers (2 x 3/4 x S/8 at 400G), NVSwitch all-gather.
  const RunResult r = run_yaml(R"(
cluster: {servers: 4, link: 400G, link_latency: 1us}
fabric: fat-tree
workload: {collective: all-reduce, bytes: 1GiB, algorithm: hierarchical}
)");
  const double S = 1024.0 * 1024 * 1024 * 8;
  const double expected = 2 * (7.0 / 8) * S / 7.2e12 + 2 * (3.0 / 4) * (S / 8) / 400e9;
  EXPECT_NEAR(r.iteration_times[0].seconds(), expected, expected * 0.02);
}

TEST(SimulateDeterminism, SameExperimentSameResultsJson) {
  const std::string yaml = R"(
seed: 7
cluster: {servers: 8, link: 400G}
fabric: fat-tree
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 16, micro_batch: 2, seq: 512}
simulation: {iterations: 2}
)";
  auto results = [&] {
    const Simulation run = sim::simulate(parse_experiment(yaml, "test.yaml"));
    return report::results_json(report::report_of(run), false).dump(2);
  };
  const std::string a = results();
  EXPECT_EQ(a, results());
  EXPECT_NE(a.find("\"iteration_times_s\""), std::string::npos);
}

TEST(SimulateTraining, MoreBandwidthIsNeverSlower) {
  auto iteration = [](const char* link) {
    return run_yaml(fmt::format(R"(
cluster: {{servers: 8, link: {}}}
fabric: fat-tree
workload: {{model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 16, micro_batch: 2, seq: 512}}
)",
                                link))
        .mean_iteration_time();
  };
  EXPECT_GE(iteration("100G"), iteration("400G"));
}

}  // namespace
}  // namespace mfabric::sim
