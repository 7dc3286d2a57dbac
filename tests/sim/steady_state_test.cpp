// Steady-state extrapolation (sim/steady_state.h, docs/shortcuts.md): the micro-batches a
// schedule must simulate, by hand; the extrapolated run against the full run of the same job
// (iteration time within the 1% bound, the additive figures with it); when it is refused and
// that it says why; and that `extrapolate: false` is the plain run.
#include "sim/steady_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "config/workload_builder.h"
#include "core/error.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"
#include "study/gpu_busy.h"

namespace mfabric::sim {
namespace {

using workload::PipelineSchedule;

TEST(SteadyStatePlan, OneFOneBSimulatesStagesPlusTheRepeatsAndOneMore) {
  // Stage 0 of 1F1B over m micro-batches: 3 warm-up forwards (PP 4), then F3 B0 F4 B1 ...
  // F(m-1) B(m-4), then B(m-3) .. B(m-1). The backward ends before the last forward are B0 ..
  // B(m-5): m - 4 of them, which 8 repeats need 9 of: m = 13.
  const SteadyStatePlan p = steady_state_plan(PipelineSchedule::OneFOneB, 4, 1, false, 64, 8);
  EXPECT_EQ(p.simulated, 13);
  // With the EP overlap: 4 warm-up forwards, F4 with B0 merged .. F(m-1) with B(m-5): m - 5 ends
  // before the last forward, m = 14.
  EXPECT_EQ(steady_state_plan(PipelineSchedule::OneFOneB, 4, 1, true, 64, 8).simulated, 14);
  EXPECT_EQ(p.micro_batches, 64);
  EXPECT_EQ(p.unit, 1);
  EXPECT_EQ(p.lag, 1);
  ASSERT_EQ(p.steady.size(), 13u);
  for (int i = 0; i < 13; ++i)
    EXPECT_EQ(p.steady[static_cast<std::size_t>(i)], i < 9) << i;
}

TEST(SteadyStatePlan, InterleavedSimulatesWholeGroupsOfStages) {
  const SteadyStatePlan p = steady_state_plan(PipelineSchedule::Interleaved, 4, 2, false, 64, 8);
  EXPECT_EQ(p.unit, 4);
  EXPECT_EQ(p.lag, 4);
  EXPECT_EQ(p.simulated % 4, 0);
  const auto steady = [](const SteadyStatePlan& q) {
    return std::count(q.steady.begin(), q.steady.end(), true);
  };
  EXPECT_GE(steady(p), 8 * 4 + 1);
  // One group fewer would not show the 8 repeats: nothing to skip there.
  const SteadyStatePlan fewer =
      steady_state_plan(PipelineSchedule::Interleaved, 4, 2, false, p.simulated - 4, 8);
  EXPECT_EQ(fewer.simulated, p.simulated - 4);
  EXPECT_LT(steady(fewer), 8 * 4 + 1);
}

TEST(SteadyStatePlan, NothingToSkipSimulatesThemAll) {
  // GPipe's backwards all follow its last forward; 12 micro-batches of PP 4 cannot show 9
  // steady backward ends.
  EXPECT_EQ(steady_state_plan(PipelineSchedule::GPipe, 4, 1, false, 64, 8).simulated, 64);
  EXPECT_EQ(steady_state_plan(PipelineSchedule::OneFOneB, 4, 1, false, 12, 8).simulated, 12);
}

// A run's first-stage ends, made by hand: `chains` lists of 13 ends (1F1B over 4 stages, so the
// first 9 are steady), each chain's ends `period` apart from `start`, plus `wobble` on every
// other one.
RunResult run_with_chains(const std::vector<double>& starts, double period, double wobble) {
  RunResult r;
  r.iteration_times = {Time::from_seconds(10.0)};
  MicroBatchFigures f;
  int gpu = 0;
  for (double start : starts) {
    MicroBatchFigures::BackwardEnds c{0, gpu++, {}};
    for (int i = 0; i < 13; ++i)
      c.ends.push_back(Time::from_seconds(start + i * period + (i % 2 == 1 ? wobble : 0.0)));
    f.first_stage_backward_ends.push_back(c);
  }
  r.micro_batch_figures = f;
  return r;
}

TEST(SteadyStateMeasure, RegularRepeatsExtrapolateByTheirPeriod) {
  const SteadyStatePlan plan = steady_state_plan(PipelineSchedule::OneFOneB, 4, 1, false, 64, 8);
  // Two GPUs with the same ends are one chain (a TP pair): 8 repeats of 0.25 s, none apart.
  const std::optional<Extrapolation> x =
      measure_steady_state(run_with_chains({1, 1}, 0.25, 0), plan);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->samples, 8);
  EXPECT_NEAR(x->period.seconds(), 0.25, 1e-9);
  EXPECT_EQ(x->spread, 0);
  EXPECT_EQ(x->bound, 0);
  // GPUs whose ends lie within 5% of a repeat of one another's are one chain too (an EP group).
  EXPECT_EQ(measure_steady_state(run_with_chains({1, 1 + 1e-4}, 0.25, 0), plan)->samples, 8);
  EXPECT_EQ(measure_steady_state(run_with_chains({1, 1.1}, 0.25, 0), plan)->samples, 16);
  // A chain that ends later sets the iteration; without spread each adds (64 - 13) x 0.25 s.
  const std::optional<Extrapolation> y =
      measure_steady_state(run_with_chains({1, 1.5}, 0.25, 0), plan);
  ASSERT_TRUE(y);
  EXPECT_NEAR(y->period.seconds(), 0.25, 1e-9);
}

TEST(SteadyStateMeasure, ManyNoisyChainsEndWithTheSlowest) {
  const SteadyStatePlan plan = steady_state_plan(PipelineSchedule::OneFOneB, 4, 1, false, 64, 8);
  // Repeats alternate 0.2 and 0.3 s (mean 0.25): one chain grows by the mean; 16 independent
  // chains (ends apart) by more, as the latest of 16 sums of 51 repeats does.
  const std::optional<Extrapolation> one =
      measure_steady_state(run_with_chains({1}, 0.25, 0.05), plan);
  std::vector<double> starts;
  for (int c = 0; c < 16; ++c)
    starts.push_back(1 + 0.02 * c);  // apart by more than 5% of a repeat: not one chain
  const std::optional<Extrapolation> many =
      measure_steady_state(run_with_chains(starts, 0.25, 0.05), plan);
  ASSERT_TRUE(one && many);
  EXPECT_NEAR(one->period.seconds(), 0.25, 0.01);
  EXPECT_GT(many->period.seconds(), one->period.seconds() * 1.02);
  EXPECT_NEAR(one->spread, 0.4, 1e-9);  // (0.3 - 0.2) / 0.25
  EXPECT_GT(one->bound, 0);
}

// Mixtral 8x7B's layers on 64 GPUs (PP 4): global_batch / 8 micro-batches a pipeline (64 by
// default), `extra` more workload fields.
std::string job(const std::string& extra, int global_batch = 512) {
  return R"(
seed: 1
cluster: {servers: 8, link: 400G, gpu: h800}
fabric: fat-tree
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 4, micro_batch: 8, seq: 1024, global_batch: )" +
         std::to_string(global_batch) + extra;
}

