#include "sim/steady_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/rng.h"

#include "workload/training_schedule.h"

namespace mfabric::sim {
namespace {

using workload::PipelineSchedule;

// The draws that estimate the latest chain's end, and their seed: a run's extrapolation is the
// same every time.
constexpr int kExtrapolationDraws = 1000;
// Chains whose steady ends all lie within this share of a repeat of one another's are one chain.
constexpr double kSameChain = 0.05;
constexpr std::uint64_t kExtrapolationSeed = 0x5eed'57ea'd7ULL;

// A standard normal draw (Box-Muller over Rng::uniform, the same on every platform).
double standard_normal(Rng& rng) {
  constexpr double kTwoPi = 6.283185307179586;
  const double u = 1.0 - rng.uniform();  // (0, 1]
  return std::sqrt(-2.0 * std::log(u)) * std::cos(kTwoPi * rng.uniform());
}

// Micro-batches per steady repeat, which is also the step between the counts the schedule
// allows.
int unit_of(PipelineSchedule schedule, int stages) {
  switch (schedule) {
    case PipelineSchedule::Interleaved:
      return stages;
    case PipelineSchedule::DualPipe:
      return 2;
    default:
      return 1;
  }
}

int fewest_allowed(PipelineSchedule schedule, int stages) {
  switch (schedule) {
    case PipelineSchedule::Interleaved:
      return stages;
    case PipelineSchedule::DualPipe:
      return 2 * stages;
    default:
      return 1;
  }
}

// Steady backward ends per repeat: DualPipe's repeat holds one micro-batch of each direction, and
// only the first direction's end their pipeline on stage 0 (the second direction's backwards
// begin there, in its warm-up as well as in its steady phase).
int lag_of(PipelineSchedule schedule, int stages) {
  return schedule == PipelineSchedule::DualPipe ? 1 : unit_of(schedule, stages);
}

// Per micro-batch of the first stage's schedule of `micro_batches`: whether it ends on stage 0
// (DualPipe: it enters there) with its last backward there before the stage's last forward.
std::vector<bool> steady_micro_batches(PipelineSchedule schedule, int stages, int chunks,
                                       bool ep_overlap, int micro_batches) {
  const std::vector<workload::training::PipelineStep> steps =
      workload::training::stage_schedule(schedule, stages, 0, micro_batches, chunks, ep_overlap);
  std::size_t last_forward = 0;
  std::vector<std::size_t> last_backward(static_cast<std::size_t>(micro_batches), 0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].forward) {
      last_forward = k;
    } else if (steps[k].micro_batch >= 0 && steps[k].micro_batch < micro_batches) {
      // (An interleaved count that is not a multiple of the stages, which no job has, names
      // micro-batches beyond it.)
      last_backward[static_cast<std::size_t>(steps[k].micro_batch)] = k;
    }
  }
  std::vector<bool> steady(static_cast<std::size_t>(micro_batches));
  const bool dual = schedule == PipelineSchedule::DualPipe;
  for (std::size_t i = 0; i < steady.size(); ++i) {
    steady[i] = last_backward[i] < last_forward && !(dual && 2 * i >= steady.size());
  }
  return steady;
}

// A step in the order the graph is built (run_schedule), without its micro-batch.
struct BuiltStep {
  int stage;
  workload::training::PipelineStep step;
  bool same_place(const BuiltStep& o) const {
    return stage == o.stage && step.forward == o.step.forward && step.chunk == o.step.chunk &&
           step.with_previous == o.step.with_previous;
  }
};

std::vector<BuiltStep> build_order(PipelineSchedule schedule, int stages, int chunks,
                                   bool ep_overlap, int micro_batches) {
  std::vector<BuiltStep> order;
  workload::training::run_schedule(
      schedule, stages, micro_batches, chunks, ep_overlap,
      [&](int stage, std::span<const workload::training::PipelineStep> steps) {
        for (const workload::training::PipelineStep& step : steps)
          order.push_back({stage, step});
      });
  return order;
}

