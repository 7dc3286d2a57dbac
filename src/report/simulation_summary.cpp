#include "report/simulation_summary.h"

#include <fmt/format.h>

namespace mfabric::report {

std::string traffic_key(std::size_t k) {
  return workload::to_string(sim::kTrafficClasses[k]);
}

std::string workload_label(const config::Experiment& e) {
  if (e.model) return fmt::format("{} ({})", e.model->model, config::job_text(*e.model));
  if (e.micro) {
    return fmt::format("{} of {} ({} group)", workload::to_string(e.micro->collective),
                       to_string(e.micro->bytes), e.micro->group);
  }
  if (!e.connection_matrix.empty()) return "connection matrix " + e.connection_matrix;
  return "chakra " + e.chakra;
}

double events_per_second(const sim::RunResult& res) {
  return res.wall_time_s > 0 ? static_cast<double>(res.events) / res.wall_time_s : 0.0;
}

std::optional<study::GpuThroughput> gpu_throughput_of(const SimulationReport& r) {
  return study::gpu_throughput(r.experiment, r.graph.job_gpus(),
                               r.result.mean_iteration_time().seconds());
}

std::optional<study::GpuBusy> gpu_busy_of(const SimulationReport& r) {
  static const std::vector<sim::SpareMove> none;
  return study::gpu_busy(r.experiment, r.graph, r.result, r.spares ? *r.spares : none);
}

}  // namespace mfabric::report