Simulation run(const std::string& workload_extra, const std::string& simulation,
               int global_batch = 512) {
  return simulate(parse_experiment(
      job(workload_extra, global_batch) + "}\nsimulation: " + simulation + "\n", "t.yaml"));
}

// A job's graph and that of the short run that extrapolates it (8 steady repeats).
struct ShortAndFull {
  explicit ShortAndFull(const config::Experiment& e)
      : spec(config::training_spec(e)),
        plan(steady_state_plan(spec.schedule, spec.parallelism.pp, spec.parallelism.vp,
                               spec.overlap.ep_comm, spec.micro_batches(), 8)),
        full(config::build_workload(e, nullptr)),
        short_run(config::build_workload(with_micro_batches(e, plan), nullptr)) {}
  workload::TrainingSpec spec;
  SteadyStatePlan plan;
  workload::TaskGraph full;
  workload::TaskGraph short_run;
};

// The short run's cool-down and gradient reduction hash as the full job's tasks: from each shift
// on, each task of the short graph, moved by its shift, is the full graph's task of the same
// kind, operation, phase, GPU, layer and iteration. (Between the two orders' last common task and
// the cool-down the short run's last steady steps have ids of their own: they hash as another
// micro-batch's would, and their routes are sampled as the steady repeats' are.)
TEST(FlowHashShifts, GiveTheCoolDownTheFullJobsTaskIds) {
  for (const auto& [pp, extra] : std::vector<std::pair<int, std::string>>{
           {4, ""},
           {4, ", schedule: interleaved, vp: 2"},
           {4, ", schedule: dualpipe"},
           {4, ", overlap: {ep_comm: true}"},
           {2, ", overlap: {ep_comm: true}"},
           {8, ", overlap: {ep_comm: true}"},
           {4, ", schedule: interleaved, vp: 2, overlap: {ep_comm: true}"},
           {4, ", recompute: full"},
           {2, ""},
           {8, ""}}) {
    SCOPED_TRACE(std::to_string(pp) + extra);
    // 48 micro-batches a pipeline; two iterations for the plain 1F1B job (the second iteration's
    // shifts), one for the others (the test runs in the sanitizer suite too).
    const int iterations = pp == 4 && extra.empty() ? 2 : 1;
    std::string yaml =
        job(extra, 384) + "}\nsimulation: {iterations: " + std::to_string(iterations) + "}\n";
    yaml.replace(yaml.find("pp: 4"), 5, "pp: " + std::to_string(pp));
    if (pp == 8) yaml.replace(yaml.find("ep: 4"), 5, "ep: 2");  // 64 GPUs = TP x PP x EP
    const ShortAndFull graphs(parse_experiment(yaml, "t.yaml"));
    const SteadyStatePlan& plan = graphs.plan;
    const workload::TaskGraph& full = graphs.full;
    const workload::TaskGraph& short_run = graphs.short_run;
    ASSERT_LT(plan.simulated, plan.micro_batches);
    const std::vector<FlowHashShift> shifts = full_job_flow_hash_shifts(short_run, plan);
    // Per iteration: one shift at its cool-down, and one at its start after the first.
    ASSERT_EQ(shifts.size(), static_cast<std::size_t>(2 * iterations - 1));
    EXPECT_EQ(full.size(), short_run.size() + static_cast<std::size_t>(shifts.back().by));
    if (iterations == 2) {
      // The second iteration starts where the first's skipped tasks put it.
      const auto second = static_cast<std::size_t>(shifts[1].from + shifts[1].by);
      EXPECT_EQ(full.tasks()[second].iteration, 1);
      EXPECT_EQ(full.tasks()[second - 1].iteration, 0);
    }
    std::size_t compared = 0;
    for (std::size_t n = 0; n < shifts.size(); n += 2) {
      // From the cool-down to the end of its iteration (the next shift starts the next one).
      const auto from = static_cast<std::size_t>(shifts[n].from);
      const std::size_t to =
          n + 1 < shifts.size() ? static_cast<std::size_t>(shifts[n + 1].from) : short_run.size();
      for (std::size_t k = from; k < to; ++k) {
        const workload::Task& a = short_run.tasks()[k];
        const workload::Task& b = full.tasks()[k + static_cast<std::size_t>(shifts[n].by)];
        const bool same = a.kind == b.kind && a.op == b.op && a.phase == b.phase &&
                          a.gpu() == b.gpu() && a.peer() == b.peer() && a.layer == b.layer &&
                          a.iteration == b.iteration && (a.micro_batch < 0) == (b.micro_batch < 0);
        ASSERT_TRUE(same) << "task " << k << " moved by " << shifts[n].by;
        // The gradient reduction and what follows it are the same tasks in both.
        if (a.micro_batch < 0) {
          ASSERT_EQ(a.bytes(), b.bytes()) << k;
          ASSERT_EQ(a.duration(), b.duration()) << k;
        }
        ++compared;
      }
    }
    EXPECT_GT(compared, 0u);
  }
}