// Where the short run's graph starts to be built as the full job's tail, its cool-down: the first
// step of stage 0 after its last forward from which on the two build orders are the same (their
// common tail, by stage, direction, chunk and merging: what a step's tasks are), named by its
// micro-batch and how many steps of that micro-batch stage 0 ran before it
// (full_job_flow_hash_shifts finds it by these). (Stage 0's first steps after its last forward can
// still be built among the other stages' steady steps.) Sets nothing when there is no such step.
void place_cool_down(SteadyStatePlan& plan, PipelineSchedule schedule, int stages, int chunks,
                     bool ep_overlap) {
  const std::vector<BuiltStep> short_run =
      build_order(schedule, stages, chunks, ep_overlap, plan.simulated);
  const std::vector<BuiltStep> full =
      build_order(schedule, stages, chunks, ep_overlap, plan.micro_batches);
  std::size_t common = 0;
  while (common < short_run.size() && common < full.size() &&
         short_run[short_run.size() - 1 - common].same_place(full[full.size() - 1 - common])) {
    ++common;
  }
  std::size_t last_forward = 0;
  for (std::size_t k = 0; k < short_run.size(); ++k) {
    if (short_run[k].stage == 0 && short_run[k].step.forward) last_forward = k;
  }
  std::map<int, int> seen;  // stage 0's steps so far, per micro-batch
  for (std::size_t k = 0; k < short_run.size(); ++k) {
    if (short_run[k].stage != 0) continue;
    const int mb = short_run[k].step.micro_batch;
    if (k > last_forward && k >= short_run.size() - common) {
      plan.cool_down_micro_batch = mb;
      plan.cool_down_occurrence = seen[mb];
      return;
    }
    ++seen[mb];
  }
}

}  // namespace

SteadyStatePlan steady_state_plan(PipelineSchedule schedule, int stages, int chunks,
                                  bool ep_overlap, int micro_batches, int samples) {
  SteadyStatePlan plan;
  plan.micro_batches = micro_batches;
  plan.unit = unit_of(schedule, stages);
  plan.lag = lag_of(schedule, stages);
  plan.simulated = micro_batches;
  if (schedule != PipelineSchedule::GPipe) {
    const int step = plan.unit;
    for (int m = fewest_allowed(schedule, stages); m < micro_batches; m += step) {
      std::vector<bool> steady = steady_micro_batches(schedule, stages, chunks, ep_overlap, m);
      const auto count = std::count(steady.begin(), steady.end(), true);
      // n non-overlapping repeats need n x lag + 1 backward ends.
      if (count >= static_cast<long>(samples) * plan.lag + 1) {
        plan.simulated = m;
        plan.steady = std::move(steady);
        place_cool_down(plan, schedule, stages, chunks, ep_overlap);
        return plan;
      }
    }
  }
  plan.steady = steady_micro_batches(schedule, stages, chunks, ep_overlap, micro_batches);
  return plan;
}

ExtrapolationChoice choose_extrapolation(const config::Experiment& e,
                                         const workload::TrainingSpec& spec, int samples) {
  ExtrapolationChoice choice;
  if (e.extrapolate == false || !e.model) return choice;
  const bool asked = e.extrapolate == true;
  const auto no = [&](std::string why) {
    if (asked) choice.why_not = std::move(why);
    return choice;
  };
  if (spec.schedule == PipelineSchedule::GPipe) {
    return no("GPipe has no steady phase (every backward follows the last forward)");
  }
  // Measured (docs/shortcuts.md): DualPipe's first steady repeats are a warm-up transient (the
  // first half a repeat, the next 3-8% long), and the burn-in that skips it saved at most 2x
  // where it was measured. Not extrapolated until the period is measured where DualPipe repeats
  // exactly.
  if (spec.schedule == PipelineSchedule::DualPipe) {
    return no("DualPipe's steady period is not yet measured within the bound (docs/shortcuts.md)");
  }
  if (!e.model->routing_trace.empty()) {
    return no("a recorded routing trace's micro-batches are the job's own");
  }
  if (!e.failures.empty()) return no("failures strike at times of the whole run");
  const int m = spec.micro_batches();
  SteadyStatePlan plan = steady_state_plan(spec.schedule, spec.parallelism.pp, spec.parallelism.vp,
                                           spec.overlap.ep_comm, m, samples);
  if (plan.simulated >= m) {
    return no(fmt::format("{} micro-batches a pipeline are too few: {} steady repeats need more", m,
                          samples));
  }
  if (!asked && 2 * plan.simulated > m) return choice;
  choice.plan = std::move(plan);
  return choice;
}

