#include "study/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "collective/lowering.h"
#include "core/error.h"
#include "core/output_text.h"
#include "core/spec.h"
#include "core/suggest.h"
#include "fabric/fabric_kinds.h"

namespace mfabric::study {
namespace {

const char* const kMfabricSpec = "mfabric:alpha=6,reconfiguration=25ms,policy=block,planner=greedy";
// The same under the paper's simulator's controller (sim/policies/paper_sim.h).
const char* const kMfabricPaperSimSpec =
    "mfabric:alpha=6,reconfiguration=25ms,policy=paper-sim,planner=greedy";

}  // namespace

fabric::CostConvention counted_convention(fabric::CostConvention c) {
  return c == fabric::CostConvention::Built ? fabric::CostConvention::Built
                                            : fabric::CostConvention::Paper;
}

const char* cost_convention_label(fabric::CostConvention c) {
  return counted_convention(c) == fabric::CostConvention::Built ? "built topology"
                                                                : "paper formulas";
}

bool is_baseline_run(const CompareRun& run) {
  return run.fabric == kBaselineLabel;
}

const CompareRun* fat_tree_of(const std::vector<CompareRun>& runs, const CompareRun& run) {
  for (const CompareRun& r : runs) {
    if (is_baseline_run(r) && r.error.empty() && r.iteration_time_s > 0 && r.model == run.model &&
        r.link_gbps == run.link_gbps)
      return &r;
  }
  return nullptr;
}

const fabric::FabricKind* kind_of_run(const CompareRun& run) {
  const auto kind_named = [](const std::string& text) {
    return fabric::find_fabric_kind(text.substr(0, text.find_first_of(":+")));
  };
  const fabric::FabricKind* labelled = kind_named(run.fabric);
  return labelled != nullptr ? labelled : kind_named(run.fabric_spec);
}

bool is_reconfigurable_run(const CompareRun& run) {
  if (run.reconfiguration) return true;
  const fabric::FabricKind* kind = kind_of_run(run);
  return kind != nullptr && kind->traits.reconfigurable;
}

void relate_to_fat_tree(std::vector<CompareRun>& runs, fabric::CostConvention convention) {
  // The fat-tree runs by (model, link), the first of each as fat_tree_of finds it: one pass, as
  // a paper-sized comparison has a hundred runs.
  std::map<std::pair<std::string, double>, std::size_t> fat_tree;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const CompareRun& r = runs[k];
    if (is_baseline_run(r) && r.error.empty() && r.iteration_time_s > 0)
      fat_tree.emplace(std::pair{r.model, r.link_gbps}, k);
  }
  for (CompareRun& r : runs) {
    r.relative_iteration_time.reset();
    r.perf_per_dollar_vs_fat_tree.reset();
    const auto it = fat_tree.find({r.model, r.link_gbps});
    if (it == fat_tree.end() || !r.error.empty() || r.iteration_time_s <= 0) continue;
    // A copy of the two figures used: `r` may be the fat-tree run itself.
    const double base_time = runs[it->second].iteration_time_s;
    const double base_cost = runs[it->second].cost(convention).total();
    r.relative_iteration_time = r.iteration_time_s / base_time;
    const double cost = r.cost(convention).total();
    if (cost > 0 && base_cost > 0) {
      r.perf_per_dollar_vs_fat_tree = (base_time * base_cost) / (r.iteration_time_s * cost);
    }
  }
}

std::vector<config::TrainingJob> paper_models() {
  // Reference section 5: TP, PP, EP, micro-batch 8, global batch 128, seq 4096; DP = 1024 GPUs /
  // (TP x PP x EP). Qwen-MoE in its 32-expert EP 32 simulation variant.
  const auto setup = [](const char* model, int tp, int pp, int ep) {
    config::TrainingJob m;
    m.model = model;
    m.tp = tp;
    m.pp = pp;
    m.ep = ep;
    m.convention = "paper";  // the paper's simulator counts GPUs this way
    m.papers_job = true;
    return m;
  };
  return {setup("mixtral-8x22b", 8, 8, 8), setup("mixtral-8x7b", 4, 4, 8),
          setup("qwen-moe-32", 1, 4, 32), setup("deepseek-r1", 1, 16, 64),
          setup("llama-moe-6.7b", 1, 4, 16)};
}