// The short run is the job's beginning: every task up to where the two graphs' build orders part
// (the first stage's last forward of the short run) is the full graph's, with its dependencies,
// bytes and durations; and every all-to-all of the short run's micro-batches has the full job's
// matrix, the routing of each data-parallel replica's micro-batches included (Megatron's layout:
// several replicas of the experts).
TEST(WithMicroBatches, TheShortRunIsTheJobsBeginning) {
  const config::Experiment e = parse_experiment(R"(
seed: 1
cluster: {servers: 8, link: 400G, gpu: h800}
fabric: fat-tree
workload: {model: mixtral-8x7b, tp: 2, pp: 4, ep: 4, micro_batch: 1, seq: 1024, global_batch: 512,
           recipe: false}
)",
                                                "t.yaml");
  const ShortAndFull graphs(e);
  const workload::TrainingSpec& spec = graphs.spec;
  const SteadyStatePlan& plan = graphs.plan;
  const workload::TaskGraph& full = graphs.full;
  const workload::TaskGraph& short_run = graphs.short_run;
  ASSERT_GT(spec.parallelism.expert_dp(), 1);
  ASSERT_LT(plan.simulated, plan.micro_batches);
  // The common beginning: at least the micro-batches before the last PP.
  workload::TaskId k = 0;
  for (; k < static_cast<workload::TaskId>(short_run.size()); ++k) {
    const workload::Task& a = short_run.task(k);
    const workload::Task& b = full.task(k);
    const auto da = short_run.deps(k);
    const auto db = full.deps(k);
    if (!(a.kind == b.kind && a.op == b.op && a.phase == b.phase && a.gpu() == b.gpu() &&
          a.layer == b.layer && a.micro_batch == b.micro_batch && a.bytes() == b.bytes() &&
          a.duration() == b.duration() && std::equal(da.begin(), da.end(), db.begin(), db.end()))) {
      break;
    }
  }
  EXPECT_GE(short_run.task(k).micro_batch, plan.simulated - spec.parallelism.pp) << "task " << k;
  // Every all-to-all matrix, by (phase, operation, layer, micro-batch, group).
  using Key = std::tuple<int, int, int, int, std::vector<std::int32_t>>;
  const auto matrices = [](const workload::TaskGraph& g, int below) {
    std::map<Key, const workload::ByteMatrix*> out;
    for (const workload::Task& t : g.tasks()) {
      if (t.matrix() < 0 || t.micro_batch >= below) continue;
      const auto& members = g.group(t.group());
      out[{static_cast<int>(t.phase), static_cast<int>(t.op), t.layer, t.micro_batch,
           std::vector<std::int32_t>(members.begin(), members.end())}] = &g.matrix(t.matrix());
    }
    return out;
  };
  const auto in_short = matrices(short_run, plan.simulated);
  const auto in_full = matrices(full, plan.simulated);
  ASSERT_EQ(in_short.size(), in_full.size());
  ASSERT_GT(in_short.size(), 100u);
  for (const auto& [key, m] : in_short) {
    const auto it = in_full.find(key);
    ASSERT_NE(it, in_full.end());
    ASSERT_EQ(m->bytes, it->second->bytes) << "micro-batch " << std::get<3>(key);
  }
}