config::Experiment with_micro_batches(const config::Experiment& e, const SteadyStatePlan& plan) {
  config::Experiment reduced = e;
  // global_batch is micro_batches x (micro-batch x DP) under either convention: scaling it scales
  // the micro-batches alone.
  reduced.model->global_batch = e.model->global_batch / plan.micro_batches * plan.simulated;
  // Each replica's first micro-batches route as the job's do (the same synthetic matrices).
  reduced.model->routing_of_micro_batches = plan.micro_batches;
  return reduced;
}

std::vector<FlowHashShift> full_job_flow_hash_shifts(const workload::TaskGraph& graph,
                                                     const SteadyStatePlan& plan) {
  if (plan.cool_down_micro_batch < 0) return {};
  // Per iteration: its first task, where its cool-down starts, and its micro-batch tasks
  // (iterations are built one after another, so each holds a range of ids).
  struct Iteration {
    workload::TaskId first = -1;
    workload::TaskId cool_down = -1;
    std::int64_t micro_batch_tasks = 0;
    // GPU 0's steps of the cool-down's micro-batch seen so far, and whether its last compute
    // task was of that micro-batch (a step is a run of such tasks on GPU 0; a recomputed forward
    // inside a backward is part of it).
    int runs = 0;
    bool in_run = false;
  };
  std::vector<Iteration> iterations;
  const std::vector<workload::Task>& tasks = graph.tasks();
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    const workload::Task& t = tasks[k];
    const auto it = static_cast<std::size_t>(t.iteration);
    if (it >= iterations.size()) iterations.resize(it + 1);
    Iteration& i = iterations[it];
    const auto id = static_cast<workload::TaskId>(k);
    if (i.first < 0) i.first = id;
    if (t.micro_batch >= 0) ++i.micro_batch_tasks;
    if (t.kind != workload::TaskKind::Compute || t.gpu() != 0) continue;
    const bool of_step = t.micro_batch == plan.cool_down_micro_batch;
    if (of_step && !i.in_run) {
      if (i.runs == plan.cool_down_occurrence && i.cool_down < 0) i.cool_down = id;
      ++i.runs;
    }
    i.in_run = of_step;
  }
  std::vector<FlowHashShift> shifts;
  std::int64_t moved = 0;  // the skipped micro-batches' tasks of the iterations before
  for (const Iteration& i : iterations) {
    if (i.first < 0 || i.cool_down < 0 || i.micro_batch_tasks % plan.simulated != 0) return {};
    if (moved != 0) shifts.push_back({i.first, moved});
    moved += i.micro_batch_tasks / plan.simulated * (plan.micro_batches - plan.simulated);
    shifts.push_back({i.cool_down, moved});
  }
  return shifts;
}

