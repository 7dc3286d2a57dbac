// Sweeps (docs/sweep.md): the file, its points, the experiment of a point, splitting points over
// MPI ranks, the record's JSON round trip and the resume journal.
#include "study/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/json_text.h"
#include "core/rng.h"
#include "core/units.h"
#include "fabric/builders.h"
#include "fabric/cost.h"
#include "mpi/world.h"
#include "scratch_dir.h"
#include "study/sweep_driver.h"
#include "study/sweep_journal.h"
#include "study/sweep_run.h"
#include "test_text.h"
#include "workload/embedded_yaml.h"
#include "workload/kernel_model.h"

namespace mfabric::study {
namespace {

using testing::error_text;

const char* const kSweep = R"(
name: t
experiment:
  cluster: {servers: 4, link: 400G}
  fabric: "mfabric:alpha=6,region=4"
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8, global_batch: 16}
grid:
  fabric.reconfiguration: [1us, 1s]
  cluster.link: [100G, 200G, 400G]
points:
  - {fabric: fat-tree, cluster.servers: 2}
)";

// The fingerprint keys a point by the parallelism convention it resolves to: a job pinned to the
// paper's convention keeps the key it had before conventions were named (text, calibration,
// shipped data), one left to the default (Megatron's) gets another.
TEST(Sweep, TheFingerprintNamesAConventionOtherThanThePapers) {
  const auto old_key = [](const SweepSpec& sweep) {
    const std::string text = point_yaml(sweep, 0);
    return fmt::format("{:016x}",
                       fnv1a(fmt::format("{}\ncalibration: {}\nshipped data: {:016x}\n", text,
                                         config::experiment_calibration_name(text, "t.yaml"),
                                         workload::detail::embedded_yaml_digest())));
  };
  const SweepSpec paper = parse_sweep(kSweep, "t.yaml");
  EXPECT_EQ(point_fingerprint(paper, 0), old_key(paper));
  std::string text = kSweep;
  text.replace(text.find("convention: paper, "), std::string("convention: paper, ").size(), "");
  const SweepSpec megatron = parse_sweep(text, "t.yaml");
  EXPECT_NE(point_fingerprint(megatron, 0), old_key(megatron));
}

TEST(Sweep, GridThenPointsInOrder) {
  const SweepSpec s = parse_sweep(kSweep, "t.yaml");
  ASSERT_EQ(s.points.size(), 7u);  // 2 x 3 + 1
  // The first field slowest.
  EXPECT_EQ(s.points[0].label(), "fabric.reconfiguration=1us cluster.link=100G");
  EXPECT_EQ(s.points[2].label(), "fabric.reconfiguration=1us cluster.link=400G");
  EXPECT_EQ(s.points[3].label(), "fabric.reconfiguration=1s cluster.link=100G");
  EXPECT_EQ(s.points[6].label(), "fabric=fat-tree cluster.servers=2");
  EXPECT_EQ(s.fields, (std::vector<std::string>{"fabric.reconfiguration", "cluster.link", "fabric",
                                                "cluster.servers"}));
  EXPECT_EQ(s.x, "fabric.reconfiguration");
}

TEST(Sweep, APointSetsItsFieldsAndKeepsTheRest) {
  const SweepSpec s = parse_sweep(kSweep, "t.yaml");
  const config::Experiment e = point_experiment(s, 4);  // 1s, 200G
  EXPECT_EQ(e.cluster.link.bps(), 200e9);
  EXPECT_EQ(e.cluster.servers, 4);
  EXPECT_EQ(e.fabric.name(), "mfabric");
  EXPECT_EQ(e.fabric.params().at("reconfiguration"), "1s");
  EXPECT_EQ(e.fabric.params().at("alpha"), "6");  // from the fabric's name form
  ASSERT_TRUE(e.model);
  EXPECT_EQ(e.model->ep, 8);
  // A whole fabric replaced: none of mFabric's parameters stay behind.
  const config::Experiment f = point_experiment(s, 6);
  EXPECT_EQ(f.fabric.name(), "fat-tree");
  EXPECT_TRUE(f.fabric.params().empty());
  EXPECT_EQ(f.cluster.servers, 2);
  // Same point, same text, same fingerprint; another point, another one.
  EXPECT_EQ(point_fingerprint(s, 4), point_fingerprint(parse_sweep(kSweep, "u.yaml"), 4));
  EXPECT_NE(point_fingerprint(s, 4), point_fingerprint(s, 5));
  // Not the text alone: what the text leaves to mfabric's defaults (the calibration a job that
  // names none gets, the shipped models and calibrations) is in it, so a journal kept across
  // builds is not reused once those change.
  EXPECT_NE(point_fingerprint(s, 4), fmt::format("{:016x}", fnv1a(point_yaml(s, 4))));
  EXPECT_EQ(config::experiment_calibration_name(point_yaml(s, 4), "t.yaml"), "h800-measured");
  EXPECT_EQ(config::experiment_calibration_name(
                "cluster: {gpu: b200}\nworkload: {model: mixtral-8x7b}\n", "t.yaml"),
            "roofline");
  EXPECT_EQ(config::experiment_calibration_name(
                "cluster: {gpu: b200}\nworkload: {model: mixtral-8x7b}\ncalibration: "
                "{base: h200-measured}\n",
                "t.yaml"),
            "h200-measured");
}