TEST(Extrapolation, MatchesTheFullRunWithinItsBound) {
  const Simulation full = run("", "{extrapolate: false}");
  const Simulation fast = run("", "{extrapolate: true}");
  ASSERT_FALSE(full.result.extrapolation);
  ASSERT_TRUE(fast.result.extrapolation);
  const Extrapolation& x = *fast.result.extrapolation;
  EXPECT_EQ(x.micro_batches, 64);
  EXPECT_EQ(x.simulated, 13);
  EXPECT_LE(x.bound, kExtrapolationBound);
  const double t = full.result.mean_iteration_time().seconds();
  EXPECT_NEAR(fast.result.mean_iteration_time().seconds(), t, 0.01 * t);
  EXPECT_LT(fast.graph.size() * 4, full.graph.size());
  // The additive figures are the whole job's: each class's communication, exposed time, compute.
  for (std::size_t k = 0; k < kTrafficClasses.size(); ++k) {
    const double c = full.result.comm_time[k].seconds();
    EXPECT_NEAR(fast.result.comm_time[k].seconds(), c, 0.05 * c + 1e-9) << k;
  }
  const double exposed = full.result.exposed_comm.seconds();
  EXPECT_NEAR(fast.result.exposed_comm.seconds(), exposed, 0.05 * exposed);
  // The skipped micro-batches' bytes are accounted: the job's bytes, estimated, against those the
  // full run sent (the network's own counter stays the short run's).
  const auto sent = static_cast<double>(full.result.transfers.bytes_sent);
  EXPECT_NEAR(static_cast<double>(x.bytes_sent), sent, 0.01 * sent);
  EXPECT_LT(static_cast<double>(fast.result.transfers.bytes_sent), 0.5 * sent);
  const std::vector<Time> compute_full = compute_time_per_gpu(full.graph, full.result);
  const std::vector<Time> compute_fast = compute_time_per_gpu(fast.graph, fast.result);
  ASSERT_EQ(compute_full.size(), compute_fast.size());
  for (std::size_t g = 0; g < compute_full.size(); ++g)
    EXPECT_NEAR(compute_fast[g].seconds(), compute_full[g].seconds(),
                0.005 * compute_full[g].seconds());
  // And every output names the shortcut.
  const std::vector<Shortcut> s = shortcuts(fast);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "extrapolate");
  EXPECT_TRUE(s[0].used);
  EXPECT_NE(s[0].detail.find("simulated 13 of 64 micro-batches"), std::string::npos);
  EXPECT_TRUE(shortcuts(full).empty());
}

