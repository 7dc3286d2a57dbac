// mfabric compare's runner (docs/cli.md, "mfabric compare"): the paper's grid, runs on threads,
// figures relative to the fat-tree.
#include "study/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <cmath>

#include "core/error.h"
#include "fabric/builders.h"

namespace mfabric::study {
namespace {

template <typename Fn>
std::string error_field(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(Compare, ThePapersGrid) {
  const CompareSpec s = paper_compare();
  EXPECT_EQ(s.models.size(), 5u);
  EXPECT_EQ(s.links.size(), 4u);
  EXPECT_EQ(s.fabrics.size(), 5u);
  EXPECT_EQ(s.base.cluster.servers, 128);
  // Every model fills 1024 GPUs: DP = 1024 / (TP x PP x EP) is whole.
  for (const config::TrainingJob& m : s.models)
    EXPECT_EQ(1024 % (m.tp * m.pp * m.ep), 0) << m.model;
  EXPECT_EQ(paper_setup("deepseek-r1", "--models").pp, 16);
  // An alias of a paper model's architecture gets its setup under the name asked for.
  const config::TrainingJob v3 = paper_setup("deepseek-v3", "--models");
  EXPECT_EQ(v3.model, "deepseek-v3");
  EXPECT_EQ(v3.ep, 64);
  EXPECT_EQ(v3.convention, "paper");
  EXPECT_EQ(error_field([] { paper_setup("gpt-5", "--models"); }), "--models");
}

TEST(Compare, FabricsByLabelOrSpec) {
  EXPECT_EQ(parse_fabric_choice("fat-tree-3to1", "--fabrics").spec, "fat-tree:oversubscription=3");
  EXPECT_EQ(parse_fabric_choice("rail-only", "--fabrics").label, "rail-only");
  EXPECT_EQ(parse_fabric_choice("mfabric:alpha=4", "--fabrics").spec, "mfabric:alpha=4");
  EXPECT_EQ(error_field([] { parse_fabric_choice("torus", "--fabrics"); }), "--fabrics");
}

TEST(Compare, MfabricGetsOneEpGroupPerRegion) {
  const CompareSpec s = paper_compare();
  const config::TrainingJob qwen = paper_setup("qwen-moe-32", "");
  const config::Experiment e = run_experiment(s, qwen, Rate::gbps(400), s.fabrics.back());
  // EP 32 x TP 1 / 8 GPUs per server = 4 servers.
  EXPECT_EQ(e.fabric.params().at("region"), "4");
  EXPECT_EQ(e.cluster.link, Rate::gbps(400));
  EXPECT_EQ(e.model->ep, 32);
}

// 8 servers: Mixtral 8x7B, TP 4 x PP 2 x EP 8, a short job.
CompareSpec small(int jobs) {
  CompareSpec s = paper_compare();
  s.base.cluster.servers = 8;
  config::TrainingJob m = paper_setup("mixtral-8x7b", "");
  m.pp = 2;
  m.micro_batch = 2;
  m.global_batch = 8;
  m.seq = 256;
  s.models = {m};
  s.links = {Rate::gbps(100), Rate::gbps(400)};
  s.fabrics = {parse_fabric_choice("fat-tree", ""), parse_fabric_choice("fat-tree-3to1", ""),
               parse_fabric_choice("mfabric", "")};
  s.jobs = jobs;
  // One run each: the spread has tests of its own (CompareSpread).
  s.spread = parse_spread("none", "");
  return s;
}

TEST(Compare, RunsEveryPairAndRelatesToTheFatTree) {
  const CompareResult r = run_compare(small(2));
  ASSERT_EQ(r.runs.size(), 6u);
  EXPECT_EQ(r.runs[0].fabric, "fat-tree");
  EXPECT_EQ(r.runs[0].link_gbps, 100);
  EXPECT_EQ(r.runs[3].link_gbps, 400);
  EXPECT_EQ(r.runs[5].fabric, "mfabric");
  for (const CompareRun& run : r.runs) {
    EXPECT_TRUE(run.error.empty()) << run.error;
    EXPECT_GT(run.iteration_time_s, 0);
    EXPECT_EQ(run.gpus, 64);
    // Tokens per iteration: global batch x EP x seq.
    EXPECT_NEAR(run.tokens_per_s * run.iteration_time_s, 8.0 * 8 * 256, 1e-6);
    ASSERT_TRUE(run.relative_iteration_time.has_value());
    ASSERT_TRUE(run.perf_per_dollar_vs_fat_tree.has_value());
    const CompareRun& base = r.runs[run.link_gbps == 100 ? 0 : 3];
    EXPECT_DOUBLE_EQ(*run.relative_iteration_time, run.iteration_time_s / base.iteration_time_s);
    // (1 / time / cost) against the fat-tree's.
    EXPECT_NEAR(*run.perf_per_dollar_vs_fat_tree,
                (base.iteration_time_s * base.cost_paper.total()) /
                    (run.iteration_time_s * run.cost_paper.total()),
                1e-12);
    EXPECT_EQ(run.reconfiguration.has_value(), run.fabric == "mfabric");
  }
  EXPECT_DOUBLE_EQ(*r.runs[0].relative_iteration_time, 1.0);
  EXPECT_DOUBLE_EQ(*r.runs[0].perf_per_dollar_vs_fat_tree, 1.0);
  // A 3:1 fat-tree and mFabric cost less than the non-blocking fat-tree.
  EXPECT_LT(r.runs[4].cost_paper.total(), r.runs[3].cost_paper.total());
  EXPECT_LT(r.runs[5].cost_paper.total(), r.runs[3].cost_paper.total());
  // The timeline: the first mFabric run's region 0, reconfigurations and all-to-alls.
  EXPECT_EQ(r.timeline_run, "mixtral-8x7b 100G mfabric");
  bool reconfiguration = false, all_to_all = false;
  for (const TimelineSpan& s : r.timeline) {
    EXPECT_LE(s.start_s, s.end_s);
    (s.reconfiguration ? reconfiguration : all_to_all) = true;
  }
  EXPECT_TRUE(reconfiguration);
  EXPECT_TRUE(all_to_all);
}

TEST(Compare, ThreadsDoNotChangeTheResults) {
  // One link speed: three runs, two threads.
  const auto spec = [](int jobs) {
    CompareSpec s = small(jobs);
    s.links = {Rate::gbps(400)};
    return s;
  };
  const CompareResult one = run_compare(spec(1));
  const CompareResult two = run_compare(spec(2));
  ASSERT_EQ(one.runs.size(), 3u);
  ASSERT_EQ(one.runs.size(), two.runs.size());
  for (std::size_t k = 0; k < one.runs.size(); ++k) {
    EXPECT_EQ(one.runs[k].iteration_time_s, two.runs[k].iteration_time_s);
    EXPECT_EQ(one.runs[k].cost_built.total(), two.runs[k].cost_built.total());
  }
  EXPECT_EQ(one.timeline.size(), two.timeline.size());
}

TEST(Compare, BadChoicesFailBeforeAnyRun) {
  CompareSpec s = small(1);
  s.links = {Rate::gbps(300)};  // no prices at 300G
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--links");
  s = small(1);
  s.models.front().model = "no-such-model";
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--models");
  s = small(1);
  s.models.front().tp = 8;  // 8 x 2 x 8 = 128 GPUs on a 64-GPU cluster
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--models");
  s = small(1);
  s.fabrics = {{"bad", "mfabric:alpha=9", ""}};
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--fabrics.alpha");
  // A backend that does not exist: --backend's fault, found before any run (not each run's
  // error, blamed on the experiment file).
  s = small(1);
  s.base.backend = "quantum";
  int progress_calls = 0;
  try {
    run_compare(s, [&](int, int) { ++progress_calls; });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--backend: unknown backend 'quantum' (known: flow, packet)");
  }
  EXPECT_EQ(progress_calls, 0);
}

TEST(CompareAssumptions, PaperMeansTheControllerAndTheBaselinesAllToAllsOfItsSimulator) {
  EXPECT_EQ(parse_assumptions("paper", ""), Assumptions::Paper);
  EXPECT_EQ(parse_assumptions("default", ""), Assumptions::Default);
  EXPECT_EQ(error_field([] { parse_assumptions("papers", "--assumptions"); }), "--assumptions");
  const std::vector<FabricChoice> paper = fabrics_for(Assumptions::Paper);
  std::map<std::string, FabricChoice> by;
  for (const FabricChoice& f : paper)
    by[f.label] = f;
  EXPECT_NE(by.at("mfabric").spec.find("policy=paper-sim"), std::string::npos);
  EXPECT_EQ(by.at("fat-tree").all_to_all, "direct");
  EXPECT_EQ(by.at("rail-optimized").all_to_all, "direct");
  EXPECT_EQ(by.at("rail-optimized+hierarchical").all_to_all, "hierarchical");
  EXPECT_EQ(by.at("fat-tree+hierarchical").spec, "fat-tree");
  EXPECT_EQ(fabrics_for(Assumptions::Default).size(), paper_fabrics().size());
}

TEST(CompareAssumptions, APlusNamesTheAllToAllOfAFabricsRuns) {
  const FabricChoice f = parse_fabric_choice("fat-tree-3to1+hierarchical", "--fabrics");
  EXPECT_EQ(f.label, "fat-tree-3to1+hierarchical");
  EXPECT_EQ(f.spec, "fat-tree:oversubscription=3");
  EXPECT_EQ(f.all_to_all, "hierarchical");
  EXPECT_EQ(error_field([] { parse_fabric_choice("fat-tree+ring", "--fabrics"); }), "--fabrics");
  // The runs use it: a hierarchical all-to-all on the fat-tree differs from direct.
  CompareSpec s = small(1);
  s.links = {Rate::gbps(100)};
  s.fabrics = {parse_fabric_choice("fat-tree", ""), parse_fabric_choice("fat-tree+direct", ""),
               parse_fabric_choice("fat-tree+hierarchical", "")};
  s.baselines = Baselines::AsGiven;
  const CompareResult r = run_compare(s);
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.runs[0].iteration_time_s, r.runs[1].iteration_time_s);
  EXPECT_NE(r.runs[0].iteration_time_s, r.runs[2].iteration_time_s);
  EXPECT_EQ(r.runs[0].all_to_all, "direct");  // the fat-tree's own
  EXPECT_EQ(r.runs[2].all_to_all, "hierarchical");
  for (const CompareRun& run : r.runs)
    EXPECT_TRUE(run.all_to_all_trials.empty());
}

// The strongest baseline (the default): an electrical fabric without a named all-to-all runs
// with each of direct, PXN and hierarchical and keeps the fastest, every one recorded; one that
// names its all-to-all, and every fabric that is not electrical, runs once.
TEST(CompareBaselines, EachElectricalFabricKeepsItsFastestAllToAll) {
  CompareSpec s = small(1);
  s.links = {Rate::gbps(100)};
  s.fabrics = {parse_fabric_choice("fat-tree", ""),
               parse_fabric_choice("rail-optimized", ""),
               parse_fabric_choice("fat-tree+direct", ""),
               parse_fabric_choice("fat-tree+pxn", ""),
               parse_fabric_choice("fat-tree+hierarchical", ""),
               parse_fabric_choice("mfabric", "")};
  ASSERT_EQ(s.baselines, Baselines::Strongest);
  int started = -1, trials = -1;
  const CompareResult r = run_compare(s, {}, [&](const RunsStart& st) {
    started = st.runs;
    trials = st.trials;
  });
  EXPECT_EQ(started, 3 + 3 + 3 + 1);
  EXPECT_EQ(trials, 6);
  ASSERT_EQ(r.runs.size(), 6u);
  const CompareRun& fat_tree = r.runs[0];
  ASSERT_EQ(fat_tree.all_to_all_trials.size(), 3u);
  const std::vector<double> named = {r.runs[2].iteration_time_s, r.runs[3].iteration_time_s,
                                     r.runs[4].iteration_time_s};
  const std::vector<std::string> names = {"direct", "pxn", "hierarchical"};
  const auto fastest = std::min_element(named.begin(), named.end()) - named.begin();
  EXPECT_EQ(fat_tree.iteration_time_s, named[static_cast<std::size_t>(fastest)]);
  EXPECT_EQ(fat_tree.all_to_all, names[static_cast<std::size_t>(fastest)]);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(fat_tree.all_to_all_trials[i].algorithm, names[i]);
    EXPECT_EQ(fat_tree.all_to_all_trials[i].iteration_time_s, named[i]);
    EXPECT_TRUE(fat_tree.all_to_all_trials[i].error.empty());
  }
  // The named ones and mFabric ran once, with what they name or their own.
  for (std::size_t i = 2; i < 6; ++i)
    EXPECT_TRUE(r.runs[i].all_to_all_trials.empty()) << r.runs[i].fabric;
  EXPECT_EQ(r.runs[5].all_to_all, "proxy");
  EXPECT_EQ(r.runs[1].all_to_all_trials.size(), 3u);
  // The others relate to the fastest fat-tree.
  EXPECT_DOUBLE_EQ(*r.runs[5].relative_iteration_time,
                   r.runs[5].iteration_time_s / fat_tree.iteration_time_s);
  // An experiment that names its all-to-all keeps it on every fabric.
  s.base.algorithms.all_to_all = "direct";
  s.fabrics = {parse_fabric_choice("fat-tree", "")};
  const CompareResult given = run_compare(s);
  EXPECT_TRUE(given.runs.at(0).all_to_all_trials.empty());
  EXPECT_EQ(given.runs.at(0).all_to_all, "direct");
  EXPECT_EQ(given.runs.at(0).iteration_time_s, r.runs[2].iteration_time_s);
}

// The spread: the runs a verdict rests on (mFabric's and the fat-tree's, with the all-to-all it
// kept) run again at the seeds after the comparison's and at both ends of the skew band; the
// others do not. The verdict's range is over the pairs at one seed and skew.
TEST(CompareSpread, TheVerdictsRunsRunAgainAtOtherSeedsAndSkews) {
  CompareSpec s = small(2);
  s.links = {Rate::gbps(100)};
  s.fabrics = {parse_fabric_choice("fat-tree", ""), parse_fabric_choice("fat-tree-3to1", ""),
               parse_fabric_choice("mfabric", "")};
  s.spread = parse_spread("full", "");
  s.spread.seeds = 2;
  int planned = -1;
  const CompareResult r = run_compare(s, {}, [&](const RunsStart& st) { planned = st.spread; });
  EXPECT_EQ(planned, 2 * 3);  // two runs, each at seed 2 and at the two skews
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.spread_seeds, 2);
  EXPECT_TRUE(r.spread_skew_band);
  const CompareRun& fat_tree = r.runs[0];
  const CompareRun& mfabric = r.runs[2];
  EXPECT_TRUE(r.runs[1].spread.empty());
  for (const CompareRun* run : {&fat_tree, &mfabric}) {
    ASSERT_EQ(run->spread.size(), 3u) << run->fabric;
    EXPECT_EQ(run->spread[0].seed, s.base.seed + 1);
    EXPECT_EQ(run->spread[0].skew, "default");
    EXPECT_EQ(run->spread[1].skew, "low");
    EXPECT_EQ(run->spread[2].skew, "high");
    EXPECT_EQ(run->spread[1].seed, s.base.seed);
    for (const SpreadRun& x : run->spread) {
      EXPECT_TRUE(x.error.empty()) << x.error;
      EXPECT_GT(x.iteration_time_s, 0);
    }
    // A lower skew spreads the experts' load: the all-to-alls, and the iteration, are shorter.
    EXPECT_LT(run->spread[1].iteration_time_s, run->iteration_time_s) << run->fabric;
    EXPECT_GT(run->spread[2].iteration_time_s, run->iteration_time_s) << run->fabric;
  }
  // The fat-tree's spread ran with the all-to-all it kept: the same as its own run at seed 1.
  CompareSpec again = s;
  again.fabrics = {parse_fabric_choice("fat-tree+" + fat_tree.all_to_all, "")};
  again.base.seed = s.base.seed + 1;
  again.spread = parse_spread("none", "");
  EXPECT_EQ(run_compare(again).runs.at(0).iteration_time_s, fat_tree.spread[0].iteration_time_s);
  // The verdict's range, from the pairs by hand.
  const std::vector<Verdict> v = verdicts(r.runs, fabric::CostConvention::Paper);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].pairs, 4);
  EXPECT_EQ(v[0].baseline_all_to_all, fat_tree.all_to_all);
  std::vector<double> speeds{fat_tree.iteration_time_s / mfabric.iteration_time_s};
  for (std::size_t i = 0; i < 3; ++i)
    speeds.push_back(fat_tree.spread[i].iteration_time_s / mfabric.spread[i].iteration_time_s);
  EXPECT_DOUBLE_EQ(v[0].speed.value, speeds[0]);
  EXPECT_DOUBLE_EQ(v[0].speed.low, *std::min_element(speeds.begin(), speeds.end()));
  EXPECT_DOUBLE_EQ(v[0].speed.high, *std::max_element(speeds.begin(), speeds.end()));
  const double cost_ratio = mfabric.cost_paper.total() / fat_tree.cost_paper.total();
  ASSERT_TRUE(v[0].perf_per_dollar.has_value());
  EXPECT_DOUBLE_EQ(v[0].perf_per_dollar->low, v[0].speed.low / cost_ratio);
}