TEST(SweepErrors, TheFileSaysWhatIsWrong) {
  const auto parse = [](const std::string& text) {
    return error_text([&] { parse_sweep(text, "s.yaml"); });
  };
  const std::string exp = "experiment: {workload: {model: mixtral-8x7b}}\n";
  EXPECT_EQ(parse(exp), "s.yaml: grid: the sweep has no point: give a grid, points, or both");
  EXPECT_NE(parse(exp + "grid: {cluster.link: []}")
                .find("grid.cluster.link: expected a "
                      "non-empty list"),
            std::string::npos);
  EXPECT_NE(parse(exp + "grid: {cluster..link: [1]}").find("expected a dotted path"),
            std::string::npos);
  EXPECT_NE(parse(exp + "grid: {cluster.link: [100G]}\nx: seed").find("x: 'seed' is not a field"),
            std::string::npos);
  EXPECT_NE(parse(exp + "gird: {}").find("gird"), std::string::npos);
  EXPECT_NE(parse("grid: {seed: [1]}").find("experiment: is required"), std::string::npos);
  EXPECT_NE(parse(exp + "points: [{}]").find("points[0]: expected a map"), std::string::npos);
  EXPECT_NE(parse("experiment: missing.yaml\ngrid: {seed: [1]}").find("missing.yaml"),
            std::string::npos);
}

TEST(SweepErrors, ABadPointIsRefusedBeforeAnyRuns) {
  const std::string exp =
      "experiment: {cluster: {servers: 2}, workload: {model: mixtral-8x7b, convention: paper, tp: "
      "4, ep: 4}}\n";
  const SweepSpec typo = parse_sweep(exp + "grid: {cluster.linc: [100G]}", "s.yaml");
  const std::string e = error_text([&] { check_points(typo); });
  EXPECT_NE(e.find("point 0 (cluster.linc=100G)"), std::string::npos) << e;
  EXPECT_NE(e.find("linc"), std::string::npos) << e;
  const SweepSpec scalar = parse_sweep(exp + "grid: {cluster.servers.x: [1]}", "s.yaml");
  EXPECT_NE(error_text([&] { check_points(scalar); }).find("not a map"), std::string::npos);
  const SweepSpec negative = parse_sweep(exp + "grid: {cluster.servers: [-1]}", "s.yaml");
  EXPECT_NE(error_text([&] { check_points(negative); }).find("cluster.servers"), std::string::npos);
}

TEST(SplitOverRanks, EveryPointOnceAndBalanced) {
  std::vector<std::size_t> points(23);
  std::iota(points.begin(), points.end(), std::size_t{100});
  std::vector<double> costs;
  for (std::size_t i = 0; i < points.size(); ++i)
    costs.push_back(static_cast<double>((i * 37) % 11 + 1));
  for (int ranks : {1, 2, 3, 7, 30}) {
    const auto split = split_over_ranks(points, costs, ranks);
    ASSERT_EQ(split.size(), static_cast<std::size_t>(ranks));
    std::vector<std::size_t> all;
    double lo = 1e300, hi = 0, largest = *std::max_element(costs.begin(), costs.end());
    for (const auto& share : split) {
      all.insert(all.end(), share.begin(), share.end());
      double load = 0;
      for (std::size_t p : share)
        load += costs[p - 100];
      lo = std::min(lo, load);
      hi = std::max(hi, load);
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, points) << ranks;
    // Longest processing time first: no rank ends more than one point's cost after another.
    if (static_cast<std::size_t>(ranks) <= points.size()) {
      EXPECT_LE(hi - lo, largest) << ranks;
    }
    EXPECT_EQ(split, split_over_ranks(points, costs, ranks));  // the same on every rank
  }
  EXPECT_NE(error_text([&] { split_over_ranks(points, costs, 0); }), "");
}