// Under the EP overlap (merged forward-backward steps, one more warm-up forward) the steady phase
// repeats too: on a 64-GPU job of 64 micro-batches (TP 2, PP 4, EP 8, a sequence each) 14 are
// simulated and the iteration is within the bound. (Before steps were merged the first stage's
// forwards ran ahead of its backwards and a short run's steady phase was not the job's:
// docs/shortcuts.md.)
TEST(Extrapolation, HoldsItsBoundUnderTheEpOverlap) {
  const auto run_with = [](const char* extrapolate) {
    return simulate(parse_experiment(
        std::string("seed: 1\ncluster: {servers: 8, link: 400G, gpu: h800}\nfabric: fat-tree\n"
                    "workload: {model: mixtral-8x7b, tp: 2, pp: 4, ep: 8, micro_batch: 1, "
                    "global_batch: 512, recipe: false, distributed_optimizer: true, "
                    "overlap: {ep_comm: true}}\nsimulation: {extrapolate: ") +
            extrapolate + "}\n",
        "t.yaml"));
  };
  const Simulation full = run_with("false");
  const Simulation fast = run_with("true");
  ASSERT_TRUE(fast.result.extrapolation) << fast.extrapolation_declined;
  EXPECT_EQ(fast.result.extrapolation->simulated, 14);
  EXPECT_LE(fast.result.extrapolation->bound, kExtrapolationBound);
  const double t = full.result.mean_iteration_time().seconds();
  EXPECT_NEAR(fast.result.mean_iteration_time().seconds(), t, kExtrapolationBound * t);
}

