// How busy a run keeps its GPUs, and why they idle (gpu_busy.h).
#include "study/gpu_busy.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/steady_state.h"
#include "workload/model.h"
#include "workload/parallelism.h"
#include "workload/training.h"

namespace mfabric::study {
namespace {

// Each rank's compute time over the run: on its own GPU, or on the spare that took its rank.
// An extrapolated run's (sim/steady_state.h) counts the skipped micro-batches' compute too.
std::vector<double> compute_s_per_rank(const workload::TaskGraph& graph,
                                       const sim::RunResult& result, int ranks,
                                       const std::vector<sim::SpareMove>& spares) {
  const std::vector<Time> per_gpu = sim::compute_time_per_gpu(graph, result);
  std::vector<int> gpu_of(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    gpu_of[static_cast<std::size_t>(r)] = r;
  for (const sim::SpareMove& m : spares) {
    if (m.from_gpu >= 0 && m.from_gpu < ranks)
      gpu_of[static_cast<std::size_t>(m.from_gpu)] = m.to_gpu;
  }
  std::vector<double> out;
  for (const int g : gpu_of) {
    const auto i = static_cast<std::size_t>(g);
    out.push_back(i < per_gpu.size() ? per_gpu[i].seconds() : 0.0);
  }
  return out;
}

}  // namespace

std::optional<GpuBusy> gpu_busy(const config::Experiment& e, const workload::TaskGraph& graph,
                                const sim::RunResult& result,
                                const std::vector<sim::SpareMove>& spares) {
  double run_s = 0;
  for (const Time t : result.iteration_times)
    run_s += t.seconds();
  if (!e.model || !(run_s > 0)) return std::nullopt;
  const config::TrainingJob& w = *e.model;
  const workload::ModelSpec model = workload::load_model(w.model);
  // The job's parallelism as the workload builder resolved it: DP from the GPUs it runs on.
  const int ranks = graph.job_gpus();
  const workload::ParallelismSpec p = workload::resolve_parallelism(
      config::job_parallelism(w), std::nullopt, ranks, model, e.cluster.gpus_per_server);
  const workload::RankLayout layout(p, model, e.cluster.gpus_per_server, ranks);
  workload::TrainingSpec spec;
  spec.model = model;
  spec.parallelism = p;
  spec.micro_batch = w.micro_batch;
  spec.global_batch = w.global_batch;
  spec.seq = w.seq;

  GpuBusy b;
  b.stages = p.pp;
  spec.schedule = workload::parse_schedule(w.schedule);
  b.micro_batches = spec.micro_batches();
  b.bubble_fraction = workload::bubble_fraction(spec.schedule, b.stages, b.micro_batches, p.vp);
  const std::vector<double> compute_s = compute_s_per_rank(graph, result, ranks, spares);
  std::vector<double> stage_sum(static_cast<std::size_t>(p.pp), 0.0);
  std::vector<int> stage_gpus(static_cast<std::size_t>(p.pp), 0);
  double sum = 0;
  for (int r = 0; r < ranks; ++r) {
    const double busy = compute_s[static_cast<std::size_t>(r)] / run_s;
    sum += busy;
    const auto stage = static_cast<std::size_t>(layout.coord(r).pp);
    stage_sum[stage] += busy;
    ++stage_gpus[stage];
  }
  b.busy_fraction = sum / std::max(1, ranks);
  for (int s = 0; s < p.pp; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const StageBusy stage{s, stage_sum[i] / std::max(1, stage_gpus[i])};
    if (s == 0 || stage.busy_fraction > b.busiest.busy_fraction) b.busiest = stage;
    if (s == 0 || stage.busy_fraction < b.least_busy.busy_fraction) b.least_busy = stage;
  }
  const double iteration_s = run_s / static_cast<double>(result.iteration_times.size());
  b.comm_wait_fraction = result.exposed_comm.seconds() / iteration_s;
  const double idle = 1 - b.busy_fraction;
  b.idle_comm_share = idle > 0 ? std::min(1.0, b.comm_wait_fraction / idle) : 0;
  b.other_wait_fraction = std::max(0.0, idle - b.bubble_fraction - b.comm_wait_fraction);
  return b;
}

std::optional<std::string> idle_warning(const GpuBusy& b) {
  if (b.busy_fraction >= kBusyWarningBelow) return std::nullopt;
  const auto percent = [](double x) { return fmt::format("{:.0f}%", 100 * x); };
  // Below half a percent a reason would read "0%", which explains nothing.
  constexpr double kShown = 0.005;
  std::vector<std::string> why;
  if (b.stages > 1 && b.bubble_fraction >= kShown) {
    why.push_back(fmt::format(
        "pipeline bubbles ({} micro-batch{} for {} stages: {} of the "
        "iteration)",
        b.micro_batches, b.micro_batches == 1 ? "" : "es", b.stages, percent(b.bubble_fraction)));
  }
  const std::string of = why.empty() ? " of the iteration" : "";
  if (b.comm_wait_fraction >= kShown) {
    why.push_back(
        fmt::format("waiting for communication ({}{})", percent(b.comm_wait_fraction), of));
  }
  if (b.other_wait_fraction >= kShown) {
    why.push_back(fmt::format("waiting for other GPUs ({}{})", percent(b.other_wait_fraction),
                              why.empty() ? of : ""));
  }
  std::string text = fmt::format("GPUs compute {} of the iteration", percent(b.busy_fraction));
  for (std::size_t i = 0; i < why.size(); ++i)
    text += (i == 0 ? ": " : i + 1 == why.size() ? " and " : ", ") + why[i];
  return text;
}

}  // namespace mfabric::study