TEST(Sweep, ThePapersStudiesLoad) {
  const std::string dir = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/sweeps/";
  const SweepSpec delay = load_sweep(dir + "reconfiguration-delay.yaml");
  EXPECT_EQ(delay.points.size(), 10u);
  check_points(delay);
  EXPECT_EQ(point_experiment(delay, 5).fabric.params().at("reconfiguration"), "25ms");
  const SweepSpec faster = load_sweep(dir + "reconfiguration-delay-when-faster.yaml");
  EXPECT_EQ(faster.points.size(), 9u);
  check_points(faster);
  EXPECT_EQ(point_experiment(faster, 5).fabric.params().at("switching"), "when-faster");
  const SweepSpec batch = load_sweep(dir + "batch-vs-topoopt.yaml");
  EXPECT_EQ(batch.points.size(), 12u);
  EXPECT_EQ(point_experiment(batch, 2).model->global_batch, 1024);
  const SweepSpec scale = load_sweep(dir + "scale.yaml");
  EXPECT_EQ(scale.points.size(), 18u);
  check_points(scale);
  const SweepSpec outlook = load_sweep(dir + "nvl72-outlook.yaml");
  EXPECT_EQ(outlook.points.size(), 2u);
  check_points(outlook);
  // The crossover map: 2 models x 2 links x 5 efficiencies x 2 policies x 5 delays, and the
  // fat-tree reference of each model, link and efficiency.
  const SweepSpec crossover = load_sweep(dir + "crossover.yaml");
  EXPECT_EQ(crossover.points.size(), 2u * 2 * 5 * 2 * 5 + 2 * 2 * 5);
  ASSERT_TRUE(crossover.heatmap);
  std::size_t references = 0;
  for (const SweepPoint& p : crossover.points)
    references += is_reference(p, *crossover.heatmap) ? 1 : 0;
  EXPECT_EQ(references, 20u);
  check_points(crossover);
  EXPECT_EQ(point_experiment(crossover, 0).calibration.compute.expert_gemm, 1.0);
  EXPECT_EQ(point_experiment(crossover, 0).fabric.params().at("policy"), "paper-sim");
  // Every op but the experts as measured: the stated efficiency replaces the experts' table only.
  const auto& kernels = point_experiment(crossover, 0).calibration.kernels;
  ASSERT_TRUE(kernels);
  EXPECT_FALSE(kernels->find(workload::KernelOp::Expert));
  EXPECT_TRUE(kernels->find(workload::KernelOp::Attention));
}

// --ignore-gpu-memory: every point's experiment runs a job over its GPU's HBM.
TEST(Sweep, IgnoreGpuMemoryReachesEveryPoint) {
  const std::string dir = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/sweeps/";
  SweepSpec delay = load_sweep(dir + "reconfiguration-delay.yaml");
  EXPECT_FALSE(point_experiment(delay, 0).ignore_gpu_memory);
  ignore_gpu_memory(delay);
  for (std::size_t i = 0; i < delay.points.size(); ++i)
    EXPECT_TRUE(point_experiment(delay, i).ignore_gpu_memory) << "point " << i;
}

// --exact, --solver and --extrapolate: every point's experiment, and its fingerprint (a resumed
// sweep does not take a run made with shortcuts for one without).
TEST(Sweep, ShortcutSettingsReachEveryPoint) {
  const std::string dir = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/sweeps/";
  SweepSpec delay = load_sweep(dir + "reconfiguration-delay.yaml");
  EXPECT_EQ(point_experiment(delay, 0).solver, "auto");
  EXPECT_FALSE(point_experiment(delay, 0).extrapolate);
  const std::string before = point_fingerprint(delay, 0);
  set_solver(delay, "fast");
  EXPECT_EQ(point_experiment(delay, 0).solver, "fast");
  run_exact(delay);
  for (std::size_t i = 0; i < delay.points.size(); ++i) {
    const config::Experiment e = point_experiment(delay, i);
    EXPECT_EQ(e.solver, "exact") << "point " << i;
    EXPECT_EQ(e.extrapolate, false) << "point " << i;
  }
  EXPECT_NE(point_fingerprint(delay, 0), before);
  // --extrapolate: true and false set it, auto takes it away again (the default rule).
  set_extrapolate(delay, "true");
  EXPECT_EQ(point_experiment(delay, 0).extrapolate, true);
  set_extrapolate(delay, "auto");
  EXPECT_FALSE(point_experiment(delay, 0).extrapolate.has_value());
  set_extrapolate(delay, "false");
  EXPECT_EQ(point_experiment(delay, 0).extrapolate, false);
}