// With a routing trace or a forced-balanced router there is no skew to vary: the seeds only.
// --spread seeds drops the band; none runs each once, and the verdict is its one pair.
TEST(CompareSpread, NoSkewBandWithoutASkewedSyntheticRouterAndNoneRunsOnce) {
  CompareSpec s = small(2);
  s.links = {Rate::gbps(100)};
  s.fabrics = {parse_fabric_choice("fat-tree+direct", ""), parse_fabric_choice("fat-tree", ""),
               parse_fabric_choice("mfabric", "")};
  s.baselines = Baselines::AsGiven;
  config::TrainingJob balanced = s.models.front();
  balanced.synthetic.balance = workload::RoutingBalance::Forced;
  s.base.model = balanced;
  s.spread = parse_spread("full", "");
  CompareResult r = run_compare(s);
  EXPECT_FALSE(r.spread_skew_band);
  EXPECT_EQ(r.runs[1].spread.size(), 2u);  // seeds 2 and 3
  EXPECT_TRUE(r.runs[0].spread.empty());   // not the baseline's label
  s.base.model.reset();
  s.spread = parse_spread("seeds", "");
  r = run_compare(s);
  EXPECT_EQ(r.runs[2].spread.size(), 2u);
  s.spread = parse_spread("none", "");
  r = run_compare(s);
  EXPECT_TRUE(r.runs[2].spread.empty());
  const std::vector<Verdict> v = verdicts(r.runs, fabric::CostConvention::Paper);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].pairs, 1);
  EXPECT_EQ(v[0].speed.low, v[0].speed.high);
  EXPECT_EQ(error_field([] { parse_spread("some", "--spread"); }), "--spread");
  s.spread.seeds = 0;
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--seeds");
}

