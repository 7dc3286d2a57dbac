// Which GPUs' tracks trace.json holds (simulate --trace-gpus, --trace-stage; docs/cli.md): a
// 1,024-GPU run's trace is about 90 MB, and one usually wants a server, a pipeline stage or a
// few GPUs of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "config/experiment.h"
#include "sim/simulation.h"

namespace mfabric::report {

// GPUs first to last, inclusive.
struct GpuRange {
  std::int32_t first = 0;
  std::int32_t last = 0;
};

struct TraceFilter {
  std::vector<GpuRange> gpus;  // empty: every GPU
  std::optional<int> stage;    // a pipeline stage of the training job
};

// "0-7,64": GPU numbers and inclusive ranges, separated by commas, in any order (overlaps are
// fine). mfabric::Error (no field: the caller names its option) on anything else.
std::vector<GpuRange> parse_gpu_list(std::string_view text);

// Before the run, mfabric::Error (no field) when the filter cannot select anything meaningful:
// a GPU beyond the cluster's GPUs; a stage without a training job, or not below its pipeline
// stages (workload.pp).
void check_traced_gpus(const std::vector<GpuRange>& gpus, const config::Experiment& e);
void check_traced_stage(int stage, const config::Experiment& e);

// Per GPU of the run's graph: whether its tracks are in the trace (every condition of the
// filter holds). A GPU's stage is its rank's: ranks are laid out with the pipeline stage
// outermost (workload/parallelism.h); a spare that took a failed GPU's rank has that rank's.
std::vector<bool> traced_gpus(const sim::Simulation& run, const TraceFilter& filter);
std::vector<bool> traced_gpus(const config::Experiment& e, const workload::TaskGraph& graph,
                              const std::vector<sim::SpareMove>& spares, const TraceFilter& filter);

}  // namespace mfabric::report
