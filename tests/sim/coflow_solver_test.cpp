// Coflows (simulation.solver: coflow; docs/shortcuts.md, "Coflows"): each collective step moves as
// one coflow of its transfers. Within the stated bound of the exact solver on small training jobs
// of each kind of fabric, never slower than exact on one all-to-all alone (a coflow ends when its
// busiest channel is done, the earliest any schedule can), named among the run's shortcuts, and
// declined by the packet backend and where transfers are forwarded through hosts.
#include <gtest/gtest.h>

#include <string>

#include "config/workload_builder.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

std::string mixtral(const std::string& fabric, const std::string& solver) {
  return "cluster: {servers: 32, link: 400G, gpu: h800}\nfabric: \"" + fabric +
         "\"\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, "
         "micro_batch: 2, global_batch: 64, seq: 1024}\nsimulation: {solver: " +
         solver + "}\n";
}

// One all-to-all of 64 MiB over 16 single-GPU hosts: cheap enough for the sanitizer suite.
std::string all_to_all(const std::string& fabric, const std::string& simulation) {
  return "cluster: {servers: 16, gpus_per_server: 1, nics_per_server: 1, link: 100G}\nfabric: " +
         fabric + "\nworkload: {collective: all-to-all, bytes: 64MiB}\nsimulation: " + simulation +
         "\n";
}

TEST(CoflowSolver, StaysWithinItsBoundOfTheExactSolverOnEachKindOfFabric) {
  for (const std::string fabric :
       {"fat-tree", "rail-optimized", "mfabric:alpha=6,region=4,reconfiguration=25ms"}) {
    const Simulation exact = simulate(parse_experiment(mixtral(fabric, "exact"), "t.yaml"));
    const Simulation coflow = simulate(parse_experiment(mixtral(fabric, "coflow"), "t.yaml"));
    EXPECT_FALSE(exact.coflows) << fabric;
    ASSERT_TRUE(coflow.coflows) << fabric;
    EXPECT_FALSE(coflow.fast_solver) << fabric;
    const double t = exact.result.mean_iteration_time().seconds();
    EXPECT_NEAR(coflow.result.mean_iteration_time().seconds(), t, kCoflowError * t) << fabric;
    // Fewer events: a step's transfers start and finish as one.
    EXPECT_LT(coflow.result.events, exact.result.events / 2) << fabric;
    EXPECT_EQ(coflow.result.transfers.bytes_delivered, exact.result.transfers.bytes_delivered)
        << fabric;
    EXPECT_EQ(coflow.result.transfers.delivered, exact.result.transfers.delivered) << fabric;
    const std::vector<Shortcut> s = shortcuts(coflow);
    ASSERT_EQ(s.size(), 1u) << fabric;
    EXPECT_EQ(s[0].name, "coflows");
    EXPECT_TRUE(s[0].used);
    EXPECT_EQ(s[0].bound, kCoflowError);
  }
}

TEST(CoflowSolver, AutoPicksThemForLargeTrainingJobsOnly) {
  const auto picks = [](const std::string& yaml) {
    const config::Experiment e = parse_experiment(yaml, "t.yaml");
    const workload::TrainingSpec spec = config::training_spec(e);
    return uses_coflows(e, &spec);
  };
  // The scale study's 4,096-server point: 25 million tasks.
  const std::string scale = R"(
cluster: {servers: 4096, link: 400G, gpu: h800}
fabric: fat-tree
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, micro_batch: 8, global_batch: 16384}
)";
  EXPECT_TRUE(picks(scale));
  EXPECT_FALSE(picks(scale + "simulation: {solver: exact}\n"));
  EXPECT_FALSE(picks(scale + "simulation: {solver: fast}\n"));
  EXPECT_FALSE(picks(scale + "simulation: {solver: auto, backend: packet}\n"));
  // A job far below config::kCoflowsFromTasks: exact.
  EXPECT_FALSE(picks(mixtral("fat-tree", "auto")));
  // A workload without a training job (no size estimate) stays exact.
  EXPECT_FALSE(simulate(parse_experiment(R"(
cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100G}
fabric: {kind: fat-tree, radix: 8}
workload: {collective: all-to-all, bytes: 1MiB}
)",
                                         "t.yaml"))
                   .coflows);
}

TEST(CoflowSolver, OneAllToAllAloneEndsNoLaterThanTheExactSolversDoes) {
  const auto run = [](const std::string& solver) {
    return simulate(
               parse_experiment(
                   all_to_all("{kind: fat-tree, radix: 8}", "{solver: " + solver + "}"), "t.yaml"))
        .result.mean_iteration_time();
  };
  const Time exact = run("exact");
  const Time coflow = run("coflow");
  EXPECT_LE(coflow, exact);
  EXPECT_GT(coflow.seconds(), exact.seconds() * (1 - kCoflowError));
}

// The run took no coflows and its one shortcut entry says why, in words containing `why`.
void expect_declined(const Simulation& s, const std::string& why) {
  EXPECT_FALSE(s.coflows);
  const std::vector<Shortcut> named = shortcuts(s);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].name, "coflows");
  EXPECT_FALSE(named[0].used);
  EXPECT_NE(named[0].detail.find(why), std::string::npos) << named[0].detail;
}

TEST(CoflowSolver, AFabricThatForwardsThroughHostsRunsTheExactSolverAndSaysSo) {
  // Eight servers of 8 GPUs and 8 NICs: TopoOpt plans a patch-panel topology of degree 8.
  const Simulation s = simulate(parse_experiment(R"(
cluster: {servers: 8, link: 100G}
fabric: topoopt
workload: {collective: all-to-all, bytes: 16MiB}
simulation: {solver: coflow}
)",
                                                 "t.yaml"));
  expect_declined(s, "TopoOpt forwards transfers through hosts");
}

TEST(CoflowSolver, PacketSprayingMovesEveryTransferAloneAndSaysSo) {
  const Simulation s = simulate(parse_experiment(
      all_to_all("{kind: fat-tree, radix: 8}", "{solver: coflow, routing: spray}"), "t.yaml"));
  expect_declined(s, "packet spraying");
}

TEST(CoflowSolver, ThePacketBackendMovesEveryTransferAloneAndSaysSo) {
  const Simulation s = simulate(parse_experiment(R"(
cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100G}
fabric: {kind: fat-tree, radix: 8}
workload: {collective: all-to-all, bytes: 1MiB}
simulation: {solver: coflow, backend: packet}
)",
                                                 "t.yaml"));
  expect_declined(s, "packet backend moves every transfer on its own");
}

}  // namespace
}  // namespace mfabric::sim
