#include "report/trace_filter.h"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::report {
namespace {

constexpr const char* kListExpectation =
    "expected GPU numbers and ranges separated by commas, such as 0-7,64";

// A GPU number: decimal digits, nothing else.
std::int32_t gpu_number(std::string_view text, std::string_view list) {
  std::int32_t n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || ptr != end || n < 0) {
    throw Error("", "", fmt::format("{}, got {}", kListExpectation, quote_input(list)));
  }
  return n;
}

}  // namespace

std::vector<GpuRange> parse_gpu_list(std::string_view text) {
  std::vector<GpuRange> gpus;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string_view item = text.substr(from, comma - from);
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      const std::int32_t g = gpu_number(item, text);
      gpus.push_back({g, g});
    } else {
      const std::int32_t first = gpu_number(item.substr(0, dash), text);
      const std::int32_t last = gpu_number(item.substr(dash + 1), text);
      if (last < first) {
        throw Error(
            "", "",
            fmt::format("the range {}-{} runs backwards; write {}-{}", first, last, last, first));
      }
      gpus.push_back({first, last});
    }
    from = comma + 1;
  }
  return gpus;
}

void check_traced_gpus(const std::vector<GpuRange>& gpus, const config::Experiment& e) {
  const std::int64_t cluster =
      static_cast<std::int64_t>(e.cluster.servers) * e.cluster.gpus_per_server;
  for (const GpuRange& range : gpus) {
    const std::int32_t g = range.last;
    if (g >= cluster) {
      throw Error(
          "", "",
          fmt::format("GPU {} is not in the cluster, whose GPUs are 0 to {}", g, cluster - 1));
    }
  }
}

void check_traced_stage(int stage, const config::Experiment& e) {
  if (!e.model) {
    throw Error("", "",
                "only a training job (workload.model) has pipeline stages; this experiment's "
                "workload has none");
  }
  if (stage < 0 || stage >= e.model->pp) {
    throw Error("", "",
                fmt::format("the job has {} pipeline stage{} (workload.pp), numbered 0 to {}; got "
                            "{}",
                            e.model->pp, e.model->pp == 1 ? "" : "s", e.model->pp - 1, stage));
  }
}

std::vector<bool> traced_gpus(const sim::Simulation& run, const TraceFilter& filter) {
  return traced_gpus(run.experiment, run.graph, run.spares, filter);
}

std::vector<bool> traced_gpus(const config::Experiment& e, const workload::TaskGraph& graph,
                              const std::vector<sim::SpareMove>& spares,
                              const TraceFilter& filter) {
  const auto gpus = static_cast<std::size_t>(graph.gpus());
  std::vector<bool> traced(gpus, filter.gpus.empty());
  for (const GpuRange& range : filter.gpus) {
    for (std::int64_t g = range.first; g <= range.last && static_cast<std::size_t>(g) < gpus; ++g)
      traced[static_cast<std::size_t>(g)] = true;
  }
  if (filter.stage && e.model) {
    // Rank r is in stage r / (job GPUs / pp); a GPU holds its own rank unless a spare took it.
    std::vector<std::int64_t> rank(gpus);
    for (std::size_t g = 0; g < gpus; ++g)
      rank[g] = static_cast<std::int64_t>(g);
    for (const sim::SpareMove& m : spares) {
      if (static_cast<std::size_t>(m.from_gpu) < gpus)
        rank[static_cast<std::size_t>(m.from_gpu)] = -1;
    }
    for (const sim::SpareMove& m : spares) {
      if (static_cast<std::size_t>(m.to_gpu) < gpus)
        rank[static_cast<std::size_t>(m.to_gpu)] = m.from_gpu;
    }
    const std::int64_t per_stage = std::max(1, graph.job_gpus() / std::max(1, e.model->pp));
    for (std::size_t g = 0; g < gpus; ++g) {
      const bool in_stage =
          rank[g] >= 0 && rank[g] < graph.job_gpus() && rank[g] / per_stage == *filter.stage;
      traced[g] = traced[g] && in_stage;
    }
  }
  return traced;
}

}  // namespace mfabric::report
