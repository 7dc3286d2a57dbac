#include "config/workload_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/output_text.h"
#include "workload/chakra.h"
#include "workload/compute.h"
#include "workload/connection_matrix.h"
#include "workload/gpu_memory.h"

namespace mfabric::config {

namespace {

// A transfer in flight: the lowering's Transfer, the backend's flow state and route.
constexpr double kBytesPerTransfer = 256;

workload::TaskGraph build_micro(const Experiment& e, const MicroBenchmark& m) {
  const int per_server = e.cluster.gpus_per_server;
  const int gpus = e.cluster.servers * per_server;
  workload::TaskGraph g(gpus);
  std::vector<std::vector<std::int32_t>> groups;
  if (m.group == "all") {
    groups.emplace_back();
    for (int i = 0; i < gpus; ++i)
      groups.back().push_back(i);
  } else if (m.group == "per-server") {
    for (int s = 0; s < e.cluster.servers; ++s) {
      groups.emplace_back();
      for (int k = 0; k < per_server; ++k)
        groups.back().push_back(s * per_server + k);
    }
  } else {
    for (int k = 0; k < per_server; ++k) {
      groups.emplace_back();
      for (int s = 0; s < e.cluster.servers; ++s)
        groups.back().push_back(s * per_server + k);
    }
  }
  // The lowering holds one step's transfers per collective at a time: n x (n - 1) for a direct
  // all-to-all, a few per member for rings. Refuse what cannot fit before running it.
  const double n = static_cast<double>(groups.front().size());
  const double transfers_per_step =
      static_cast<double>(groups.size()) *
      (m.collective == workload::CollectiveKind::AllToAll ? n * (n - 1) : 4.0 * n);
  const double bytes = transfers_per_step * kBytesPerTransfer;
  if (bytes > static_cast<double>(e.max_memory.count())) {
    throw Error(e.source, "simulation.max_memory",
                fmt::format("the microbenchmark moves {:.3g} transfers at once, an estimated {} "
                            "of memory, more than the limit of {}; raise simulation.max_memory "
                            "(or --max-memory) to run it anyway, or use fewer servers",
                            transfers_per_step,
                            to_string(Bytes(static_cast<std::int64_t>(std::min(bytes, 9e18)))),
                            to_string(e.max_memory)));
  }
  // Iterations run the collectives back to back: each waits for all of the previous one.
  std::vector<workload::TaskId> previous;
  for (int it = 0; it < e.iterations; ++it) {
    std::vector<workload::TaskId> current;
    for (const auto& members : groups) {
      workload::Task t;
      t.kind = workload::TaskKind::Collective;
      t.collective = m.collective;
      // Not a parallelism of a training job: counted under "other" (comm time, exposed).
      t.traffic = workload::Traffic::Other;
      t.set_group(g.add_group(members));
      t.set_bytes(m.bytes);
      t.iteration = static_cast<std::int16_t>(it);
      current.push_back(g.add(t, previous));
    }
    previous = std::move(current);
  }
  return g;
}

}  // namespace

std::string RoutingSummary::text() const {
  const std::string source = trace.empty() ? std::string(balance == workload::RoutingBalance::Forced
                                                             ? "synthetic, forced balance"
                                                             : "synthetic")
                                           : "trace " + printable(trace);
  if (skew.records == 0) return source + ", no tokens routed";
  return fmt::format("{}, busiest expert {:.2f}x the mean ({:.2f}-{:.2f})", source, skew.mean,
                     skew.min, skew.max);
}

workload::TrainingSpec training_spec(const Experiment& e) {
  const int gpus = e.cluster.servers * e.cluster.gpus_per_server;
  const TrainingJob& w = *e.model;
  workload::TrainingSpec spec;
  spec.model =
      with_context(e.source, "workload.model", [&] { return workload::load_model(w.model); });
  spec.gpu = workload::find_gpu(e.gpu);
  workload::calibrate(spec, e.calibration);
  // With dp given, the job may use fewer GPUs than the cluster has.
  spec.parallelism = with_context(e.source, "workload", [&] {
    try {
      return workload::resolve_parallelism(job_parallelism(w), w.dp, w.dp ? 0 : gpus, spec.model,
                                           e.cluster.gpus_per_server);
    } catch (const Error& err) {
      if (err.field() != "gpus") throw;
      // The job's GPUs are the cluster's here.
      throw Error("", "",
                  fmt::format("the cluster's {}; give dp to use fewer GPUs", err.message()));
    }
  });
  if (spec.parallelism.gpus() > gpus) {
    throw Error(
        e.source, "workload.dp",
        fmt::format("{} is {} GPUs, more than the cluster's {}",
                    workload::parallelism_text(spec.parallelism), spec.parallelism.gpus(), gpus));
  }
  spec.gpus_per_server = e.cluster.gpus_per_server;
  spec.micro_batch = w.micro_batch;
  spec.global_batch = w.global_batch;
  spec.seq = w.seq;
  with_context(e.source, "workload", [&] {
    apply_job_settings(w, spec);
    return 0;
  });
  spec.iterations = e.iterations;
  with_context(e.source, "workload", [&] { return spec.micro_batches(); });
  // The paper's convention reproduces the paper's simulator, which has no memory model: its jobs
  // (micro-batch 8 of 4,096 tokens, no recomputation) run as published, over HBM or not.
  if (!e.ignore_gpu_memory && !spec.parallelism.paper()) {
    with_context(e.source, "", [&] {
      workload::check_gpu_memory(workload::gpu_memory(spec, workload::memory_options(spec)), spec);
      return 0;
    });
  }
  return spec;
}

workload::TaskGraph build_workload(const Experiment& e, std::optional<RoutingSummary>* routing,
                                   workload::TaskSpans spans) {
  const int gpus = e.cluster.servers * e.cluster.gpus_per_server;
  if (e.micro) return build_micro(e, *e.micro);
  if (!e.connection_matrix.empty()) {
    const workload::ConnectionMatrix cm =
        workload::read_connection_matrix(e.connection_matrix, e.max_memory);
    if (cm.nodes > gpus) {
      throw Error(e.connection_matrix, "Nodes",
                  fmt::format("{} nodes, more than the cluster's {} GPUs ({} servers x {}); "
                              "node i runs on GPU i",
                              cm.nodes, gpus, e.cluster.servers, e.cluster.gpus_per_server));
    }
    return workload::connection_matrix_graph(cm, e.connection_matrix);
  }
  if (!e.chakra.empty()) {
    workload::ChakraOptions options;
    options.gpu = workload::find_gpu(e.gpu);
    options.efficiency = e.calibration.generic;
    options.control_deps = e.chakra_control_deps;
    options.comm_groups = e.chakra_comm_groups;
    options.limits.max_memory = e.max_memory.count();
    return workload::read_chakra(e.chakra, options);
  }
  workload::TrainingSpec spec = training_spec(e);
  const TrainingJob& w = *e.model;
  with_context(e.source, "", [&] {
    workload::check_job_size(spec, e.max_memory, "simulation.max_memory",
                             "simulation.max_memory (or --max-memory)", spans);
    return 0;
  });
  std::optional<workload::ComputeReplay> replay;
  if (!e.calibration.replay.empty()) {
    replay = workload::ComputeReplay::load(e.calibration.replay);
    spec.replay = &*replay;
  }
  const workload::RoutingTrace trace =
      w.routing_trace.empty()
          ? workload::synthetic_trace_for(spec, w.synthetic, e.seed, w.routing_of_micro_batches)
          : workload::read_routing_trace(w.routing_trace);
  if (routing) {
    *routing =
        RoutingSummary{w.routing_trace, w.synthetic.balance, workload::expert_load_skew(trace)};
  }
  return with_context(e.source, "workload",
                      [&] { return workload::build_training_graph(spec, trace); });
}

}  // namespace mfabric::config
