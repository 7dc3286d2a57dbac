// results.json of `mfabric simulate` (simulation_report.h, docs/cli.md): the run's summary as
// JSON, with a part per kind of fabric or backend that has more to say (packets, reconfiguration,
// failures, TopoOpt's planned topology).
#include <nlohmann/json.hpp>

#include <utility>

#include "core/provenance.h"
#include "report/simulation_report.h"
#include "report/simulation_summary.h"
#include "report/workload_report.h"
#include "study/compare.h"
#include "study/run_json.h"

namespace mfabric::report {
namespace {

// Bytes that left NICs over circuits and over electrical cables (each transfer counted once, on
// the channel leaving the sending NIC).
std::pair<double, double> circuit_and_eps_bytes(const SimulationReport& r) {
  const fabric::Topology& t = r.topology;
  double circuit = 0, eps = 0;
  const auto& channels = r.result.channels;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    const auto link = static_cast<fabric::LinkId>(c / 2);
    if (static_cast<std::size_t>(link) >= t.links().size()) {
      circuit += channels[c].bytes;
      continue;
    }
    const fabric::Link& k = t.link(link);
    const fabric::NodeId from = c % 2 == 0 ? k.a : k.b;
    const fabric::NodeId to = c % 2 == 0 ? k.b : k.a;
    if (k.kind == fabric::LinkKind::Cable && t.node(from).kind == fabric::NodeKind::Nic &&
        t.node(to).kind == fabric::NodeKind::Switch) {
      eps += channels[c].bytes;
    }
  }
  return {circuit, eps};
}

// The packet backend's settings and counters.
nlohmann::json packet_json(const SimulationReport& r) {
  const net::PacketStats& p = *r.result.packets;
  return {
      {"transport", std::string(r.experiment.packet.transport.name())},
      {"variant", r.experiment.packet.transport->congestion_control_variant()},
      {"mtu_bytes", r.experiment.packet.mtu.count()},
      {"pfc", r.experiment.packet.pfc_enabled()},
      {"packets_sent", p.packets_sent},
      {"packets_delivered", p.packets_delivered},
      {"acks", p.acks},
      {"drops", p.drops},
      {"ecn_marks", p.marks},
      {"retransmissions", p.retransmissions},
      {"timeouts", p.timeouts},
      {"pfc_pauses", p.pfc_pauses},
      {"pfc_headroom_drops", p.pfc_headroom_drops},
      {"max_packets_in_flight", p.max_packets_in_flight},
  };
}

// A reconfiguring fabric's control plane: its reconfigurations, holds and the bytes over circuits.
nlohmann::json reconfiguration_json(const SimulationReport& r) {
  const sim::ControlStats& c = *r.control;
  const auto [circuit, eps] = circuit_and_eps_bytes(r);
  return {
      {"planner", c.planner},
      {"policy", c.policy},
      {"count", c.reconfigurations},
      // Plans equal to the one in force (nothing switched), and circuits torn down in all.
      {"unchanged", c.unchanged},
      // fabric.switching, and under when-faster the plans not put up (the circuits up were
      // as fast, counting the delay).
      {"switching", c.switching},
      {"kept", c.kept},
      {"circuits_torn_down", c.circuits_torn_down},
      {"conflicts", c.conflicts},
      // Summed over regions: time their circuits were down.
      {"time_s", c.reconfiguration_time.seconds()},
      // EP all-to-alls that waited for circuits, and how long in all.
      {"held", c.held},
      {"held_time_s", c.held_time.seconds()},
      // Of those, the ones on the run's critical path and their waits (what the holds cost).
      {"critical_holds", r.result.critical_holds},
      {"critical_held_s", r.result.critical_held_time.seconds()},
      // Bytes that crossed circuits, and the electrical fabric's cables from NICs.
      {"circuit_bytes", circuit},
      {"eps_bytes", eps},
      // predict: plans made from a forecast and their mean relative demand error (0 if none).
      {"predictions", c.predictions},
      {"prediction_error", c.prediction_error},
  };
}

// The failed parts, the ranks moved to spares and, on mFabric, the ports and relays.
nlohmann::json failures_json(const SimulationReport& r) {
  nlohmann::json parts = nlohmann::json::array();
  for (const config::Failure& f : r.experiment.failures) {
    nlohmann::json part = {{"kind", config::to_string(f.kind)}, {"server", f.server}};
    if (f.kind != config::FailureKind::Server) part["index"] = f.index;
    part["at_s"] = f.at ? nlohmann::json(f.at->seconds()) : nlohmann::json(nullptr);
    parts.push_back(std::move(part));
  }
  nlohmann::json moved = nlohmann::json::array();
  if (r.spares != nullptr) {
    for (const sim::SpareMove& m : *r.spares)
      moved.push_back({{"failure", m.failure}, {"from_gpu", m.from_gpu}, {"to_gpu", m.to_gpu}});
  }
  nlohmann::json failures = {{"parts", std::move(parts)}, {"spares", std::move(moved)}};
  if (r.control != nullptr) {
    failures["failed_ports"] = r.control->failed_ports;
    failures["relays"] = r.control->relays;
  }
  return failures;
}

// How busy the GPUs' compute streams are, and why they idle (study/gpu_busy.h).
nlohmann::json gpu_busy_json(const study::GpuBusy& b) {
  return {
      {"busy_fraction", b.busy_fraction},
      {"busiest_stage", {{"stage", b.busiest.stage}, {"busy_fraction", b.busiest.busy_fraction}}},
      {"least_busy_stage",
       {{"stage", b.least_busy.stage}, {"busy_fraction", b.least_busy.busy_fraction}}},
      {"pipeline_stages", b.stages},
      {"micro_batches", b.micro_batches},
      {"bubble_fraction", b.bubble_fraction},
      {"comm_wait_fraction", b.comm_wait_fraction},
      {"idle_comm_share", b.idle_comm_share},
      {"other_wait_fraction", b.other_wait_fraction},
  };
}

// Tokens/s, what each GPU gets done and how busy it is: training jobs only (a micro-benchmark,
// trace or connection matrix has no tokens or model FLOPs, and gets no such keys).
void add_training_figures(const SimulationReport& r, nlohmann::json& j) {
  const double iteration_s = r.result.mean_iteration_time().seconds();
  const double tokens = study::tokens_per_iteration(r.experiment);
  if (tokens > 0 && iteration_s > 0) j["tokens_per_s"] = tokens / iteration_s;
  if (const std::optional<study::GpuThroughput> t = gpu_throughput_of(r)) {
    j["tokens_per_s_per_gpu"] = t->tokens_per_s_per_gpu;
    j["model_tflops_per_gpu"] = t->model_tflops_per_gpu;
    j["mfu"] = t->mfu;
  }
  if (const std::optional<study::GpuBusy> b = gpu_busy_of(r)) j["gpu_busy"] = gpu_busy_json(*b);
}

// TopoOpt's planned topology (with `timing`, the planning's wall time).
nlohmann::json topology_json(const SimulationReport& r, bool timing) {
  const sim::TopoOptStats& p = *r.topoopt;
  nlohmann::json topology = {
      {"kind", "topoopt"},
      {"degree", p.degree},
      {"ring_degree", p.ring_degree},
      {"links", p.links},
      {"ring_links", p.ring_links},
      {"matching_links", p.matching_links},
      {"connectivity_links", p.connectivity_links},
      {"leftover_links", p.leftover_links},
      {"ring_groups", p.ring_groups},
      {"rings", p.rings},
      {"matching_rounds", p.matching_rounds},
      {"connected", p.connected},
      {"unused_nics", p.unused_nics},
      // Bytes over circuits, a forwarded byte counted once per circuit it crosses.
      {"circuit_bytes", circuit_and_eps_bytes(r).first},
  };
  if (timing) topology["planning_wall_time_s"] = p.planning_wall_s;
  return topology;
}

}  // namespace

