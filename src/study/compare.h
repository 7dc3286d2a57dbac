// `mfabric compare` (docs/compare.md): the same training jobs on several fabrics and link speeds,
// each run one sim::simulate call, run in parallel on threads, with iteration time, tokens/s,
// network cost and performance per dollar relative to the fat-tree.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "core/units.h"
#include "fabric/cost.h"
#include "fabric/fabric_kind.h"
#include "sim/simulation.h"

namespace mfabric::study {

// The paper's models with its parallelism (reference section 5, docs/compare.md).
std::vector<config::TrainingJob> paper_models();
// The paper's setup of `model` (a zoo name); mfabric::Error naming `field` when it has none.
config::TrainingJob paper_setup(const std::string& model, const std::string& field);

// A fabric of the comparison: a short label for tables and a fabric spec (fabric/builders.h).
// mFabric's region size is filled in per model (EP x TP / GPUs per server servers) unless the
// spec names one.
struct FabricChoice {
  std::string label;  // "fat-tree", "fat-tree-3to1", "rail-optimized", "topoopt", "mfabric"
  std::string spec;   // "fat-tree", "fat-tree:oversubscription=3", ...
  // The all-to-all algorithm of this fabric's runs (collective/lowering.h), empty: the
  // experiment's. A label LABEL+ALGORITHM ("fat-tree+hierarchical") sets it.
  std::string all_to_all;
};
// fat-tree (1:1), fat-tree 3:1, rail-optimized, TopoOpt, mFabric (alpha 6, 25 ms, block, greedy).
std::vector<FabricChoice> paper_fabrics();
// The labels of paper_fabrics(): the paper's stated figures (report/compare_paper.h) are about
// the runs of these.
namespace paper_label {
inline constexpr const char* kFatTree = "fat-tree";
inline constexpr const char* kFatTree3to1 = "fat-tree-3to1";
inline constexpr const char* kRailOptimized = "rail-optimized";
inline constexpr const char* kTopoOpt = "topoopt";
inline constexpr const char* kMfabric = "mfabric";
}  // namespace paper_label
// The label of the baseline, the run every other run of its model and link is related to: the
// paper's non-blocking fat-tree.
inline constexpr const char* kBaselineLabel = paper_label::kFatTree;
// A label above, or any fabric spec (its label is the spec itself), optionally followed by
// "+ALGORITHM" for its all-to-alls (any all-to-all lowering but auto); mfabric::Error naming
// `field` for an unknown fabric or algorithm.
FabricChoice parse_fabric_choice(const std::string& text, const std::string& field);

// What a comparison assumes (docs/compare.md, "Assumptions"):
//   default  the project's: the GPU's measured calibration (h800-measured for the paper's H800;
//            workload::default_calibration), mFabric's block policy, NCCL's PXN on
//            rail-optimized;
//   paper    the mFabric paper's evaluation as its authors computed it: the paper-measurement
//            calibration (from its measurement study), mFabric under its simulator's controller
//            (paper-sim), the baselines' all-to-alls direct as in its simulator, and each
//            electrical baseline again with the hierarchical all-to-all ("+hierarchical").
enum class Assumptions { Default, Paper };
const char* to_string(Assumptions a);
// "default" or "paper"; mfabric::Error naming `field` otherwise.
Assumptions parse_assumptions(const std::string& text, const std::string& field);
// The fabrics of a comparison under `a` (paper_fabrics() for Default).
std::vector<FabricChoice> fabrics_for(Assumptions a);

// Which all-to-all each electrical baseline runs (docs/compare.md, "The strongest baseline"):
//   strongest  each run of a fabric whose kind lists baseline_all_to_alls (fat-tree,
//              rail-optimized, ...; fabric/fabric_kind.h) tries each of them and keeps the
//              fastest, unless its label or the experiment names one;
//   as-given   the fabric's own (`auto`), or the one its label or the experiment names.
enum class Baselines { Strongest, AsGiven };
const char* to_string(Baselines b);
// "strongest" or "as-given"; mfabric::Error naming `field` otherwise.
Baselines parse_baselines(const std::string& text, const std::string& field);

// The spread of a comparison's answer (docs/compare.md, "The answer's spread"): every run a
// verdict rests on (each reconfigurable fabric's and the baseline's, with its fastest all-to-all)
// runs again with the seeds after the comparison's own and, under synthetic skewed routing, at
// the low and the high end of the routing skew band (the model's Zipf exponents times
// kSkewBandLow and kSkewBandHigh, at the comparison's seed).
struct Spread {
  int seeds = 3;          // seeds per run, the comparison's first (seed, seed + 1, ...); 1: one
  bool skew_band = true;  // the skew band's low and high ends too
};
inline constexpr double kSkewBandLow = 0.5;
inline constexpr double kSkewBandHigh = 1.5;
inline constexpr int kMaxSpreadSeeds = 20;
// "full" (3 seeds and the skew band), "seeds" (the seeds only) or "none"; mfabric::Error naming
// `field` otherwise.
Spread parse_spread(const std::string& text, const std::string& field);
// "full", "seeds", "none", or "N seeds and the skew band" for other counts.
std::string to_string(const Spread& s);

// One run of a verdict's spread: its seed and skew ("low", "default" or "high") and its
// iteration time, or why it failed.
struct SpreadRun {
  std::uint64_t seed = 1;
  std::string skew = "default";
  double iteration_time_s = 0;
  std::string error;
};

struct CompareSpec {
  std::vector<config::TrainingJob> models;
  std::vector<Rate> links;
  std::vector<FabricChoice> fabrics;
  // Cluster (its link is replaced by each of `links`), seed, GPU, simulation settings; its
  // fabric and workload are replaced by each run's.
  config::Experiment base;
  int jobs = 0;                                    // threads; 0 = the machine's cores
  Assumptions assumptions = Assumptions::Default;  // recorded; the fields above carry them
  // What the set is, for the outputs: "the paper's evaluation, quick subset", "experiment X".
  std::string description;
  // The resume journal (DIR/points.jsonl of `compare --out DIR`), or empty for none: every run
  // that finished is appended as it finishes, and a run it holds is not run again.
  std::string journal;
  // What every run depends on beside its model, link and fabric (the experiment file's text, the
  // calibration, the options), hashed into each run's fingerprint: a journal record is used
  // only by a run with the same fingerprint.
  std::string fingerprint_basis;
  // How network cost is counted for the perf/$ figures (CompareResult::cost_convention): built
  // or paper; the calculator convention is not computed in a comparison (run_compare refuses it).
  fabric::CostConvention cost_convention = fabric::CostConvention::Paper;
  Baselines baselines = Baselines::Strongest;
  Spread spread;
};

// The all-to-all algorithms the runs of `fabric` try under spec.baselines, the fastest kept:
// its kind's baseline_all_to_alls under Strongest when neither the label ("+ALGORITHM") nor the
// experiment (algorithms.all_to_all) names one; empty otherwise (one run, as given).
std::vector<std::string> all_to_all_trials(const CompareSpec& spec, const FabricChoice& fabric);
// The all-to-all algorithm the runs of experiment `e` use: the one it names, else what `auto`
// takes on its fabric's kind (collective/lowerer.cpp: proxy with OCS regions, the kind's own,
// else direct).
std::string all_to_all_of(const config::Experiment& e);

// The paper's evaluation: 128 servers of 8 H800, the five models, 100/200/400/800G, the five
// fabrics, seed 1.
CompareSpec paper_compare();
// Its quick subset (make demo): Mixtral 8x22B and 8x7B at 100G and 400G on the fabrics but the
// 3:1 fat-tree, the models and links where the paper states its headline (comparable speed,
// 1.2-1.5x and 1.9-2.3x the fat-tree's performance per dollar), in under 2 minutes on 2 cores.
CompareSpec paper_compare_quick();

// mFabric's control plane in one run.
struct ReconfigurationSummary {
  std::string policy;
  std::string planner;
  std::int64_t count = 0;
  double time_s = 0;       // summed over regions
  double held_time_s = 0;  // all-to-alls waiting for circuits, summed over those all-to-alls
  double circuit_bytes = 0;
  double eps_bytes = 0;
  // Of those, the ones on the run's critical path (sim::RunResult::critical_holds) and their
  // waits: what the holds cost the iteration.
  std::int64_t critical_holds = 0;
  double critical_held_s = 0;
  // All-to-alls that waited for circuits (sim::ControlStats::held), the EP all-to-alls of the
  // run, and the OCS regions: held_time_s is a sum over all-to-alls that wait side by side (the
  // regions, and the EP groups of a region, at once), so it is read against these, not against
  // the iteration time.
  std::int64_t holds = 0;
  std::int64_t all_to_alls = 0;
  int regions = 0;
};

// One all-to-all algorithm a baseline's run tried (Baselines::Strongest): its iteration time, or
// why it failed.
struct AllToAllTrial {
  std::string algorithm;
  double iteration_time_s = 0;
  std::string error;
};

struct CompareRun {
  std::string model;
  double link_gbps = 0;
  std::string fabric;       // the label
  std::string fabric_spec;  // what was built, with every parameter
  // The all-to-all algorithm its all-to-alls ran (all_to_all_of); with several tried (the
  // strongest baseline), the fastest, and every one tried in all_to_all_trials, in the order of
  // the kind's baseline_all_to_alls. Empty in journal records written before it was kept.
  std::string all_to_all;
  std::vector<AllToAllTrial> all_to_all_trials;
  // The same run at the spread's other seeds and skews (a verdict's runs only; Spread), in the
  // order they were planned: seeds first, then the skew band's low and high ends.
  std::vector<SpreadRun> spread;
  int gpus = 0;
  double iteration_time_s = 0;
  // tokens per iteration (global batch x EP x seq: each EP rank of a DP replica runs its own
  // micro-batches, docs/workload.md) / iteration time.
  double tokens_per_s = 0;
  // Per GPU: tokens/s, model TFLOP/s (Megatron-LM's accounting) and MFU (study/gpu_throughput.h,
  // fill_gpu_throughput); 0 for a run that failed and for a workload without a model.
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  // How skewed the run's expert routing was: its busiest expert's tokens over the mean expert's,
  // averaged over the records (workload::expert_load_skew); absent for a workload without a
  // model and in journal records written before it was kept.
  std::optional<double> busiest_expert_over_mean;
  fabric::CostBreakdown cost_built;
  fabric::CostBreakdown cost_paper;
  // The network cost under a convention: the comparison's (CompareResult::cost_convention) is
  // the one its perf/$ figures use. Calculator is not computed in a comparison (cost_paper).
  const fabric::CostBreakdown& cost(fabric::CostConvention c) const {
    return c == fabric::CostConvention::Built ? cost_built : cost_paper;
  }
  // Where an iteration's time goes, per iteration and averaged over the job's GPUs: the compute
  // a GPU was given (its compute tasks' durations), and the time its compute stream sat idle
  // waiting for communication (sim::RunResult::exposed_comm, holds for circuits included). The
  // rest of the iteration is idle otherwise (pipeline bubbles). Counts and sums of
  // `reconfiguration` are over all `iterations`.
  int iterations = 0;
  double compute_s = 0;
  double exposed_communication_s = 0;
  // Relative to the fat-tree run of the same model and link (absent without one, or when it
  // failed): iteration time / the fat-tree's, and (1 / iteration time / network cost) / the
  // fat-tree's, the cost counted in the comparison's convention (relate_to_fat_tree).
  std::optional<double> relative_iteration_time;
  std::optional<double> perf_per_dollar_vs_fat_tree;
  std::optional<ReconfigurationSummary> reconfiguration;  // mFabric
  // The shortcuts the run took or was refused (sim::shortcuts; docs/shortcuts.md).
  std::vector<sim::Shortcut> shortcuts;
  // What Megatron-Core would refuse of the job's settings (workload::megatron_refusals).
  std::vector<std::string> framework_warnings;
  double wall_time_s = 0;
  std::string error;  // a run that could not finish: why (its figures are zero)
};

// One stretch of time in the timeline of one mFabric run (region 0): a reconfiguration of the
// region's circuits, or an EP all-to-all of the region.
struct TimelineSpan {
  double start_s = 0;
  double end_s = 0;
  bool reconfiguration = false;  // else an all-to-all
};

// The convention CompareRun::cost counts in: built, or paper (for paper and calculator, which a
// comparison does not compute).
fabric::CostConvention counted_convention(fabric::CostConvention c);
// How a cost convention is named beside every cost and perf/$ figure of a comparison's outputs:
// "built topology" or "paper formulas" (that of counted_convention).
const char* cost_convention_label(fabric::CostConvention c);

struct CompareResult {
  std::uint64_t seed = 1;
  std::string calibration = "roofline";  // its name (workload/calibration.h)
  Assumptions assumptions = Assumptions::Default;
  // How network cost is counted, for every cost and perf/$ figure (docs/cost-model.md).
  fabric::CostConvention cost_convention = fabric::CostConvention::Paper;
  Baselines baselines = Baselines::Strongest;
  // The spread the verdicts' runs took: its seeds, and whether the skew band was run (false also
  // where the routing is a trace or forced-balanced: nothing to vary).
  int spread_seeds = 1;
  bool spread_skew_band = false;
  std::string backend = "flow";
  double completion_batching = 0;  // the flow backend's (config/experiment.h)
  std::vector<CompareRun> runs;    // models x links x fabrics, in that order
  // The timeline of the first mFabric run that finished: "model link fabric", its spans.
  std::string timeline_run;
  std::vector<TimelineSpan> timeline;
  int threads = 1;                 // threads that ran the runs
  std::vector<std::string> notes;  // for the user: fewer threads started than planned
  std::string description;         // CompareSpec::description
  // What ran, for the outputs' record: the cluster (servers, GPUs and NICs per server, GPU
  // type) and each model's setup (the ones skipped included: `skipped` says why).
  int servers = 0;
  int gpus_per_server = 0;
  int nics_per_server = 0;
  std::string gpu;
  std::vector<config::TrainingJob> models;
  std::size_t resumed = 0;  // runs taken from the journal
  // The journal's records of every run that finished, in the runs' order (JSON lines): what
  // `compare --out DIR` leaves in DIR/points.jsonl with the results, so that the two agree.
  std::string journal_records;
  std::string journal_error;  // the journal could not be written: why (the runs went on)
  // Models left out because the cluster cannot hold their parallelism: why, one per model.
  std::vector<std::string> skipped;
};

// What a comparison or a sweep is about to do, once its runs are checked and its journal read
// (the commands' opening line).
struct RunsStart {
  int runs = 0;     // in all
  int resumed = 0;  // of those, taken from the journal
  int trials = 0;   // of those, runs of a baseline tried with several all-to-alls
  int spread = 0;   // of those, the verdicts' runs at other seeds and skews (Spread)
  int threads = 1;  // threads the others run on
  // A rough estimate of the others' wall time: their job sizes (estimated_cost, study/sweep.h)
  // at kSecondsPerCostUnit, spread over the threads.
  double estimated_s = 0;
  std::vector<std::string> skipped;  // CompareResult::skipped
};

// Checks every run's experiment (models, links, fabrics, parallelism, backend) before running
// any; a bad one is an mfabric::Error naming the option. Then runs them on spec.jobs threads
// (capped as study/parallel.h says); a run that fails keeps its error and the others go on.
// progress(done, total) runs on the calling thread's behalf from worker threads, serialised.
// A model that does not fit the cluster is left out with a note (CompareResult::skipped), unless
// every model is: then the first one's error. start() is called once, before the first run;
// progress counts the runs that were not resumed.
CompareResult run_compare(const CompareSpec& spec,
                          const std::function<void(int done, int total)>& progress = {},
                          const std::function<void(const RunsStart&)>& start = {});

// Wall seconds per unit of estimated_cost (study/sweep.h) for one run on one core of the
// reference machine (2 cores, docs/performance.md): the paper's evaluation at its default
// assumptions ran 1,774 s of runs for 41.9M units. Runs of one size differ up to 10x by fabric
// and model (TopoOpt and DeepSeek-R1 are the slow ones): the estimate is a rough one.
inline constexpr double kSecondsPerCostUnit = 4.2e-5;

// A run's figures from its simulation (shared with sweeps): the fabric as built, GPUs, mean
// iteration time, tokens/s (in all and per GPU), model TFLOP/s and MFU per GPU, network cost in
// both conventions (paper prices), where the time goes (iterations, compute, exposed communication)
// and, for mFabric, the reconfiguration summary. Labels, relative figures and wall time are left to
// the caller.
void fill_run_figures(CompareRun& run, const sim::Simulation& s, double tokens_per_iteration);
// The per-GPU figures of a run of `e` from its GPUs and iteration time (gpu_throughput), all
// three 0 without them: what fill_run_figures sets, and a resumed run's figures are set anew
// with (a journal written before they existed does not hold them).
void fill_gpu_throughput(CompareRun& run, const config::Experiment& e);
// Region 0's reconfigurations and EP all-to-alls of one mFabric run, in time order (empty for a
// run without regions or a control plane): compare's timeline figure.
std::vector<TimelineSpan> region_timeline(const sim::Simulation& s);
// Tokens one iteration of the experiment's training job trains: global batch x EP x sequence
// (each EP rank of a DP replica runs its own micro-batches, docs/workload.md); 0 for other
// workloads.
double tokens_per_iteration(const config::Experiment& e);

// A ratio with its range over a verdict's spread.
struct RatioRange {
  double value = 0;  // at the comparison's seed and the default skew
  double low = 0;
  double high = 0;
};
// One verdict: a reconfigurable fabric's run against the baseline of its model and link (the
// fat-tree, with its all-to-all), speed = the baseline's iteration time / the fabric's, and
// perf/$ = speed / (network cost / the baseline's), each over every pair of their runs at the
// same seed and skew (the base pair and the spread's); `pairs` counts them.
struct Verdict {
  std::string model;
  double link_gbps = 0;
  std::string fabric;
  std::string baseline;
  std::string baseline_all_to_all;
  RatioRange speed;
  std::optional<RatioRange> perf_per_dollar;  // none without both costs
  int pairs = 0;
};
// The verdicts of a comparison: one per finished reconfigurable run with a finished baseline,
// in the runs' order; network cost counted in `convention`.
std::vector<Verdict> verdicts(const std::vector<CompareRun>& runs,
                              fabric::CostConvention convention);

// Whether the run is the baseline's (label kBaselineLabel).
bool is_baseline_run(const CompareRun& run);
// Sets every run's relative figures against the finished baseline run (the fat-tree) of the
// same model and link (fat_tree_of), perf/$ counting network cost in `convention`; runs without
// one get none. run_compare calls it with the comparison's convention.
void relate_to_fat_tree(std::vector<CompareRun>& runs, fabric::CostConvention convention);
// The run that relate_to_fat_tree relates `run` to: the first finished baseline run (positive
// iteration time) of its model and link, or null.
const CompareRun* fat_tree_of(const std::vector<CompareRun>& runs, const CompareRun& run);
// Whether the run is of a fabric that reconfigures (fabric/fabric_kind.h, traits.reconfigurable:
// mFabric), the runs a comparison gives its verdict on: it has a reconfiguration summary, or its
// label is a spec of such a kind ("mfabric", "mfabric:...", "mfabric+...") as a failed run's is.
bool is_reconfigurable_run(const CompareRun& run);
// The fabric kind of a run: that of its label when the label is a spec ("mfabric",
// "mfabric:alpha=4+direct"), else that of the fabric it built (fabric_spec: a paper label such as
// "fat-tree-3to1"); null for neither (such a run that failed before it was built).
const fabric::FabricKind* kind_of_run(const CompareRun& run);

// The experiment of one run (exposed for tests).
config::Experiment run_experiment(const CompareSpec& spec, const config::TrainingJob& model,
                                  Rate link, const FabricChoice& fabric);

}  // namespace mfabric::study