std::optional<Extrapolation> measure_steady_state(const RunResult& r, const SteadyStatePlan& plan) {
  if (!r.micro_batch_figures || r.iteration_times.empty()) return std::nullopt;
  const int unit = plan.unit;
  const auto lag = static_cast<std::size_t>(plan.lag);
  // The chains of each iteration: first-stage GPUs with the same backward ends run in lockstep
  // (a TP group); so do those whose steady ends all lie within kSameChain of a repeat of one
  // another's (an EP group's members, whose all-to-alls couple them). Each chain counts once.
  struct Chain {
    int iteration;
    std::vector<double> steady;  // sorted
    double last;
  };
  std::vector<Chain> chains;
  {
    std::set<std::pair<int, std::vector<Time>>> seen;
    for (const MicroBatchFigures::BackwardEnds& c :
         r.micro_batch_figures->first_stage_backward_ends) {
      if (!seen.insert({c.iteration, c.ends}).second) continue;
      Chain chain{c.iteration, {}, 0.0};
      for (std::size_t i = 0; i < c.ends.size(); ++i) {
        if (c.ends[i] == Time::max()) continue;
        chain.last = std::max(chain.last, c.ends[i].seconds());
        if (i < plan.steady.size() && plan.steady[i]) chain.steady.push_back(c.ends[i].seconds());
      }
      std::sort(chain.steady.begin(), chain.steady.end());
      chains.push_back(std::move(chain));
    }
  }
  const auto repeats_of = [&](const Chain& c, std::vector<double>& out) {
    for (std::size_t j = 0; (j + 1) * lag < c.steady.size(); ++j)
      out.push_back(c.steady[(j + 1) * lag] - c.steady[j * lag]);
  };
  double rough = 0;  // the mean repeat over every chain, to say what "close" is
  {
    std::vector<double> all;
    for (const Chain& c : chains)
      repeats_of(c, all);
    for (double g : all)
      rough += g / static_cast<double>(all.size());
  }
  std::vector<const Chain*> distinct;
  for (const Chain& c : chains) {
    const bool coupled = std::any_of(distinct.begin(), distinct.end(), [&](const Chain* d) {
      if (d->iteration != c.iteration || d->steady.size() != c.steady.size()) return false;
      for (std::size_t i = 0; i < c.steady.size(); ++i) {
        if (std::abs(c.steady[i] - d->steady[i]) > kSameChain * rough) return false;
      }
      return true;
    });
    if (!coupled) distinct.push_back(&c);
  }
  std::vector<std::vector<double>> last_ends(r.iteration_times.size());
  std::vector<double> repeats;  // seconds, each `unit` micro-batches, over the distinct chains
  double steady_from = std::numeric_limits<double>::infinity(), steady_to = 0;
  for (const Chain* c : distinct) {
    if (c->iteration == 0 && !c->steady.empty()) {
      steady_from = std::min(steady_from, c->steady.front());
      steady_to = std::max(steady_to, c->steady.back());
    }
    repeats_of(*c, repeats);
    if (static_cast<std::size_t>(c->iteration) < last_ends.size()) {
      last_ends[static_cast<std::size_t>(c->iteration)].push_back(c->last);
    }
  }
  if (repeats.size() < 2) return std::nullopt;
  const double n = static_cast<double>(repeats.size());
  double mean = 0;
  for (double g : repeats)
    mean += g;
  mean /= n;
  double var = 0;
  for (double g : repeats)
    var += (g - mean) * (g - mean);
  const double sd = std::sqrt(var / (n - 1));
  const auto [lo, hi] = std::minmax_element(repeats.begin(), repeats.end());
  // Each chain runs the skipped micro-batches' repeats on its own: a sum of skipped / unit
  // repeats, of the measured mean and spread. The iteration ends with its slowest chain, so its
  // expected growth is that of the latest chain end (deterministic draws).
  const double skipped = plan.micro_batches - plan.simulated;
  const double steps = skipped / unit;
  Rng rng(kExtrapolationSeed);
  double added_sum = 0;
  for (const std::vector<double>& ends : last_ends) {
    if (ends.empty()) continue;
    const double latest = *std::max_element(ends.begin(), ends.end());
    double expected = 0;
    for (int draw = 0; draw < kExtrapolationDraws; ++draw) {
      double end = 0;
      for (double l : ends)
        end = std::max(end, l + steps * mean + std::sqrt(steps) * sd * standard_normal(rng));
      expected += end;
    }
    added_sum += expected / kExtrapolationDraws - latest;
  }
  const double added = added_sum / static_cast<double>(r.iteration_times.size());
  Extrapolation x;
  x.micro_batches = plan.micro_batches;
  x.simulated = plan.simulated;
  x.unit = unit;
  x.period = Time::from_seconds(std::max(0.0, added) / skipped);
  x.samples = static_cast<int>(repeats.size());
  x.spread = mean > 0 ? (*hi - *lo) / mean : 0;
  if (steady_to > steady_from) {
    x.steady_from = Time::from_seconds(steady_from);
    x.steady_to = Time::from_seconds(steady_to);
  }
  const double iteration = r.mean_iteration_time().seconds() + added;
  x.bound = iteration > 0 ? 2 * steps * sd / std::sqrt(n) / iteration
                          : std::numeric_limits<double>::infinity();
  return x;
}

