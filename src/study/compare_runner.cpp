// run_compare: check every run before any starts, take what a journal already holds, run the
// rest on threads (the longest first), journal each as it finishes, relate them to the baseline.
// Each step is a function of its own below; run_compare strings them together.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "core/json_text.h"
#include "core/rng.h"
#include "core/spec.h"
#include "fabric/builders.h"
#include "fabric/fabric_kinds.h"
#include "net/backends.h"
#include "sim/simulation.h"
#include "study/compare.h"
#include "study/parallel.h"
#include "study/sweep.h"
#include "study/sweep_journal.h"
#include "study/sweep_run.h"
#include "workload/model.h"
#include "workload/parallelism.h"

namespace mfabric::study {
namespace {

// One run: its model, link and fabric (with the all-to-all it tries, for a baseline tried with
// several: Baselines::Strongest), the grid's run it stands for (`slot`, its index in
// CompareResult::runs), the fingerprint its journal record must carry, and its estimated cost
// (the longest runs start first).
struct CompareJob {
  const config::TrainingJob* model;
  Rate link;
  FabricChoice fabric;
  std::size_t slot = 0;
  bool trial = false;    // one of several all-to-alls tried for its slot
  std::string identity;  // what its fingerprint hashes, its spread aside
  std::string fingerprint;
  double cost = 0;
  // A run of its slot's spread (Spread): at this seed and skew ("low", "default", "high").
  bool spread = false;
  std::uint64_t seed = 0;
  std::string skew = "default";
};

// The experiment of a job: its grid run's, at its spread's seed and skew.
config::Experiment job_experiment(const CompareSpec& spec, const CompareJob& job) {
  config::Experiment e = run_experiment(spec, *job.model, job.link, job.fabric);
  if (!job.spread) return e;
  e.seed = job.seed;
  if (job.skew != "default" && e.model) {
    const double factor = job.skew == "low" ? kSkewBandLow : kSkewBandHigh;
    e.model->synthetic.skew_initial *= factor;
    e.model->synthetic.skew_final *= factor;
  }
  return e;
}

// Whether the comparison's routing is the synthetic generator's skewed one, which the skew band
// varies (a trace, or a forced-balanced router, has no skew to vary).
bool skew_varies(const CompareSpec& spec) {
  if (!spec.base.model) return true;
  return spec.base.model->routing_trace.empty() &&
         spec.base.model->synthetic.balance == workload::RoutingBalance::Skewed;
}

// The spread's other runs of one grid run: the seeds after the comparison's, then the skew
// band's two ends at its seed.
std::vector<std::pair<std::uint64_t, std::string>> spread_variants(const CompareSpec& spec) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (int i = 1; i < spec.spread.seeds; ++i)
    out.emplace_back(spec.base.seed + static_cast<std::uint64_t>(i), "default");
  if (spec.spread.skew_band && skew_varies(spec)) {
    out.emplace_back(spec.base.seed, "low");
    out.emplace_back(spec.base.seed, "high");
  }
  return out;
}

// Whether a grid run's verdict needs its spread: the baseline's and every reconfigurable
// fabric's.
bool spreads(const FabricChoice& f) {
  if (f.label == kBaselineLabel) return true;
  const fabric::FabricKind* kind = fabric::find_fabric_kind(Spec::parse(f.spec).name());
  return kind != nullptr && kind->traits.reconfigurable;
}

// The fingerprint of a job: its grid run's identity, and its seed and skew when it is a spread's.
std::string job_fingerprint(const CompareJob& job) {
  return fmt::format("{:016x}", fnv1a(job.spread ? fmt::format("{}\nspread seed {} skew {}",
                                                               job.identity, job.seed, job.skew)
                                                 : job.identity));
}

// The checks that need no run: something to compare, a convention a comparison computes, a
// known backend, prices for every link.
void check_spec(const CompareSpec& spec) {
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
}

// What the result records of the comparison beside its runs.
CompareResult result_header(const CompareSpec& spec) {
  CompareResult result;
  result.seed = spec.base.seed;
  result.calibration = spec.base.calibration.name;
  result.assumptions = spec.assumptions;
  result.cost_convention = spec.cost_convention;
  result.baselines = spec.baselines;
  result.spread_seeds = spec.spread.seeds;
  result.spread_skew_band = spec.spread.skew_band && skew_varies(spec);
  result.backend = spec.base.backend;
  result.completion_batching = spec.base.completion_batching;
  result.description = spec.description;
  result.servers = spec.base.cluster.servers;
  result.gpus_per_server = spec.base.cluster.gpus_per_server;
  result.nics_per_server = spec.base.cluster.nics_per_server;
  result.gpu = spec.base.gpu;
  result.models = spec.models;
  return result;
}

// The models whose job fits the cluster: DP = GPUs / (TP x PP x EP), or the job's own DP. A model
// that does not is left out with a note in `result.skipped` (a smaller cluster still answers for
// the others); an unknown model, or none that fits, is an error.
std::vector<const config::TrainingJob*> fitting_models(const CompareSpec& spec,
                                                       CompareResult& result) {
  const int gpus = spec.base.cluster.servers * spec.base.cluster.gpus_per_server;
  std::vector<const config::TrainingJob*> models;
  std::optional<Error> first_misfit;
  for (const config::TrainingJob& m : spec.models) {
    const workload::ModelSpec model =
        with_context("", "--models", [&] { return workload::load_model(m.model); });
    try {
      workload::resolve_parallelism(config::job_parallelism(m), m.dp, m.dp ? 0 : gpus, model,
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
  return models;
}

// Every run of the grid (models x links x fabrics, in that order), a baseline's once per
// all-to-all it tries (all_to_all_trials), each fabric built once on its run's cluster first so
// that a bad one fails before anything runs; the grid's empty records in `result.runs`.
std::vector<CompareJob> make_jobs(const CompareSpec& spec,
                                  const std::vector<const config::TrainingJob*>& models,
                                  CompareResult& result) {
  std::vector<CompareJob> jobs;
  for (const config::TrainingJob* m : models) {
    for (const Rate link : spec.links) {
      for (const FabricChoice& given : spec.fabrics) {
        const std::size_t slot = result.runs.size();
        std::vector<std::string> trials = all_to_all_trials(spec, given);
        const bool tried = !trials.empty();
        if (!tried) trials.push_back(given.all_to_all);
        for (const std::string& algorithm : trials) {
          FabricChoice f = given;
          f.all_to_all = algorithm;
          const config::Experiment e =
              with_context("", "--fabrics", [&] { return run_experiment(spec, *m, link, f); });
          with_context("", "--fabrics",
                       [&] { return fabric::build_fabric(e.fabric, e.cluster).tiers(); });
          // The paper's convention with an even pipeline adds nothing, so that journals made
          // before the other conventions existed still match.
          const bool paper_plain = m->convention == "paper" && m->split.even() && m->vp == 1 &&
                                   m->precision == "bf16" && !m->distributed_optimizer &&
                                   m->dispatcher == "alltoall" && m->max_nodes == 0;
          const std::string layout =
              paper_plain ? ""
                          : fmt::format(" {} etp {} cp {} vp {} split {} {} {} {} {}{}",
                                        m->convention, m->etp, m->cp, m->vp, m->split.first,
                                        m->split.last, m->split.embedding, m->split.loss,
                                        m->precision, m->distributed_optimizer ? " zero1" : "") +
                                fmt::format(" {} {}", m->dispatcher, m->max_nodes);
          const std::string identity =
              fmt::format("{}\n{} tp {} pp {} ep {} dp {} mb {} gb {} seq {}{}\n{} bps\n{}\n{}\n{}",
                          spec.fingerprint_basis, m->model, m->tp, m->pp, m->ep, m->dp.value_or(0),
                          m->micro_batch, m->global_batch, m->seq, layout, link.bps(), f.label,
                          f.spec, f.all_to_all);
          CompareJob job{m, link, f, slot, tried, identity, "", estimated_cost(e)};
          job.fingerprint = job_fingerprint(job);
          jobs.push_back(std::move(job));
        }
        CompareRun run;
        run.model = m->model;
        run.link_gbps = link.bps() / 1e9;
        run.fabric = given.label;
        result.runs.push_back(run);
      }
    }
  }
  return jobs;
}

std::vector<FieldValue> fields_of(const CompareJob& job) {
  std::vector<FieldValue> fields{
      {"model", job.model->model}, {"link", link_label(job.link)}, {"fabric", job.fabric.label}};
  if (job.trial || job.spread) fields.push_back({"all_to_all", job.fabric.all_to_all});
  if (job.spread) {
    fields.push_back({"seed", std::to_string(job.seed)});
    fields.push_back({"skew", job.skew});
  }
  return fields;
}

// The run whose region 0 the timeline figure shows: the first of a fabric that reconfigures, in
// the grid's order; jobs.size() for none.
std::size_t timeline_job(const std::vector<CompareJob>& jobs) {
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const fabric::FabricKind* kind =
        fabric::find_fabric_kind(Spec::parse(jobs[k].fabric.spec).name());
    if (kind != nullptr && kind->traits.reconfigurable) return k;
  }
  return jobs.size();
}

// Runs `from` on that an earlier comparison into the same journal finished: their figures into
// `job_runs`, their records into `records`; true in `resumed` for each. A record of the timeline
// run without its timeline (cannot happen from this code, but from an edited file) runs again.
std::vector<bool> resume(const CompareSpec& spec, const std::vector<CompareJob>& jobs,
                         std::size_t from, std::size_t timeline, CompareResult& result,
                         std::vector<CompareRun>& job_runs, std::vector<std::string>& records) {
  std::vector<bool> resumed(jobs.size(), false);
  if (spec.journal.empty()) return resumed;
  JournalContents contents = read_journal(spec.journal, jobs.size(), [&](std::size_t k) {
    // A record of a run before `from` is not this call's: a fingerprint none matches.
    return k < from ? std::string() : jobs[k].fingerprint;
  });
  if (contents.torn_line > 0) {
    drop_torn_line(spec.journal, contents);
    result.notes.push_back(fmt::format(
        "{}: line {} was cut short (the comparison was stopped while writing it): dropped, its "
        "run runs again",
        spec.journal, contents.torn_line));
  }
  for (auto& [k, record] : contents.points) {
    if (k < from) continue;
    if (k == timeline && record.timeline.empty()) continue;
    // A journal of an earlier version may lack the per-GPU figures: they follow from the run.
    if (record.figures.error.empty())
      fill_gpu_throughput(record.figures, job_experiment(spec, jobs[k]));
    records[k] = json_text(run_record_json(fields_of(jobs[k]), record), -1) + "\n";
    CompareRun& run = job_runs[k];
    run = std::move(record.figures);
    // A journal of an earlier version does not name the all-to-all: it follows from the run.
    if (run.all_to_all.empty()) {
      run.all_to_all = all_to_all_of(job_experiment(spec, jobs[k]));
    }
    if (k == timeline) {
      result.timeline = std::move(record.timeline);
      result.timeline_run = fmt::format("{} {}G {}", run.model, run.link_gbps, run.fabric);
    }
    resumed[k] = true;
    ++result.resumed;
  }
  return resumed;
}

// The runs left, the longest first, so that the threads finish together. The EP all-to-alls
// dominate the cost: each is EP x (EP - 1) transfers that share the group's NICs, and a
// completion can move the rates of all of them, so a run costs about EP squared (DeepSeek-R1's EP
// 64 most, the Mixtrals' EP 8 least). Ties keep the grid's order.
std::vector<std::size_t> run_order(const std::vector<CompareJob>& jobs,
                                   const std::vector<bool>& resumed) {
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (!resumed[k]) order.push_back(k);
  }
  const auto weight = [&](std::size_t k) {
    const double ranks = static_cast<double>(jobs[k].model->ep);
    return ranks * ranks;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });
  return order;
}

// What the opening line says: runs, resumed, threads and a rough wall time.
RunsStart runs_start(const CompareSpec& spec, const std::vector<CompareJob>& jobs,
                     const std::vector<std::size_t>& order, const CompareResult& result) {
  double cost_left = 0;
  double largest = 0;
  for (std::size_t k : order) {
    cost_left += jobs[k].cost;
    largest = std::max(largest, jobs[k].cost);
  }
  RunsStart s;
  s.runs = static_cast<int>(jobs.size());
  s.resumed = static_cast<int>(result.resumed);
  s.trials = static_cast<int>(
      std::count_if(jobs.begin(), jobs.end(), [](const CompareJob& j) { return j.trial; }));
  s.spread = 0;
  s.threads = std::max(
      1, std::min(static_cast<int>(order.size()),
                  spec.jobs > 0 ? std::min(spec.jobs, machine_threads()) : machine_threads()));
  s.estimated_s = std::max(cost_left / s.threads, largest) * kSecondsPerCostUnit;
  s.skipped = result.skipped;
  return s;
}

// One run: its simulation, its figures, and its record as the journal will read it back, so that
// a resumed comparison gives the same results as one run whole; a record the reader would refuse
// (a figure out of range) is a failed run here, never a journal that cannot be resumed.
SweepRun run_job(const CompareSpec& spec, const CompareJob& job, std::size_t k,
                 const CompareRun& empty, bool with_timeline) {
  SweepRun record;
  record.index = k;
  record.fingerprint = job.fingerprint;
  CompareRun& run = record.figures;
  run = empty;
  const auto start_time = std::chrono::steady_clock::now();
  try {
    sim::SimulationOptions options;
    options.record_spans = with_timeline;
    config::Experiment e = job_experiment(spec, job);
    run.all_to_all = all_to_all_of(e);
    const sim::Simulation s = sim::simulate(std::move(e), options);
    fill_run_figures(run, s, tokens_per_iteration(s.experiment));
    if (with_timeline) record.timeline = region_timeline(s);
  } catch (const Error& e) {
    run.error = e.what();
  } catch (const std::exception& e) {
    // A fault of ours, not of the input: the run is reported, the others go on.
    run.error = fmt::format("internal error: {}", e.what());
  }
  run.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  try {
    record = sweep_run_from_json(run_record_json(fields_of(job), record), "", "");
  } catch (const Error& e) {
    CompareRun failed = empty;
    failed.fabric_spec = run.fabric_spec;
    failed.all_to_all = run.all_to_all;
    failed.wall_time_s = std::isfinite(run.wall_time_s) ? std::max(0.0, run.wall_time_s) : 0;
    failed.error = fmt::format("internal error: a figure of the run is out of range: {}", e.what());
    record.figures = std::move(failed);
    record.timeline.clear();
  }
  return record;
}

// Each grid run from its jobs: the one run as it is, or of a baseline's tried all-to-alls the
// fastest that finished, with every one tried (a baseline none of whose tries finished: the
// first one's failure, with the others' in its error).
void keep_fastest_trials(const std::vector<CompareJob>& jobs, std::vector<CompareRun>& job_runs,
                         std::vector<CompareRun>& runs) {
  std::vector<std::vector<std::size_t>> of_slot(runs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k)
    of_slot[jobs[k].slot].push_back(k);
  for (std::size_t slot = 0; slot < runs.size(); ++slot) {
    const std::vector<std::size_t>& ks = of_slot[slot];
    if (ks.empty()) continue;
    if (ks.size() == 1 && !jobs[ks.front()].trial) {
      runs[slot] = std::move(job_runs[ks.front()]);
      continue;
    }
    // Of equally fast ones (PXN is direct where every EP group is on one rail), the fabric's
    // own all-to-all, as --baselines as-given would name it.
    const fabric::FabricKind* kind =
        fabric::find_fabric_kind(Spec::parse(jobs[ks.front()].fabric.spec).name());
    const std::string own = kind != nullptr ? kind->traits.all_to_all : "";
    const auto faster = [&](std::size_t a, std::size_t b) {
      const double ta = job_runs[a].iteration_time_s;
      const double tb = job_runs[b].iteration_time_s;
      if (ta != tb) return ta < tb;
      return jobs[a].fabric.all_to_all == own && jobs[b].fabric.all_to_all != own;
    };
    std::vector<AllToAllTrial> trials;
    std::optional<std::size_t> fastest;
    for (std::size_t k : ks) {
      const CompareRun& r = job_runs[k];
      const bool finished = r.error.empty() && r.iteration_time_s > 0;
      trials.push_back({jobs[k].fabric.all_to_all, finished ? r.iteration_time_s : 0, r.error});
      if (finished && (!fastest || faster(k, *fastest))) fastest = k;
    }
    runs[slot] = std::move(job_runs[fastest.value_or(ks.front())]);
    runs[slot].all_to_all_trials = std::move(trials);
  }
}

}  // namespace