config::TrainingJob paper_setup(const std::string& model, const std::string& field) {
  for (const config::TrainingJob& m : paper_models()) {
    if (m.model == model) return m;
  }
  // Another name of a paper model's architecture (deepseek-v3 for deepseek-r1): its setup, under
  // the name asked for, which every output then prints.
  try {
    const workload::ModelSpec asked = workload::load_model(model);
    for (config::TrainingJob m : paper_models()) {
      const workload::ModelSpec paper = workload::load_model(m.model);
      if (std::find(paper.aliases.begin(), paper.aliases.end(), asked.name) !=
          paper.aliases.end()) {
        m.model = asked.name;
        return m;
      }
    }
  } catch (const Error&) {
    // Not a model at all: the error below lists the setups there are.
  }
  std::string known;
  std::vector<std::string> names;
  for (const config::TrainingJob& m : paper_models()) {
    known += (known.empty() ? "" : ", ") + m.model;
    names.push_back(m.model);
    for (const std::string& alias : workload::load_model(m.model).aliases)
      names.push_back(alias);
  }
  const std::optional<std::string> near = closest_name(model, names);
  throw Error("", field,
              fmt::format("no paper setup for model {}{} (known: {}); give an experiment file "
                          "with its parallelism instead",
                          quote_input(model),
                          near ? fmt::format("; did you mean '{}'?", *near) : "", known));
}

std::vector<FabricChoice> paper_fabrics() {
  return {{paper_label::kFatTree, "fat-tree", ""},
          {paper_label::kFatTree3to1, "fat-tree:oversubscription=3", ""},
          {paper_label::kRailOptimized, "rail-optimized", ""},
          {paper_label::kTopoOpt, "topoopt", ""},
          {paper_label::kMfabric, kMfabricSpec, ""}};
}

Spread parse_spread(const std::string& text, const std::string& field) {
  if (text == "full") return Spread{};
  if (text == "seeds") return Spread{.seeds = Spread{}.seeds, .skew_band = false};
  if (text == "none") return Spread{.seeds = 1, .skew_band = false};
  throw Error("", field,
              fmt::format("unknown spread {} (known: full, seeds, none)", quote_input(text)));
}

std::string to_string(const Spread& s) {
  const Spread full;
  if (s.seeds == full.seeds && s.skew_band) return "full";
  if (s.seeds == full.seeds && !s.skew_band) return "seeds";
  if (s.seeds == 1 && !s.skew_band) return "none";
  return fmt::format("{} seeds{}", s.seeds, s.skew_band ? " and the skew band" : "");
}

std::vector<Verdict> verdicts(const std::vector<CompareRun>& runs,
                              fabric::CostConvention convention) {
  std::vector<Verdict> out;
  const auto finished = [](double t) { return std::isfinite(t) && t > 0; };
  for (const CompareRun& m : runs) {
    if (!is_reconfigurable_run(m) || !m.error.empty() || !finished(m.iteration_time_s)) continue;
    const CompareRun* b = fat_tree_of(runs, m);
    if (b == nullptr) continue;
    Verdict v;
    v.model = m.model;
    v.link_gbps = m.link_gbps;
    v.fabric = m.fabric;
    v.baseline = b->fabric;
    v.baseline_all_to_all = b->all_to_all;
    // The speeds of every pair at one seed and skew: the base pair first.
    std::vector<double> speeds{b->iteration_time_s / m.iteration_time_s};
    for (const SpreadRun& x : m.spread) {
      if (!x.error.empty() || !finished(x.iteration_time_s)) continue;
      for (const SpreadRun& y : b->spread) {
        if (y.seed == x.seed && y.skew == x.skew && y.error.empty() && finished(y.iteration_time_s))
          speeds.push_back(y.iteration_time_s / x.iteration_time_s);
      }
    }
    v.pairs = static_cast<int>(speeds.size());
    v.speed = {speeds.front(), *std::min_element(speeds.begin(), speeds.end()),
               *std::max_element(speeds.begin(), speeds.end())};
    const double cost = m.cost(convention).total();
    const double base_cost = b->cost(convention).total();
    if (cost > 0 && base_cost > 0 && std::isfinite(cost) && std::isfinite(base_cost)) {
      // The costs do not vary with the seed: perf/$ is the speed over the cost ratio.
      const double c = cost / base_cost;
      v.perf_per_dollar = RatioRange{v.speed.value / c, v.speed.low / c, v.speed.high / c};
    }
    out.push_back(std::move(v));
  }
  return out;
}