TEST(Sweep, PaperAssumptionsGiveTheCalibrationAndTheController) {
  const std::string dir = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/sweeps/";
  SweepSpec delay = load_sweep(dir + "reconfiguration-delay.yaml");
  // Before: the default, its GPU's measured calibration (the H800's).
  EXPECT_EQ(point_experiment(delay, 0).calibration.name, "h800-measured");
  const std::string before = point_fingerprint(delay, 0);
  apply_paper_assumptions(delay);
  const config::Experiment e = point_experiment(delay, 0);
  EXPECT_EQ(e.calibration.name, "paper-measurement");
  EXPECT_EQ(e.calibration.compute.expert_gemm, 0.175);
  EXPECT_EQ(e.fabric.params().at("policy"), "paper-sim");
  // The fat-tree point keeps its fabric; every point is a different run than before.
  EXPECT_EQ(point_experiment(delay, delay.points.size() - 1).fabric.name(), "fat-tree");
  EXPECT_NE(point_fingerprint(delay, 0), before);
  // A calibration of the experiment's own keeps its fields over the new base.
  SweepSpec crossover = load_sweep(dir + "crossover.yaml");
  apply_paper_assumptions(crossover);
  EXPECT_EQ(point_experiment(crossover, 0).calibration.compute.expert_gemm, 1.0);
  EXPECT_EQ(point_experiment(crossover, 0).calibration.name, "paper-measurement+");
  // Points that set a whole mFabric fabric get the paper's controller too; TopoOpt points and
  // points that choose a policy themselves keep theirs.
  SweepSpec batch = load_sweep(dir + "batch-vs-topoopt.yaml");
  apply_paper_assumptions(batch);
  EXPECT_EQ(point_experiment(batch, 0).fabric.params().at("policy"), "paper-sim");
  EXPECT_EQ(point_experiment(batch, 0).fabric.params().at("region"), "4");
  EXPECT_EQ(point_experiment(batch, 3).fabric.name(), "topoopt");
  EXPECT_EQ(batch.points[3].fields[1].value, "topoopt");  // as written
  SweepSpec nvl72 = load_sweep(dir + "nvl72-outlook.yaml");
  apply_paper_assumptions(nvl72);
  EXPECT_EQ(point_experiment(nvl72, 1).fabric.params().at("policy"), "paper-sim");
  EXPECT_EQ(point_experiment(nvl72, 1).fabric.params().at("ocs_optics"), "co-packaged");
  SweepSpec own = load_sweep(dir + "crossover.yaml");
  apply_paper_assumptions(own);
  bool reuse = false;
  for (std::size_t i = 0; i < own.points.size(); ++i) {
    const config::Experiment point = point_experiment(own, i);
    reuse |=
        point.fabric.name() == "mfabric" && point.fabric.params().at("policy") == "reuse-previous";
  }
  EXPECT_TRUE(reuse);
}

TEST(Sweep, TheAlphaStudyKeepsTheNetworkCostOfTheReference) {
  // The study's premise, checked with the cost model: every mFabric point costs (paper
  // convention) what the reference server costs, $15,606 per server for alpha 6 at 100G
  // (2 x 659 + 12 x 187 + 14 x 99 + 7 x 150 + 2 x 520 for the EPS NICs, 6 x (659 + 99 + 520 +
  // 150) for the OCS NICs), within 0.02%; and the EPS gets slower as alpha grows.
  const std::string dir = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/sweeps/";
  const SweepSpec alpha = load_sweep(dir + "alpha-equal-cost.yaml");
  const fabric::PriceBook book = fabric::PriceBook::paper_defaults();
  double previous_eps = 1e18;
  int mfabric_points = 0;
  for (std::size_t i = 0; i < alpha.points.size(); ++i) {
    const config::Experiment e = point_experiment(alpha, i);
    const fabric::Topology t = fabric::build_fabric(e.fabric, e.cluster);
    if (t.kind() != "mfabric") continue;
    ++mfabric_points;
    const double per_server =
        fabric::network_cost(t, fabric::CostConvention::Paper, book).total() / 128;
    EXPECT_NEAR(per_server, 15606, 15606 * 2e-4) << "point " << i;
    const double eps = parse_rate(t.params().at("eps_link")).bps();
    EXPECT_LT(eps, previous_eps) << "point " << i;
    previous_eps = eps;
    EXPECT_EQ(e.cluster.nics_per_server, 2 + static_cast<int>(t.param_number("alpha")));
  }
  EXPECT_EQ(mfabric_points, 7);
}

