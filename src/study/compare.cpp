#include "study/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/json_text.h"
#include "core/output_text.h"
#include "core/rng.h"
#include "core/spec.h"
#include "fabric/builders.h"
#include "net/backends.h"
#include "sim/simulation.h"
#include "study/parallel.h"
#include "study/sweep.h"
#include "study/sweep_journal.h"
#include "study/sweep_run.h"
#include "workload/model.h"
#include "workload/parallelism.h"

namespace mfabric::study {
namespace {

const char* const kMfabricSpec = "mfabric:alpha=6,reconfiguration=25ms,policy=block,planner=greedy";
// The same under the paper's simulator's controller (sim/policies/paper_sim.h).
const char* const kMfabricPaperSimSpec =
    "mfabric:alpha=6,reconfiguration=25ms,policy=paper-sim,planner=greedy";

// The servers of one EP group: mFabric's region when the spec names none.
int region_servers(const ModelSetup& m, const fabric::ClusterSpec& c) {
  const int gpus = m.ep * m.tp;
  return std::max(1, std::min(c.servers, (gpus + c.gpus_per_server - 1) / c.gpus_per_server));
}

bool is_ep_all_to_all(const workload::Task& t) {
  return t.kind == workload::TaskKind::Collective &&
         t.collective == workload::CollectiveKind::AllToAll && t.traffic == workload::Traffic::EP;
}

// Region 0's reconfigurations and EP all-to-alls of one mFabric run.
std::vector<TimelineSpan> region_timeline(const sim::Simulation& s) {
  std::vector<TimelineSpan> out;
  if (!s.control || s.topology.regions().empty()) return out;
  for (const sim::ReconfigurationSpan& r : s.control->spans) {
    if (r.region == 0) out.push_back({r.start.seconds(), r.end.seconds(), true});
  }
  const int per_region =
      s.topology.regions().front().servers * s.topology.cluster().gpus_per_server;
  for (const sim::TaskSpan& span : s.result.spans) {
    const workload::Task& t = s.graph.task(span.task);
    if (!is_ep_all_to_all(t)) continue;
    if (s.graph.group(t.group).front() / per_region != 0) continue;
    out.push_back({span.start.seconds(), span.end.seconds(), false});
  }
  std::sort(out.begin(), out.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
    return std::tie(a.start_s, a.end_s, a.reconfiguration) <
           std::tie(b.start_s, b.end_s, b.reconfiguration);
  });
  return out;
}

}  // namespace

void fill_run_figures(CompareRun& run, const sim::Simulation& s, double tokens_per_iteration) {
  run.fabric_spec = s.topology.spec();
  run.gpus = s.graph.job_gpus();
  run.iteration_time_s = s.result.mean_iteration_time().seconds();
  run.tokens_per_s = run.iteration_time_s > 0 ? tokens_per_iteration / run.iteration_time_s : 0;
  const fabric::PriceBook prices = fabric::PriceBook::paper_defaults();
  run.cost_built = fabric::network_cost(s.topology, fabric::CostConvention::Built, prices);
  run.cost_paper = fabric::network_cost(s.topology, fabric::CostConvention::Paper, prices);
  // Per iteration and GPU, as RunResult::exposed_comm is: the compute durations are the graph's
  // own (a comparison injects no failures that would slow a GPU down).
  run.iterations = static_cast<int>(s.result.iteration_times.size());
  const double iterations = std::max(1, run.iterations);
  const double gpus = std::max(1, run.gpus);
  double compute_s = 0;
  std::int64_t all_to_alls = 0;
  for (const workload::Task& t : s.graph.tasks()) {
    if (t.kind == workload::TaskKind::Compute) compute_s += t.duration.seconds();
    if (is_ep_all_to_all(t)) ++all_to_alls;
  }
  run.compute_s = compute_s / gpus / iterations;
  run.exposed_communication_s = s.result.exposed_comm.seconds();
  if (s.control) {
    const sim::ControlStats& c = *s.control;
    ReconfigurationSummary r;
    r.policy = c.policy;
    r.planner = c.planner;
    r.count = c.reconfigurations;
    r.time_s = c.reconfiguration_time.seconds();
    r.held_time_s = c.held_time.seconds();
    r.holds = c.held;
    r.all_to_alls = all_to_alls;
    r.regions = static_cast<int>(s.topology.regions().size());
    r.critical_holds = s.result.critical_holds;
    r.critical_held_s = s.result.critical_held_time.seconds();
    // Bytes over circuits (the backend's circuit slots follow the topology's links) and over
    // the EPS (NIC-to-switch cables), as results.json counts them.
    for (std::size_t ch = 0; ch < s.result.channels.size(); ++ch) {
      const auto link = static_cast<fabric::LinkId>(ch / 2);
      if (static_cast<std::size_t>(link) >= s.topology.links().size()) {
        r.circuit_bytes += s.result.channels[ch].bytes;
        continue;
      }
      const fabric::Link& k = s.topology.link(link);
      const fabric::NodeId from = ch % 2 == 0 ? k.a : k.b;
      const fabric::NodeId to = ch % 2 == 0 ? k.b : k.a;
      if (k.kind == fabric::LinkKind::Cable &&
          s.topology.node(from).kind == fabric::NodeKind::Nic &&
          s.topology.node(to).kind == fabric::NodeKind::Switch) {
        r.eps_bytes += s.result.channels[ch].bytes;
      }
    }
    run.reconfiguration = r;
  }
}