TEST(CompareBaselines, ParsesItsTwoNamesAndRefusesOthers) {
  EXPECT_EQ(parse_baselines("strongest", "--baselines"), Baselines::Strongest);
  EXPECT_EQ(parse_baselines("as-given", "--baselines"), Baselines::AsGiven);
  EXPECT_EQ(error_field([] { parse_baselines("best", "--baselines"); }), "--baselines");
  EXPECT_STREQ(to_string(Baselines::AsGiven), "as-given");
}

// Hand-made runs of one model and link: the fat-tree (10 s; $4M paper, $3M built), mFabric
// (12 s; $2M paper, $2.5M built) and a failed run.
std::vector<CompareRun> costed_runs() {
  const auto run = [](const std::string& fabric, double seconds, double paper, double built) {
    CompareRun r;
    r.model = "m";
    r.link_gbps = 400;
    r.fabric = fabric;
    r.iteration_time_s = seconds;
    r.cost_paper.switch_ports = paper;
    r.cost_built.switch_ports = built;
    return r;
  };
  std::vector<CompareRun> runs = {run("fat-tree", 10, 4e6, 3e6), run("mfabric", 12, 2e6, 2.5e6),
                                  run("topoopt", 0, 0, 0)};
  runs[2].error = "failed";
  return runs;
}