class SweepRuns : public testing::ScratchDirTest {
 protected:
  SweepRuns() : ScratchDirTest("mfabric_sweep_test") {}
};

TEST_F(SweepRuns, ThreadsJournalAndResumeGiveTheSameResults) {
  mpi::World world = sweep_world();
  const SweepSpec good = parse_sweep(R"(
experiment:
  cluster: {servers: 2, link: 400G}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 4, global_batch: 8}
grid:
  cluster.link: [100G, 400G]
)",
                                     "s.yaml");
  const auto text_of = [&](const SweepResult& r) {
    std::string out;
    for (const SweepRun& run : r.runs)
      out += json_text(sweep_run_json(good, run, false), -1) + "\n";
    return out;
  };
  SweepOptions one;
  one.jobs = 1;
  one.journal = (dir_ / "points.jsonl").string();
  const SweepResult a = run_sweep(good, one, world);
  ASSERT_EQ(a.runs.size(), 2u);
  EXPECT_TRUE(a.runs[0].figures.error.empty()) << a.runs[0].figures.error;
  EXPECT_GT(a.runs[0].figures.iteration_time_s, a.runs[1].figures.iteration_time_s);  // 100G
  EXPECT_EQ(a.resumed, 0u);
  SweepOptions two;
  two.jobs = 2;
  const SweepResult b = run_sweep(good, two, world);
  EXPECT_EQ(text_of(a), text_of(b));
  // The journal holds both points: a rerun resumes them and gives the same results.
  EXPECT_EQ(read_journal(one.journal, good).points.size(), 2u);
  const SweepResult c = run_sweep(good, one, world);
  EXPECT_EQ(c.resumed, 2u);
  EXPECT_EQ(text_of(a), text_of(c));
}

TEST_F(SweepRuns, TheJournalKeepsOnlyWholeMatchingLines) {
  const SweepSpec s = parse_sweep(kSweep, "t.yaml");
  SweepRun run;
  run.index = 1;
  run.fingerprint = point_fingerprint(s, 1);
  run.figures.model = "m";
  run.figures.link_gbps = 200;
  run.figures.iteration_time_s = 0.1 + 0.2;  // not a short decimal: must round-trip exactly
  run.figures.cost_paper.nics = 1.0 / 3.0;
  ReconfigurationSummary r;
  r.count = 7;
  r.time_s = 1e-7;
  run.figures.reconfiguration = r;
  run.figures.shortcuts = {{"extrapolate", true, 0.004, "simulated 13 of 64 micro-batches"}};
  run.figures.framework_warnings = {"Megatron-Core refuses this", "and that"};
  const nlohmann::json j = sweep_run_json(s, run);
  const SweepRun back = sweep_run_from_json(j, "", "here");
  EXPECT_EQ(json_text(sweep_run_json(s, back)), json_text(j));
  EXPECT_EQ(back.figures.framework_warnings, run.figures.framework_warnings);
  ASSERT_EQ(back.figures.shortcuts.size(), 1u);
  EXPECT_EQ(back.figures.shortcuts[0].bound, 0.004);
  EXPECT_EQ(back.figures.iteration_time_s, 0.1 + 0.2);
  EXPECT_EQ(back.figures.reconfiguration->count, 7);

  SweepRun other = run;
  other.index = 2;  // a fingerprint of another point
  SweepRun failed = run;
  failed.index = 3;
  failed.fingerprint = point_fingerprint(s, 3);
  failed.figures.error = "boom";
  // Another point's fingerprint and a failed point are not resumed; a line cut short (no
  // newline: the sweep was killed while writing it) is dropped.
  const std::string path =
      write("p.jsonl", json_text(j, -1) + "\n" + json_text(sweep_run_json(s, other), -1) + "\n" +
                           json_text(sweep_run_json(s, failed), -1) + "\n{\"index\": 4, \"finger");
  const JournalContents kept = read_journal(path, s);
  ASSERT_EQ(kept.points.size(), 1u);
  EXPECT_EQ(kept.points.begin()->first, 1u);
  EXPECT_EQ(kept.records, 3u);
  EXPECT_EQ(kept.torn_line, 4u);
  EXPECT_TRUE(read_journal((dir_ / "none.jsonl").string(), s).points.empty());
  EXPECT_EQ(error_text([] {
              sweep_run_from_json(nlohmann::json{{"index", 1}}, "p.jsonl", "line 3");
            }),
            "p.jsonl: line 3: fingerprint: is missing");
}

}  // namespace
}  // namespace mfabric::study