// mFabric's control plane counted as the full run counts it: where circuits stay up after the
// pipeline fills (4 reconfigurations, all before the steady phase) the skipped micro-batches add
// none; where every micro-batch's all-to-alls switch circuits they add their steady rate. Plans
// (one per all-to-all) grow with the micro-batches either way.
TEST(Extrapolation, CountsTheControlPlaneAsTheFullRunDoes) {
  for (const char* fabric :
       {"mfabric:alpha=6,region=2,reconfiguration=25ms,policy=block,planner=greedy",
        "mfabric:alpha=1,region=4,reconfiguration=100us,policy=block,planner=greedy"}) {
    SCOPED_TRACE(fabric);
    const auto run_on = [&](const char* simulation) {
      std::string yaml = job("") + "}\nsimulation: " + simulation + "\n";
      yaml.replace(yaml.find("fat-tree"), 8, std::string("\"") + fabric + "\"");
      return simulate(parse_experiment(yaml, "t.yaml"));
    };
    const Simulation full = run_on("{extrapolate: false}");
    const Simulation fast = run_on("{extrapolate: true}");
    ASSERT_TRUE(fast.result.extrapolation);
    ASSERT_TRUE(full.control && fast.control);
    const ControlStats& f = *full.control;
    const ControlStats& x = *fast.control;
    EXPECT_NEAR(static_cast<double>(x.reconfigurations), static_cast<double>(f.reconfigurations),
                0.02 * static_cast<double>(f.reconfigurations));
    EXPECT_NEAR(static_cast<double>(x.held), static_cast<double>(f.held),
                0.02 * static_cast<double>(f.held));
    EXPECT_NEAR(x.held_time.seconds(), f.held_time.seconds(), 0.02 * f.held_time.seconds());
    EXPECT_NEAR(static_cast<double>(x.unchanged), static_cast<double>(f.unchanged),
                0.05 * static_cast<double>(f.unchanged));
  }
}

TEST(Extrapolation, ByDefaultOnlyWhereItSimulatesAtMostHalf) {
  // 64 micro-batches run as 13: on by default.
  EXPECT_TRUE(run("", "{}").result.extrapolation);
  // 16 run as 13 would not save half: off, and nothing said (it was not asked for).
  const Simulation few = run("", "{}", 128);
  EXPECT_FALSE(few.result.extrapolation);
  EXPECT_TRUE(shortcuts(few).empty());
}

TEST(Extrapolation, AskedWhereItCannotSaysWhy) {
  const Simulation gpipe = run(", schedule: gpipe", "{extrapolate: true}");
  EXPECT_FALSE(gpipe.result.extrapolation);
  ASSERT_EQ(shortcuts(gpipe).size(), 1u);
  EXPECT_FALSE(shortcuts(gpipe)[0].used);
  EXPECT_NE(shortcuts(gpipe)[0].detail.find("GPipe"), std::string::npos);
  const Simulation dualpipe = run(", schedule: dualpipe", "{extrapolate: true}");
  EXPECT_FALSE(dualpipe.result.extrapolation);
  EXPECT_NE(dualpipe.extrapolation_declined.find("DualPipe"), std::string::npos);
  const Simulation few = run("", "{extrapolate: true}", 64);
  EXPECT_FALSE(few.result.extrapolation);
  EXPECT_NE(few.extrapolation_declined.find("8 micro-batches a pipeline are too few"),
            std::string::npos)
      << few.extrapolation_declined;
}

TEST(Extrapolation, AValueOtherThanTrueOrFalseIsRefused) {
  try {
    parse_experiment(job("}\nsimulation: {extrapolate: sometimes}\n"), "t.yaml");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.extrapolate") << e.what();
  }
}

}  // namespace
}  // namespace mfabric::sim