const char* to_string(Baselines b) {
  return b == Baselines::AsGiven ? "as-given" : "strongest";
}

Baselines parse_baselines(const std::string& text, const std::string& field) {
  if (text == "strongest") return Baselines::Strongest;
  if (text == "as-given") return Baselines::AsGiven;
  throw Error("", field,
              fmt::format("unknown baselines {} (known: strongest, as-given)", quote_input(text)));
}

std::vector<std::string> all_to_all_trials(const CompareSpec& spec, const FabricChoice& fabric) {
  if (spec.baselines != Baselines::Strongest || !fabric.all_to_all.empty() ||
      spec.base.algorithms.all_to_all != "auto")
    return {};
  const fabric::FabricKind* kind = fabric::find_fabric_kind(Spec::parse(fabric.spec).name());
  if (kind == nullptr || kind->traits.baseline_all_to_alls.size() < 2) return {};
  return kind->traits.baseline_all_to_alls;
}

std::string all_to_all_of(const config::Experiment& e) {
  if (e.algorithms.all_to_all != "auto") return e.algorithms.all_to_all;
  const fabric::FabricKind* kind = fabric::find_fabric_kind(e.fabric.name());
  if (kind == nullptr) return "direct";
  if (kind->traits.reconfigurable) return "proxy";
  return kind->traits.all_to_all;
}

const char* to_string(Assumptions a) {
  return a == Assumptions::Paper ? "paper" : "default";
}

Assumptions parse_assumptions(const std::string& text, const std::string& field) {
  if (text == "default") return Assumptions::Default;
  if (text == "paper") return Assumptions::Paper;
  throw Error("", field,
              fmt::format("unknown assumptions {} (known: default, paper)", quote_input(text)));
}

std::vector<FabricChoice> fabrics_for(Assumptions a) {
  if (a == Assumptions::Default) return paper_fabrics();
  // The paper's simulator sends every all-to-all as flat GPU-pair flows (direct) on the
  // baselines; each electrical baseline runs again with the hierarchical all-to-all, which
  // spreads a hot GPU's bytes over its server's NICs as mFabric's proxy does.
  return {{paper_label::kFatTree, "fat-tree", "direct"},
          {paper_label::kFatTree3to1, "fat-tree:oversubscription=3", "direct"},
          {paper_label::kRailOptimized, "rail-optimized", "direct"},
          {paper_label::kTopoOpt, "topoopt", ""},
          {paper_label::kMfabric, kMfabricPaperSimSpec, ""},
          {"fat-tree+hierarchical", "fat-tree", "hierarchical"},
          {"fat-tree-3to1+hierarchical", "fat-tree:oversubscription=3", "hierarchical"},
          {"rail-optimized+hierarchical", "rail-optimized", "hierarchical"}};
}