void extrapolate(RunResult& r, const Extrapolation& x) {
  const Time added = x.period * static_cast<std::int64_t>(x.micro_batches - x.simulated);
  for (Time& t : r.iteration_times)
    t += added;
  r.makespan += added * static_cast<std::int64_t>(r.iteration_times.size());
  const double scale = x.scale();
  if (r.micro_batch_figures) {
    const MicroBatchFigures& f = *r.micro_batch_figures;
    for (std::size_t k = 0; k < r.comm_time.size(); ++k) {
      r.comm_time[k] += Time::from_seconds(f.comm_time[k].seconds() * (scale - 1));
      r.comm_time_profiled[k] +=
          Time::from_seconds(f.comm_time_profiled[k].seconds() * (scale - 1));
    }
  }
  if (r.micro_batch_figures) {
    r.exposed_comm +=
        Time::from_seconds(r.micro_batch_figures->exposed_comm.seconds() * (scale - 1));
  }
  r.extrapolation = x;
  const std::int64_t of_micro_batches =
      r.micro_batch_figures ? r.micro_batch_figures->bytes_sent : 0;
  r.extrapolation->bytes_sent =
      r.transfers.bytes_sent + std::llround(static_cast<double>(of_micro_batches) * (scale - 1));
}

void extrapolate(ControlStats& c, RunResult& r, const Extrapolation& x) {
  // Plans are made per all-to-all: the skipped micro-batches' all-to-alls make as many as the
  // simulated ones did.
  const double s = x.scale();
  const auto count = [](std::int64_t& n, double by) {
    n = std::llround(static_cast<double>(n) * by);
  };
  count(c.unchanged, s);
  count(c.kept, s);
  count(c.predictions, s);
  // Reconfigurations and holds come when the circuits a plan needs are not up, which may be only
  // while the pipeline fills (circuits that stay up serve every later micro-batch): the skipped
  // micro-batches add what the measured steady phase had per second, for the time they add.
  const double window = (x.steady_to - x.steady_from).seconds();
  const double added = x.period.seconds() * (x.micro_batches - x.simulated);
  const double per_window = window > 0 ? added / window : 0;
  const auto in_window = [&](const std::vector<ReconfigurationSpan>& spans, Time& busy) {
    std::int64_t n = 0;
    busy = Time::zero();
    for (const ReconfigurationSpan& sp : spans) {
      if (sp.start < x.steady_from || sp.start >= x.steady_to) continue;
      ++n;
      busy += sp.end - sp.start;
    }
    return n;
  };
  Time busy;
  const std::int64_t reconfigurations = c.reconfigurations;
  const std::int64_t more_reconfigurations =
      std::llround(static_cast<double>(in_window(c.spans, busy)) * per_window);
  c.reconfigurations += more_reconfigurations;
  c.reconfiguration_time += Time::from_seconds(busy.seconds() * per_window);
  // Circuits torn down and conflicts come with the reconfigurations.
  if (reconfigurations > 0) {
    const double with =
        static_cast<double>(c.reconfigurations) / static_cast<double>(reconfigurations);
    count(c.circuits_torn_down, with);
    count(c.conflicts, with);
  }
  const std::int64_t held = c.held;
  c.held += std::llround(static_cast<double>(in_window(c.holds, busy)) * per_window);
  c.held_time += Time::from_seconds(busy.seconds() * per_window);
  // The holds on the critical path grow with the holds.
  if (held > 0) {
    const double with = static_cast<double>(c.held) / static_cast<double>(held);
    r.critical_holds = std::llround(static_cast<double>(r.critical_holds) * with);
    r.critical_held_time = Time::from_seconds(r.critical_held_time.seconds() * with);
  }
}

std::vector<Time> compute_time_per_gpu(const workload::TaskGraph& graph, const RunResult& r) {
  if (!r.extrapolation) return workload::compute_time_per_gpu(graph);
  const double scale = r.extrapolation->scale();
  std::vector<double> busy(static_cast<std::size_t>(std::max(0, graph.gpus())), 0.0);
  for (const workload::Task& t : graph.tasks()) {
    if (t.kind != workload::TaskKind::Compute) continue;
    busy[static_cast<std::size_t>(t.gpu())] +=
        t.duration().seconds() * (t.micro_batch >= 0 ? scale : 1.0);
  }
  std::vector<Time> out;
  out.reserve(busy.size());
  for (double b : busy)
    out.push_back(Time::from_seconds(b));
  return out;
}

std::string extrapolation_text(const Extrapolation& x) {
  return fmt::format(
      "simulated {} of {} micro-batches a pipeline, the rest extrapolated at {:.2f} ms each "
      "({} steady repeats, spread {:.1f}%, estimated error {:.2f}%)",
      x.simulated, x.micro_batches, x.period.seconds() * 1e3, x.samples, x.spread * 100,
      x.bound * 100);
}

}  // namespace mfabric::sim
