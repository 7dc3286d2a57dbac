// Region circuit planning (docs/control-plane.md): how fast each planner is, and how far each is
// from the optimum of the objective (max_finish) on skewed random demands and on MoE layers from
// the routing generator. The quality figures are counters:
//   mfabric_bench --benchmark_filter=PlannerGap
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "control/copilot.h"
#include "control/demand.h"
#include "control/nic_mapping.h"
#include "control/planner.h"
#include "control/synthetic_demand.h"
#include "workload/routing.h"

namespace {

using namespace mfabric;
using namespace mfabric::control;

// A dense region demand with Zipf-like pair sizes (skew 1).
ServerDemand zipf_demand(int servers, std::uint64_t seed) {
  Rng rng = Rng(seed).derive("control-bench");
  return synthetic_demand({.servers = servers, .density = 1.0, .skew = 1.0}, rng);
}

// One MoE layer's dispatch: EP = 8 ranks per server (TP 1), one expert per rank, top-2 routing
// from the synthetic generator at its defaults (skew 1.2 at the start of training), 8 KiB per
// token (hidden 4096 in bf16).
ServerDemand moe_demand(int servers, std::uint64_t seed) {
  const int ep = servers * 8;
  const workload::RoutingTrace trace = workload::generate_routing(
      workload::SyntheticRouting{}, ep, ep, 1, {0}, 1, Rng(seed).derive("control-bench-moe"));
  const auto m = trace.matrix(0, 0, 0);
  const std::vector<std::int64_t> tokens(m.begin(), m.end());
  return demand_from_tokens(
      tokens, ep, ep, {.ep_ranks_per_server = 8, .experts_per_rank = 1, .bytes_per_token = 8192});
}

void plan_speed(benchmark::State& state, const char* planner) {
  const int servers = static_cast<int>(state.range(0));
  const ServerDemand demand = zipf_demand(servers, 1);
  const PlanLimits limits = region_limits(6, 8, Rate::gbps(400), servers);
  const auto p = make_planner(planner);
  for (auto _ : state) {
    benchmark::DoNotOptimize(p->plan(demand, limits));
  }
  state.counters["pairs"] = static_cast<double>(demand.pairs().size());
}

void BM_PlanGreedy(benchmark::State& s) {
  plan_speed(s, "greedy");
}
void BM_PlanGreedyPaper(benchmark::State& s) {
  plan_speed(s, "greedy-paper");
}
void BM_PlanOptimal(benchmark::State& s) {
  plan_speed(s, "optimal");
}
void BM_PlanExact(benchmark::State& s) {
  plan_speed(s, "exact");
}
BENCHMARK(BM_PlanGreedy)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanGreedyPaper)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanOptimal)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanExact)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

void BM_MapToNics(benchmark::State& state) {
  const int servers = static_cast<int>(state.range(0));
  const ServerDemand demand = zipf_demand(servers, 1);
  const CircuitPlan plan =
      make_planner("greedy")->plan(demand, region_limits(6, 8, Rate::gbps(400), servers));
  for (auto _ : state) {
    benchmark::DoNotOptimize(map_to_nics(plan, {.nics = 8, .alpha = 6, .numa = 2}));
  }
}
BENCHMARK(BM_MapToNics)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

// Objective of each planner relative to the optimum ("optimal", checked against "exact" by the
// tests), over 20 seeded demands: mean and worst ratio, and how often the planner is optimal.
void planner_gap(benchmark::State& state, const char* planner, bool moe) {
  const int servers = static_cast<int>(state.range(0));
  const int alpha = static_cast<int>(state.range(1));
  const auto p = make_planner(planner);
  const auto best = make_planner("optimal");
  double sum = 0, worst = 0;
  int optimal = 0, runs = 0;
  for (auto _ : state) {
    sum = worst = 0;
    optimal = runs = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const ServerDemand d = moe ? moe_demand(servers, seed) : zipf_demand(servers, seed);
      const PlanLimits l = region_limits(alpha, 8, Rate::gbps(400), servers);
      const double ratio = max_finish(d, p->plan(d, l), l) / max_finish(d, best->plan(d, l), l);
      sum += ratio;
      worst = std::max(worst, ratio);
      optimal += ratio <= 1.0 + 1e-9;
      ++runs;
    }
  }
  state.counters["ratio_mean"] = sum / runs;
  state.counters["ratio_max"] = worst;
  state.counters["optimal_share"] = static_cast<double>(optimal) / runs;
}