FabricChoice parse_fabric_choice(const std::string& text, const std::string& field) {
  const std::size_t plus = text.rfind('+');
  if (plus != std::string::npos) {
    const std::string algorithm = text.substr(plus + 1);
    // Any all-to-all lowering an experiment may choose (collective/lowering.h), but `auto`: the
    // label names what its runs use.
    std::vector<std::string> known =
        collective::algorithm_choices(workload::CollectiveKind::AllToAll);
    known.erase(std::remove(known.begin(), known.end(), "auto"), known.end());
    if (std::find(known.begin(), known.end(), algorithm) == known.end()) {
      throw Error("", field,
                  fmt::format("unknown all-to-all algorithm {} after '+' (known: {})",
                              quote_input(algorithm), fmt::join(known, ", ")));
    }
    FabricChoice f = parse_fabric_choice(text.substr(0, plus), field);
    f.label = text;
    f.all_to_all = algorithm;
    return f;
  }
  for (const FabricChoice& f : paper_fabrics()) {
    if (f.label == text) return f;
  }
  // Any fabric spec: checked by building it on a small cluster of the default shape.
  const Spec spec = with_context("", field, [&] { return Spec::parse(text); });
  if (!fabric::fabric_kinds().contains(spec.name())) {
    std::string labels;
    for (const FabricChoice& f : paper_fabrics())
      labels += (labels.empty() ? "" : ", ") + f.label;
    throw Error("", field,
                fmt::format("unknown fabric '{}' (known: {}, or a fabric spec NAME[:key=value,...] "
                            "of a kind listed by 'mfabric fabrics')",
                            text, labels));
  }
  return {text, text, ""};
}

CompareSpec paper_compare() {
  CompareSpec s;
  s.models = paper_models();
  s.links = {Rate::gbps(100), Rate::gbps(200), Rate::gbps(400), Rate::gbps(800)};
  s.fabrics = paper_fabrics();
  s.base.source = "compare";
  s.base.cluster.servers = 128;
  s.base.seed = 1;
  s.base.calibration = workload::default_calibration(s.base.gpu);
  s.description = "the paper's evaluation: 5 models x 4 link speeds x 5 fabrics";
  return s;
}

CompareSpec paper_compare_quick() {
  CompareSpec s = paper_compare();
  s.models = {paper_setup("mixtral-8x22b", "models"), paper_setup("mixtral-8x7b", "models")};
  s.links = {Rate::gbps(100), Rate::gbps(400)};
  // The fat-tree, rail-optimized and mFabric only: with the strongest baseline and the skew band
  // the quick subset is 2 minutes on 2 cores already; the 3:1 fat-tree's strongest baseline for
  // Mixtral 8x22B is the hierarchical all-to-all, whose eight times as many transfers take 2
  // minutes to simulate at 100G by themselves, and TopoOpt's runs are 13 s more
  // (docs/compare.md, "What it costs"). The full evaluation has both.
  s.fabrics.erase(std::remove_if(s.fabrics.begin(), s.fabrics.end(),
                                 [](const FabricChoice& f) {
                                   return f.label == paper_label::kFatTree3to1 ||
                                          f.label == paper_label::kTopoOpt;
                                 }),
                  s.fabrics.end());
  // The skew band without more seeds: the routing's skew is what can flip a verdict (the seeds
  // move these runs' ratios by about 1%), in under 2 minutes with the rest (docs/compare.md).
  s.spread = Spread{.seeds = 1, .skew_band = true};
  s.description =
      "the paper's evaluation, quick subset: Mixtral 8x22B and 8x7B at 100G and 400G on the "
      "fat-tree, rail-optimized and mFabric (the full evaluation: mfabric compare --full, with "
      "the 3:1 fat-tree and TopoOpt)";
  return s;
}

config::Experiment run_experiment(const CompareSpec& spec, const config::TrainingJob& m, Rate link,
                                  const FabricChoice& fabric) {
  config::Experiment e = spec.base;
  e.cluster.link = link;
  e.fabric = Spec::parse(fabric.spec);
  if (!fabric.all_to_all.empty()) e.algorithms.all_to_all = fabric.all_to_all;
  // A fabric with regions gets one EP group per region unless its spec says otherwise.
  e.fabric = fabric::with_region(e.fabric, config::ep_group_servers(m, e.cluster));
  // The model and its parallelism; how it trains (routing, schedule, overlap) is the base
  // experiment's.
  config::TrainingJob job = m;
  if (spec.base.model) {
    job.routing_trace = spec.base.model->routing_trace;
    job.synthetic = spec.base.model->synthetic;
    job.schedule = spec.base.model->schedule;
    job.overlap = spec.base.model->overlap;
  }
  e.model = job;
  e.micro.reset();
  e.chakra.clear();
  e.connection_matrix.clear();
  return e;
}

}  // namespace mfabric::study