CompareResult run_compare(const CompareSpec& spec, const std::function<void(int, int)>& progress,
                          const std::function<void(const RunsStart&)>& start) {
  check_spec(spec);
  if (spec.spread.seeds < 1 || spec.spread.seeds > kMaxSpreadSeeds) {
    throw Error("", "--seeds",
                fmt::format("must be 1 to {}, got {}", kMaxSpreadSeeds, spec.spread.seeds));
  }
  CompareResult result = result_header(spec);
  std::vector<CompareJob> jobs = make_jobs(spec, fitting_models(spec, result), result);
  const std::size_t grid_jobs = jobs.size();
  const std::size_t timeline = timeline_job(jobs);
  std::vector<std::string> records(jobs.size());
  // Each job's run, its grid record's copy to start from.
  std::vector<CompareRun> job_runs;
  job_runs.reserve(jobs.size());
  for (const CompareJob& job : jobs)
    job_runs.push_back(result.runs[job.slot]);
  const std::vector<bool> resumed = resume(spec, jobs, 0, timeline, result, job_runs, records);
  const std::vector<std::size_t> order = run_order(jobs, resumed);
  // The spread's runs, planned now and made once the grid has run (a baseline's all-to-all is
  // known only then).
  const auto variants = spread_variants(spec);
  std::vector<bool> spread_slot(result.runs.size(), false);
  for (const CompareJob& job : jobs)
    spread_slot[job.slot] = spreads(job.fabric);
  const int planned_spread =
      static_cast<int>(variants.size() * static_cast<std::size_t>(std::count(
                                             spread_slot.begin(), spread_slot.end(), true)));
  RunsStart opening = runs_start(spec, jobs, order, result);
  opening.runs += planned_spread;
  opening.spread = planned_spread;
  if (start) start(opening);

  // Opened at the first record: a comparison whose every run fails writes nothing.
  std::unique_ptr<SweepJournal> journal;
  if (!spec.journal.empty()) journal = std::make_unique<SweepJournal>(spec.journal);
  std::mutex done_mutex;
  int done = 0;
  int total = static_cast<int>(order.size()) + planned_spread;
  if (progress) progress(0, total);
  const auto run_jobs = [&](const std::vector<std::size_t>& indices) {
    const ParallelRun parallel = run_in_parallel(indices.size(), spec.jobs, [&](std::size_t i) {
      const std::size_t k = indices[i];
      SweepRun record = run_job(spec, jobs[k], k, job_runs[k], k == timeline);
      const std::vector<FieldValue> fields = fields_of(jobs[k]);
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
      job_runs[k] = std::move(record.figures);
      if (k == timeline && job_runs[k].error.empty()) {
        result.timeline = std::move(record.timeline);
        const CompareRun& r = job_runs[k];
        result.timeline_run = fmt::format("{} {}G {}", r.model, r.link_gbps, r.fabric);
      }
      if (progress) progress(++done, total);
    });
    result.threads = std::max(result.threads, parallel.threads);
    if (!parallel.failure.empty()) {
      result.notes.push_back(
          fmt::format("could not start more than {} of {} threads ({}): the runs ran on {}",
                      parallel.threads, parallel.planned, parallel.failure, parallel.threads));
    }
  };
  run_jobs(order);
  keep_fastest_trials(jobs, job_runs, result.runs);

  // The spread: each verdict's run (the baseline's with the all-to-all it kept) again at the
  // other seeds and skews.
  for (std::size_t slot = 0; slot < result.runs.size() && !variants.empty(); ++slot) {
    const CompareRun& run = result.runs[slot];
    if (!spread_slot[slot] || !run.error.empty() || !(run.iteration_time_s > 0)) continue;
    // The grid's job of the run kept: the one, or the trial of the all-to-all it kept.
    std::optional<CompareJob> grid;
    for (std::size_t k = 0; k < grid_jobs && !grid; ++k) {
      if (jobs[k].slot == slot && (!jobs[k].trial || jobs[k].fabric.all_to_all == run.all_to_all))
        grid = jobs[k];
    }
    if (!grid) continue;
    CompareRun empty;
    empty.model = run.model;
    empty.link_gbps = run.link_gbps;
    empty.fabric = run.fabric;
    for (const auto& [seed, skew] : variants) {
      CompareJob v = *grid;
      v.trial = false;
      v.spread = true;
      v.seed = seed;
      v.skew = skew;
      v.fingerprint = job_fingerprint(v);
      jobs.push_back(std::move(v));
      job_runs.push_back(empty);
      records.emplace_back();
    }
  }
  const std::vector<bool> spread_resumed =
      resume(spec, jobs, grid_jobs, timeline, result, job_runs, records);
  std::vector<std::size_t> spread_order;
  for (std::size_t k = grid_jobs; k < jobs.size(); ++k) {
    if (!spread_resumed[k]) spread_order.push_back(k);
  }
  total = done + static_cast<int>(spread_order.size());
  if (progress) progress(done, total);
  run_jobs(spread_order);
  for (std::size_t k = grid_jobs; k < jobs.size(); ++k) {
    const CompareRun& r = job_runs[k];
    result.runs[jobs[k].slot].spread.push_back(
        {jobs[k].seed, jobs[k].skew, r.error.empty() ? r.iteration_time_s : 0, r.error});
  }
  relate_to_fat_tree(result.runs, result.cost_convention);
  for (const std::string& line : records)
    result.journal_records += line;
  return result;
}

}  // namespace mfabric::study
