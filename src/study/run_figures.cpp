// The figures of one finished run, from its simulation, shared by compare and sweep: what it
// built, its time, tokens/s (and per GPU, with model TFLOP/s and MFU), network cost, where the time
// went, mFabric's reconfigurations, and region 0's timeline for compare's figure.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "fabric/cost.h"
#include "sim/steady_state.h"
#include "study/compare.h"
#include "study/gpu_throughput.h"

namespace mfabric::study {
namespace {

bool is_ep_all_to_all(const workload::Task& t) {
  return t.kind == workload::TaskKind::Collective &&
         t.collective == workload::CollectiveKind::AllToAll && t.traffic == workload::Traffic::EP;
}

}  // namespace

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
    if (s.graph.group(t.group()).front() / per_region != 0) continue;
    out.push_back({span.start.seconds(), span.end.seconds(), false});
  }
  std::sort(out.begin(), out.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
    return std::tie(a.start_s, a.end_s, a.reconfiguration) <
           std::tie(b.start_s, b.end_s, b.reconfiguration);
  });
  return out;
}

void fill_run_figures(CompareRun& run, const sim::Simulation& s, double tokens_per_iteration) {
  run.fabric_spec = s.topology.spec();
  run.shortcuts = sim::shortcuts(s);
  run.framework_warnings = s.framework_refusals;
  run.gpus = s.graph.job_gpus();
  run.iteration_time_s = s.result.mean_iteration_time().seconds();
  run.tokens_per_s = run.iteration_time_s > 0 ? tokens_per_iteration / run.iteration_time_s : 0;
  fill_gpu_throughput(run, s.experiment);
  if (s.routing) run.busiest_expert_over_mean = s.routing->skew.mean;
  const fabric::PriceBook prices = fabric::PriceBook::paper_defaults();
  run.cost_built = fabric::network_cost(s.topology, fabric::CostConvention::Built, prices);
  run.cost_paper = fabric::network_cost(s.topology, fabric::CostConvention::Paper, prices);
  // Per iteration and GPU, as RunResult::exposed_comm is: the compute durations are the graph's
  // own (a comparison injects no failures that would slow a GPU down).
  run.iterations = static_cast<int>(s.result.iteration_times.size());
  const double iterations = std::max(1, run.iterations);
  const double gpus = std::max(1, run.gpus);
  // Summed in seconds: over a thousand GPUs and many iterations the picoseconds would not fit.
  double compute_s = 0;
  for (const Time busy : sim::compute_time_per_gpu(s.graph, s.result))
    compute_s += busy.seconds();
  std::int64_t all_to_alls = 0;
  for (const workload::Task& t : s.graph.tasks()) {
    if (is_ep_all_to_all(t)) ++all_to_alls;
  }
  // An extrapolated run's skipped micro-batches have their all-to-alls too.
  if (s.result.extrapolation) {
    all_to_alls = std::llround(static_cast<double>(all_to_alls) * s.result.extrapolation->scale());
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

void fill_gpu_throughput(CompareRun& run, const config::Experiment& e) {
  const std::optional<GpuThroughput> t = gpu_throughput(e, run.gpus, run.iteration_time_s);
  run.tokens_per_s_per_gpu = t ? t->tokens_per_s_per_gpu : 0;
  run.model_tflops_per_gpu = t ? t->model_tflops_per_gpu : 0;
  run.mfu = t ? t->mfu : 0;
}

double tokens_per_iteration(const config::Experiment& e) {
  if (!e.model) return 0;
  // Under the paper's convention each EP rank is a data replica running the global batch's
  // micro-batches (docs/workload.md, "Batch"); under Megatron's the global batch is the job's.
  const double replicas = e.model->convention == "paper" ? e.model->ep : 1;
  return static_cast<double>(e.model->global_batch) * replicas * e.model->seq;
}

}  // namespace mfabric::study