double tokens_per_iteration(const sim::Experiment& e) {
  if (!e.model) return 0;
  return static_cast<double>(e.model->global_batch) * e.model->ep * e.model->seq;
}

fabric::CostConvention counted_convention(fabric::CostConvention c) {
  return c == fabric::CostConvention::Built ? fabric::CostConvention::Built
                                            : fabric::CostConvention::Paper;
}

const char* cost_convention_label(fabric::CostConvention c) {
  return counted_convention(c) == fabric::CostConvention::Built ? "built topology"
                                                                : "paper formulas";
}

const CompareRun* fat_tree_of(const std::vector<CompareRun>& runs, const CompareRun& run) {
  for (const CompareRun& r : runs) {
    if (r.fabric == "fat-tree" && r.error.empty() && r.iteration_time_s > 0 &&
        r.model == run.model && r.link_gbps == run.link_gbps)
      return &r;
  }
  return nullptr;
}

bool is_mfabric_run(const CompareRun& run) {
  if (run.reconfiguration) return true;
  return run.fabric.substr(0, run.fabric.find_first_of(":+")) == "mfabric";
}

void relate_to_fat_tree(std::vector<CompareRun>& runs, fabric::CostConvention convention) {
  // The fat-tree runs by (model, link), the first of each as fat_tree_of finds it: one pass, as
  // a paper-sized comparison has a hundred runs.
  std::map<std::pair<std::string, double>, std::size_t> fat_tree;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const CompareRun& r = runs[k];
    if (r.fabric == "fat-tree" && r.error.empty() && r.iteration_time_s > 0)
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

std::vector<ModelSetup> paper_models() {
  // Reference section 5: TP, PP, EP, micro-batch 8, global batch 128, seq 4096; DP = 1024 GPUs /
  // (TP x PP x EP). Qwen-MoE in its 32-expert EP 32 simulation variant.
  const auto setup = [](const char* model, int tp, int pp, int ep) {
    ModelSetup m;
    m.model = model;
    m.tp = tp;
    m.pp = pp;
    m.ep = ep;
    return m;
  };
  return {setup("mixtral-8x22b", 8, 8, 8), setup("mixtral-8x7b", 4, 4, 8),
          setup("qwen-moe-32", 1, 4, 32), setup("deepseek-r1", 1, 16, 64),
          setup("llama-moe-6.7b", 1, 4, 16)};
}

ModelSetup paper_setup(const std::string& model, const std::string& field) {
  for (const ModelSetup& m : paper_models()) {
    if (m.model == model) return m;
  }
  std::string known;
  for (const ModelSetup& m : paper_models())
    known += (known.empty() ? "" : ", ") + m.model;
  throw Error("", field,
              fmt::format("no paper setup for model '{}' (known: {}); give an experiment file "
                          "with its parallelism instead",
                          model, known));
}

std::vector<FabricChoice> paper_fabrics() {
  return {{"fat-tree", "fat-tree", ""},
          {"fat-tree-3to1", "fat-tree:oversubscription=3", ""},
          {"rail-optimized", "rail-optimized", ""},
          {"topoopt", "topoopt", ""},
          {"mfabric", kMfabricSpec, ""}};
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
  return {{"fat-tree", "fat-tree", "direct"},
          {"fat-tree-3to1", "fat-tree:oversubscription=3", "direct"},
          {"rail-optimized", "rail-optimized", "direct"},
          {"topoopt", "topoopt", ""},
          {"mfabric", kMfabricPaperSimSpec, ""},
          {"fat-tree+hierarchical", "fat-tree", "hierarchical"},
          {"fat-tree-3to1+hierarchical", "fat-tree:oversubscription=3", "hierarchical"},
          {"rail-optimized+hierarchical", "rail-optimized", "hierarchical"}};
}

FabricChoice parse_fabric_choice(const std::string& text, const std::string& field) {
  const std::size_t plus = text.rfind('+');
  if (plus != std::string::npos) {
    const std::string algorithm = text.substr(plus + 1);
    if (algorithm != "direct" && algorithm != "pxn" && algorithm != "hierarchical") {
      throw Error("", field,
                  fmt::format("unknown all-to-all algorithm {} after '+' (known: direct, pxn, "
                              "hierarchical)",
                              quote_input(algorithm)));
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
  std::vector<std::string> kinds;
  for (const auto& k : fabric::fabric_kinds())
    kinds.push_back(k.name);
  if (std::find(kinds.begin(), kinds.end(), spec.name()) == kinds.end()) {
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
  s.description = "the paper's evaluation: 5 models x 4 link speeds x 5 fabrics";
  return s;
}

CompareSpec paper_compare_quick() {
  CompareSpec s = paper_compare();
  s.models = {paper_setup("mixtral-8x22b", "models"), paper_setup("mixtral-8x7b", "models")};
  s.links = {Rate::gbps(100), Rate::gbps(400)};
  s.description =
      "the paper's evaluation, quick subset: Mixtral 8x22B and 8x7B at 100G and 400G on 5 "
      "fabrics (the full evaluation: mfabric compare --full)";
  return s;
}

sim::Experiment run_experiment(const CompareSpec& spec, const ModelSetup& m, Rate link,
                               const FabricChoice& fabric) {
  sim::Experiment e = spec.base;
  e.cluster.link = link;
  e.fabric = Spec::parse(fabric.spec);
  if (!fabric.all_to_all.empty()) e.algorithms.all_to_all = fabric.all_to_all;
  if (e.fabric.name() == "mfabric" && !e.fabric.has("region")) {
    auto params = e.fabric.params();
    params["region"] = std::to_string(region_servers(m, e.cluster));
    e.fabric = Spec(e.fabric.name(), params);
  }
  sim::ModelWorkload w;
  w.model = m.model;
  w.tp = m.tp;
  w.pp = m.pp;
  w.ep = m.ep;
  w.dp = m.dp;
  w.micro_batch = m.micro_batch;
  w.global_batch = m.global_batch;
  w.seq = m.seq;
  if (spec.base.model) {
    w.routing_trace = spec.base.model->routing_trace;
    w.synthetic = spec.base.model->synthetic;
    w.schedule = spec.base.model->schedule;
    w.overlap = spec.base.model->overlap;
  }
  e.model = w;
  e.micro.reset();
  e.chakra.clear();
  e.connection_matrix.clear();
  return e;
}

CompareResult run_compare(const CompareSpec& spec, const std::function<void(int, int)>& progress,
                          const std::function<void(const RunsStart&)>& start) {
  if (spec.models.empty()) throw Error("", "--models", "no model to compare");
  if (spec.links.empty()) throw Error("", "--links", "no link speed to compare");
  if (spec.fabrics.empty()) throw Error("", "--fabrics", "no fabric to compare");
  if (spec.cost_convention == fabric::CostConvention::Calculator) {
    throw Error("", "--convention",
                "a comparison counts network cost as built or paper; the calculator convention is "
                "not computed for its runs (docs/cost-model.md)");
  }
  // The backend is the experiment file's (checked when it was read) or --backend's.
  with_context("", "--backend", [&] { return &net::backends().at(spec.base.backend); });
  const fabric::PriceBook prices = fabric::PriceBook::paper_defaults();
  for (const Rate link : spec.links) {
    try {
      prices.at(link);
    } catch (const Error& e) {
      throw Error("", "--links", e.message());
    }
  }
  CompareResult result;
  result.seed = spec.base.seed;
  result.calibration = spec.base.calibration.name;
  result.assumptions = spec.assumptions;
  result.cost_convention = spec.cost_convention;
  result.backend = spec.base.backend;
  result.completion_batching = spec.base.completion_batching;
  result.description = spec.description;
  result.servers = spec.base.cluster.servers;
  result.gpus_per_server = spec.base.cluster.gpus_per_server;
  result.nics_per_server = spec.base.cluster.nics_per_server;
  result.gpu = spec.base.gpu;
  result.models = spec.models;

  // The job must fit the cluster: DP = GPUs / (TP x PP x EP), or the job's own DP. A model that
  // does not is left out with a note (a smaller cluster still answers for the others); an
  // unknown model is an error.
  const int gpus = spec.base.cluster.servers * spec.base.cluster.gpus_per_server;
  std::vector<const ModelSetup*> models;
  std::optional<Error> first_misfit;
  for (const ModelSetup& m : spec.models) {
    const workload::ModelSpec model =
        with_context("", "--models", [&] { return workload::load_model(m.model); });
    try {
      workload::resolve_parallelism(m.tp, m.pp, m.ep, m.dp, m.dp ? 0 : gpus, model,
                                    spec.base.cluster.gpus_per_server);
      models.push_back(&m);
    } catch (const Error& e) {
      const std::string why =
          fmt::format("{} (TP {} x PP {} x EP {}) on {} GPUs ({} servers): {}", m.model, m.tp, m.pp,
                      m.ep, gpus, spec.base.cluster.servers, e.what());
      if (!first_misfit) first_misfit = Error("", "--models", why);
      result.skipped.push_back(why);
    }
  }
  if (models.empty()) throw *first_misfit;

  struct Job {
    const ModelSetup* model;
    Rate link;
    const FabricChoice* fabric;
    std::string fingerprint;
    double cost = 0;
  };
  std::vector<Job> jobs;
  for (const ModelSetup* m : models) {
    for (const Rate link : spec.links) {
      for (const FabricChoice& f : spec.fabrics) {
        // Every fabric can be built for every link and model before anything runs.
        const sim::Experiment e =
            with_context("", "--fabrics", [&] { return run_experiment(spec, *m, link, f); });
        with_context("", "--fabrics",
                     [&] { return fabric::build_fabric(e.fabric, e.cluster).tiers(); });
        const std::string identity = fmt::format(
            "{}\n{} tp {} pp {} ep {} dp {} mb {} gb {} seq {}\n{} bps\n{}\n{}\n{}",
            spec.fingerprint_basis, m->model, m->tp, m->pp, m->ep, m->dp.value_or(0),
            m->micro_batch, m->global_batch, m->seq, link.bps(), f.label, f.spec, f.all_to_all);
        jobs.push_back({m, link, &f, fmt::format("{:016x}", fnv1a(identity)), estimated_cost(e)});
        CompareRun run;
        run.model = m->model;
        run.link_gbps = link.bps() / 1e9;
        run.fabric = f.label;
        result.runs.push_back(run);
      }
    }
  }
  const auto fields_of = [&](std::size_t k) {
    return std::vector<FieldValue>{{"model", jobs[k].model->model},
                                   {"link", link_label(jobs[k].link)},
                                   {"fabric", jobs[k].fabric->label}};
  };
  // The timeline comes from the first mFabric run (in the order above).
  std::size_t timeline_job = jobs.size();
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (Spec::parse(jobs[k].fabric->spec).name() == "mfabric") {
      timeline_job = k;
      break;
    }
  }

  // Runs an earlier comparison into the same journal finished. A record of the timeline run
  // without its timeline (cannot happen from this code, but from an edited file) runs again.
  std::vector<bool> resumed(jobs.size(), false);
  std::vector<std::string> records(jobs.size());
  if (!spec.journal.empty()) {
    JournalContents contents =
        read_journal(spec.journal, jobs.size(), [&](std::size_t k) { return jobs[k].fingerprint; });
    if (contents.torn_line > 0) {
      drop_torn_line(spec.journal, contents);
      result.notes.push_back(fmt::format(
          "{}: line {} was cut short (the comparison was stopped while writing it): dropped, its "
          "run runs again",
          spec.journal, contents.torn_line));
    }
    for (auto& [k, record] : contents.points) {
      if (k == timeline_job && record.timeline.empty()) continue;
      records[k] = json_text(run_record_json(fields_of(k), record), -1) + "\n";
      CompareRun& run = result.runs[k];
      run = std::move(record.figures);
      if (k == timeline_job) {
        result.timeline = std::move(record.timeline);
        result.timeline_run = fmt::format("{} {}G {}", run.model, run.link_gbps, run.fabric);
      }
      resumed[k] = true;
      ++result.resumed;
    }
  }

  // The longest runs first, so that the threads finish together. The EP all-to-alls dominate the
  // cost: each is EP x (EP - 1) transfers that share the group's NICs, and a completion can move
  // the rates of all of them, so a run costs about EP squared (DeepSeek-R1's EP 64 most, the
  // Mixtrals' EP 8 least). Ties keep the grid's order.
  std::vector<std::size_t> order;
  double cost_left = 0;
  double largest = 0;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (resumed[k]) continue;
    order.push_back(k);
    cost_left += jobs[k].cost;
    largest = std::max(largest, jobs[k].cost);
  }
  const auto weight = [&](std::size_t k) {
    const double ranks = static_cast<double>(jobs[k].model->ep);
    return ranks * ranks;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });

  if (start) {
    RunsStart s;
    s.runs = static_cast<int>(jobs.size());
    s.resumed = static_cast<int>(result.resumed);
    s.threads = std::max(
        1, std::min(static_cast<int>(order.size()),
                    spec.jobs > 0 ? std::min(spec.jobs, machine_threads()) : machine_threads()));
    s.estimated_s = std::max(cost_left / s.threads, largest) * kSecondsPerCostUnit;
    s.skipped = result.skipped;
    start(s);
  }

  // Opened at the first record: a comparison whose every run fails writes nothing.
  std::unique_ptr<SweepJournal> journal;
  if (!spec.journal.empty()) journal = std::make_unique<SweepJournal>(spec.journal);
  std::mutex done_mutex;
  int done = 0;
  const int total = static_cast<int>(order.size());
  if (progress) progress(0, total);
  const ParallelRun parallel = run_in_parallel(order.size(), spec.jobs, [&](std::size_t i) {
    const std::size_t k = order[i];
    const Job& job = jobs[k];
    SweepRun record;
    record.index = k;
    record.fingerprint = job.fingerprint;
    CompareRun& run = record.figures;
    run = result.runs[k];
    const auto start_time = std::chrono::steady_clock::now();
    try {
      sim::SimulationOptions options;
      options.record_spans = k == timeline_job;
      const sim::Simulation s =
          sim::simulate(run_experiment(spec, *job.model, job.link, *job.fabric), options);
      fill_run_figures(run, s, tokens_per_iteration(s.experiment));
      if (k == timeline_job) record.timeline = region_timeline(s);
    } catch (const Error& e) {
      run.error = e.what();
    } catch (const std::exception& e) {
      // A fault of ours, not of the input: the run is reported, the others go on.
      run.error = fmt::format("internal error: {}", e.what());
    }
    run.wall_time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
    // Every run's figures are what its record reads back as, so that a resumed comparison gives
    // the same results as one run whole; a record the reader would refuse (a figure out of
    // range) is a failed run here, never a journal that cannot be resumed.
    const std::vector<FieldValue> fields = fields_of(k);
    try {
      record = sweep_run_from_json(run_record_json(fields, record), "", "");
    } catch (const Error& e) {
      CompareRun failed = result.runs[k];
      failed.fabric_spec = run.fabric_spec;
      failed.wall_time_s = std::isfinite(run.wall_time_s) ? std::max(0.0, run.wall_time_s) : 0;
      failed.error =
          fmt::format("internal error: a figure of the run is out of range: {}", e.what());
      record.figures = std::move(failed);
      record.timeline.clear();
    }
    const std::lock_guard<std::mutex> lock(done_mutex);
    // A failed run is not journaled: it runs again anyway.
    if (record.figures.error.empty())
      records[k] = json_text(run_record_json(fields, record), -1) + "\n";
    if (journal && result.journal_error.empty() && record.figures.error.empty()) {
      try {
        journal->append(fields, record);
      } catch (const Error& e) {
        // The results still reach the output; only resuming loses this run.
        result.journal_error = e.what();
      }
    }
    result.runs[k] = std::move(record.figures);
    if (k == timeline_job && result.runs[k].error.empty()) {
      result.timeline = std::move(record.timeline);
      const CompareRun& r = result.runs[k];
      result.timeline_run = fmt::format("{} {}G {}", r.model, r.link_gbps, r.fabric);
    }
    if (progress) progress(++done, total);
  });
  result.threads = parallel.threads;
  if (!parallel.failure.empty()) {
    result.notes.push_back(
        fmt::format("could not start more than {} of {} threads ({}): the runs ran on {}",
                    parallel.threads, parallel.planned, parallel.failure, parallel.threads));
  }
  relate_to_fat_tree(result.runs, result.cost_convention);
  for (const std::string& line : records)
    result.journal_records += line;
  return result;
}

}  // namespace mfabric::study