void BM_PlannerGapZipfGreedy(benchmark::State& s) {
  planner_gap(s, "greedy", false);
}
void BM_PlannerGapZipfGreedyPaper(benchmark::State& s) {
  planner_gap(s, "greedy-paper", false);
}
void BM_PlannerGapZipfExact(benchmark::State& s) {
  planner_gap(s, "exact", false);
}
void BM_PlannerGapMoeGreedy(benchmark::State& s) {
  planner_gap(s, "greedy", true);
}
void BM_PlannerGapMoeGreedyPaper(benchmark::State& s) {
  planner_gap(s, "greedy-paper", true);
}
void BM_PlannerGapMoeExact(benchmark::State& s) {
  planner_gap(s, "exact", true);
}
// {servers, alpha}: the paper's 8-server region, the largest the exact planner takes (with a
// scarce alpha too), and a 64-server region (no exact there).
void gap_args(benchmark::internal::Benchmark* b) {
  b->Args({8, 6})->Args({16, 6})->Args({16, 2})->Iterations(1)->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_PlannerGapZipfGreedy)->Apply(gap_args)->Args({64, 6});
BENCHMARK(BM_PlannerGapZipfGreedyPaper)->Apply(gap_args)->Args({64, 6});
BENCHMARK(BM_PlannerGapZipfExact)->Apply(gap_args);
BENCHMARK(BM_PlannerGapMoeGreedy)->Apply(gap_args)->Args({64, 6});
BENCHMARK(BM_PlannerGapMoeGreedyPaper)->Apply(gap_args)->Args({64, 6});
BENCHMARK(BM_PlannerGapMoeExact)->Apply(gap_args);

// Copilot (docs/control-plane.md, "Demand prediction (Copilot)"): one layer's observe() (its
// refit) and predict() at the default options, {experts, ep}: Mixtral (8, 8), Qwen-MoE-32
// (32, 32), Qwen-MoE (64, 16) and DeepSeek-V3 (256, 64). Records of a generated trace at the
// generator's defaults, cycled; the window is full (16 observations) before timing starts.
struct CopilotBench {
  workload::RoutingTrace trace;
  CopilotPredictor copilot;
  int next = 0;

  CopilotBench(int experts, int ep, bool centered)
      : trace(workload::generate_routing(workload::SyntheticRouting{.tokens_per_rank = 4096}, ep,
                                         experts, 1, {0, 1}, 32, Rng(1))),
        copilot(ep, experts, 2, options(centered)) {
    for (int k = 0; k < 16; ++k)
      observe();
  }
  static CopilotOptions options(bool centered) {
    CopilotOptions o;
    o.center_sources = centered;
    return o;
  }
  void observe() {
    const int mb = next++ % trace.micro_batches();
    copilot.observe(1, trace.matrix(0, 0, mb), trace.matrix(0, 1, mb));
  }
};

void copilot_observe(benchmark::State& state, bool centered) {
  CopilotBench bench(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), centered);
  const std::int64_t steps_before = bench.copilot.solver_steps();
  std::int64_t fits = 0;
  for (auto _ : state) {
    bench.observe();
    ++fits;
  }
  state.counters["solver_steps"] =
      static_cast<double>(bench.copilot.solver_steps() - steps_before) / static_cast<double>(fits);
}
void BM_CopilotObserve(benchmark::State& s) {
  copilot_observe(s, false);
}
void BM_CopilotObserveCentered(benchmark::State& s) {
  copilot_observe(s, true);
}

void BM_CopilotPredict(benchmark::State& state) {
  CopilotBench bench(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), false);
  for (auto _ : state) {
    benchmark::DoNotOptimize(bench.copilot.predict(1, bench.trace.matrix(0, 0, 0)));
  }
}
void copilot_args(benchmark::internal::Benchmark* b) {
  b->Args({8, 8})->Args({32, 32})->Args({64, 16})->Args({256, 64})->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_CopilotObserve)->Apply(copilot_args);
BENCHMARK(BM_CopilotObserveCentered)->Apply(copilot_args);
BENCHMARK(BM_CopilotPredict)->Apply(copilot_args);

}  // namespace
