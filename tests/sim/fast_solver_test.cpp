// The fast solver (simulation.solver; docs/shortcuts.md, "The fast solver"): chosen by name only,
// named among the run's shortcuts, and within its stated bound of the exact solver on an
// all-to-all whose every completion moves most of the other transfers' rates.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

// Qwen-MoE's 32-rank all-to-alls (992 transfers each, every NIC a bottleneck) on 128 GPUs.
std::string qwen(const std::string& solver) {
  return R"(
cluster: {servers: 16, link: 100G}
fabric: fat-tree
workload: {model: qwen-moe-32, convention: paper, tp: 1, pp: 4, ep: 32, micro_batch: 8, global_batch: 16, seq: 1024}
simulation: {solver: )" +
         solver + "}\n";
}

// 48 single-GPU hosts, one all-to-all.
std::string all_to_all(const std::string& solver) {
  return R"(
cluster: {servers: 48, gpus_per_server: 1, nics_per_server: 1, link: 100G}
fabric: {kind: fat-tree, radix: 16}
workload: {collective: all-to-all, bytes: 96MiB}
simulation: {solver: )" +
         solver + "}\n";
}

TEST(FastSolver, StaysWithinItsBoundOfTheExactSolver) {
  const Simulation exact = simulate(parse_experiment(qwen("exact"), "t.yaml"));
  const Simulation fast = simulate(parse_experiment(qwen("fast"), "t.yaml"));
  EXPECT_FALSE(exact.fast_solver);
  EXPECT_TRUE(shortcuts(exact).empty());
  ASSERT_TRUE(fast.fast_solver);
  const double t = exact.result.mean_iteration_time().seconds();
  EXPECT_NEAR(fast.result.mean_iteration_time().seconds(), t, kFastSolverError * t);
  // It did solve otherwise (fewer exact recomputations move the finish times a little).
  EXPECT_NE(fast.result.mean_iteration_time(), exact.result.mean_iteration_time());
  EXPECT_LT(fast.result.events, exact.result.events);
  EXPECT_EQ(fast.result.transfers.bytes_delivered, exact.result.transfers.bytes_delivered);
  const std::vector<Shortcut> s = shortcuts(fast);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "fast-solver");
  EXPECT_EQ(s[0].bound, kFastSolverError);
}

TEST(FastSolver, OnlyItsNamePicksIt) {
  const auto picks = [](const std::string& yaml) {
    return uses_fast_solver(parse_experiment(yaml, "t.yaml"));
  };
  // auto takes coflows for DeepSeek-V3's recipe on 2,048 GPUs (11 million tasks), not this.
  const std::string deepseek = R"(
cluster: {servers: 256, link: 400G, gpu: h800, nvswitch: 200GB/s}
fabric: fat-tree
workload: {model: deepseek-v3}
)";
  EXPECT_FALSE(picks(deepseek));
  EXPECT_FALSE(picks(deepseek + "simulation: {solver: coflow}\n"));
  EXPECT_FALSE(picks(deepseek + "simulation: {solver: exact}\n"));
  EXPECT_TRUE(picks(deepseek + "simulation: {solver: fast}\n"));
  EXPECT_FALSE(simulate(parse_experiment(qwen("auto"), "t.yaml")).fast_solver);
}

TEST(FastSolver, AFabricThatForwardsThroughHostsRunsTheExactSolverAndSaysSo) {
  std::string yaml = qwen("fast");
  yaml.replace(yaml.find("fabric: fat-tree"), 16, "fabric: topoopt");
  const Simulation s = simulate(parse_experiment(yaml, "t.yaml"));
  EXPECT_FALSE(s.fast_solver);
  const std::vector<Shortcut> named = shortcuts(s);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].name, "fast-solver");
  EXPECT_FALSE(named[0].used);
  EXPECT_NE(named[0].detail.find("TopoOpt forwards transfers through hosts"), std::string::npos);
}

TEST(FastSolver, AnUnknownSolverIsRefused) {
  try {
    parse_experiment(all_to_all("quick"), "t.yaml");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.solver");
    EXPECT_NE(std::string(e.what()).find("expected exact, fast, coflow or auto, got 'quick'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mfabric::sim