TEST(CompareConvention, PerfPerDollarCountsCostInTheComparisonsConvention) {
  std::vector<CompareRun> runs = costed_runs();
  relate_to_fat_tree(runs, fabric::CostConvention::Paper);
  // (10 s x $4M) / (12 s x $2M) = 5/3; built: (10 x 3) / (12 x 2.5) = 1.
  ASSERT_TRUE(runs[1].perf_per_dollar_vs_fat_tree.has_value());
  EXPECT_NEAR(*runs[1].perf_per_dollar_vs_fat_tree, 5.0 / 3.0, 1e-12);
  EXPECT_NEAR(*runs[1].relative_iteration_time, 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(*runs[0].perf_per_dollar_vs_fat_tree, 1.0);
  EXPECT_FALSE(runs[2].perf_per_dollar_vs_fat_tree.has_value());
  relate_to_fat_tree(runs, fabric::CostConvention::Built);
  EXPECT_NEAR(*runs[1].perf_per_dollar_vs_fat_tree, 1.0, 1e-12);
  EXPECT_NEAR(*runs[1].relative_iteration_time, 1.2, 1e-12);
  // Without a fat-tree run the relative figures are cleared, not left from before.
  runs[0].fabric = "fat-tree-3to1";
  relate_to_fat_tree(runs, fabric::CostConvention::Built);
  EXPECT_FALSE(runs[1].perf_per_dollar_vs_fat_tree.has_value());
  EXPECT_FALSE(runs[1].relative_iteration_time.has_value());
  EXPECT_EQ(fat_tree_of(runs, runs[1]), nullptr);
  EXPECT_STREQ(cost_convention_label(fabric::CostConvention::Built), "built topology");
  EXPECT_STREQ(cost_convention_label(fabric::CostConvention::Paper), "paper formulas");
}

TEST(CompareConvention, ReconfigurableRunsAreKnownByTheirLabelOrSummary) {
  CompareRun r;
  for (const char* label : {"mfabric", "mfabric:alpha=4", "mfabric+direct"}) {
    r.fabric = label;
    EXPECT_TRUE(is_reconfigurable_run(r)) << label;
  }
  for (const char* label : {"fat-tree", "mfabricated", "topoopt", ""}) {
    r.fabric = label;
    EXPECT_FALSE(is_reconfigurable_run(r)) << label;
  }
  r.reconfiguration = ReconfigurationSummary{};
  EXPECT_TRUE(is_reconfigurable_run(r));
}

TEST(CompareConvention, RunCompareUsesTheSpecsConventionAndRecordsWhereTimeGoes) {
  CompareSpec s = small(1);
  s.links = {Rate::gbps(400)};
  s.fabrics = {parse_fabric_choice("fat-tree", ""), parse_fabric_choice("mfabric", "")};
  s.cost_convention = fabric::CostConvention::Built;
  const CompareResult r = run_compare(s);
  EXPECT_EQ(r.cost_convention, fabric::CostConvention::Built);
  ASSERT_EQ(r.runs.size(), 2u);
  const CompareRun& ft = r.runs[0];
  const CompareRun& mf = r.runs[1];
  ASSERT_TRUE(mf.perf_per_dollar_vs_fat_tree.has_value());
  EXPECT_NEAR(
      *mf.perf_per_dollar_vs_fat_tree,
      (ft.iteration_time_s * ft.cost_built.total()) / (mf.iteration_time_s * mf.cost_built.total()),
      1e-12);
  // The two conventions price mFabric's fabric differently (docs/cost-model.md), so the figure
  // is not the paper convention's.
  EXPECT_GT(
      std::abs(*mf.perf_per_dollar_vs_fat_tree - (ft.iteration_time_s * ft.cost_paper.total()) /
                                                     (mf.iteration_time_s * mf.cost_paper.total())),
      1e-6);
  for (const CompareRun& run : r.runs) {
    EXPECT_EQ(run.iterations, 1) << run.fabric;
    EXPECT_GT(run.compute_s, 0) << run.fabric;
    EXPECT_GE(run.exposed_communication_s, 0) << run.fabric;
    EXPECT_LE(run.compute_s + run.exposed_communication_s, run.iteration_time_s * (1 + 1e-9))
        << run.fabric;
  }
  // The same compute on both fabrics: the GPUs are given the same work.
  EXPECT_DOUBLE_EQ(ft.compute_s, mf.compute_s);
  ASSERT_TRUE(mf.reconfiguration.has_value());
  const ReconfigurationSummary& c = *mf.reconfiguration;
  // 8 servers, one EP group of EP 8 x TP 4 = 4 servers a region.
  EXPECT_EQ(c.regions, 2);
  EXPECT_GT(c.all_to_alls, 0);
  EXPECT_LE(c.holds, c.all_to_alls);
  EXPECT_LE(c.critical_holds, c.holds);
  EXPECT_LE(c.critical_held_s, c.held_time_s + 1e-12);

  s.cost_convention = fabric::CostConvention::Calculator;
  EXPECT_EQ(error_field([&] { run_compare(s); }), "--convention");
}

}  // namespace
}  // namespace mfabric::study