nlohmann::json results_json(const SimulationReport& r, bool timing) {
  const sim::RunResult& res = r.result;
  nlohmann::json comm = nlohmann::json::object();
  nlohmann::json profiled = nlohmann::json::object();
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    comm[traffic_key(k)] = res.comm_time[k].seconds();
    profiled[traffic_key(k)] = res.comm_time_profiled[k].seconds();
  }
  nlohmann::json iterations = nlohmann::json::array();
  for (Time t : res.iteration_times)
    iterations.push_back(t.seconds());
  nlohmann::json j = {
      {"schema", kResultsSchema},
      {"provenance", provenance_json()},
      {"experiment", r.experiment.source},
      {"seed", r.experiment.seed},
      {"backend", r.experiment.backend},
      {"completion_batching", r.experiment.completion_batching},
      {"routing", r.experiment.routing},
      {"spray_paths", r.experiment.spray_paths},
      {"fabric", r.topology.spec()},
      {"workload", workload_label(r.experiment)},
      {"gpus", r.graph.job_gpus()},
      {"tasks", r.graph.size()},
      {"iterations", res.iteration_times.size()},
      {"iteration_time_s", res.mean_iteration_time().seconds()},
      {"iteration_times_s", iterations},
      {"exposed_comm_s", res.exposed_comm.seconds()},
      {"comm_time_s", comm},
      {"comm_time_profiled_s", profiled},
      {"calibration", r.experiment.calibration.name},
      {"events", res.events},
      // Every transfer and byte the network started, and what it delivered: equal in a run
      // that completes, across circuit reconfigurations too.
      {"transfers",
       {{"started", res.transfers.started},
        {"delivered", res.transfers.delivered},
        {"bytes_sent", res.transfers.bytes_sent},
        {"bytes_delivered", res.transfers.bytes_delivered}}},
  };
  // An extrapolated run (docs/shortcuts.md): the network's counters are the simulated
  // micro-batches'; what the whole job sends is estimated beside them.
  if (res.extrapolation) j["transfers"]["job_bytes_sent"] = res.extrapolation->bytes_sent;
  add_training_figures(r, j);
  if (res.packets) j["packet"] = packet_json(r);
  if (r.control != nullptr) j["reconfiguration"] = reconfiguration_json(r);
  if (!r.experiment.failures.empty()) j["failures"] = failures_json(r);
  if (r.topoopt != nullptr) j["topology"] = topology_json(r, timing);
  if (r.routing != nullptr) j["expert_routing"] = expert_routing_json(*r.routing);
  if (!r.shortcuts.empty()) j["shortcuts"] = study::shortcuts_json(r.shortcuts);
  if (r.framework_refusals != nullptr && !r.framework_refusals->empty()) {
    j["framework_warnings"] = *r.framework_refusals;
  }
  if (timing) {
    j["wall_time_s"] = res.wall_time_s;
    j["events_per_s"] = events_per_second(res);
  }
  return j;
}

}  // namespace mfabric::report
