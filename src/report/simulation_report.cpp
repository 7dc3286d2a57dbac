#include "report/simulation_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/json_text.h"
#include "core/output_files.h"
#include "core/output_text.h"
#include "core/provenance.h"
#include "report/format.h"
#include "report/simulation_html.h"
#include "report/table.h"
#include "report/utilisation.h"
#include "study/compare.h"

namespace mfabric::report {
namespace {

using workload::Task;
using workload::TaskKind;

// JSON key of a traffic class: "tp", "ep", ... (workload::to_string), so a class the engine
// adds appears without a change here.
std::string traffic_key(std::size_t k) {
  return workload::to_string(sim::kTrafficClasses[k]);
}

// Table label: "TP" for the two-letter parallelism classes, "Other" for a word.
std::string traffic_label(std::size_t k) {
  std::string name = traffic_key(k);
  if (name.size() <= 2) {
    for (char& c : name)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  } else if (!name.empty()) {
    name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  }
  return name;
}

std::string workload_label(const sim::Experiment& e) {
  if (e.model) {
    const auto& w = *e.model;
    return fmt::format("{} (TP {}, PP {}, EP {})", w.model, w.tp, w.pp, w.ep);
  }
  if (e.micro) {
    return fmt::format("{} of {} ({} group)", workload::to_string(e.micro->collective),
                       to_string(e.micro->bytes), e.micro->group);
  }
  if (!e.connection_matrix.empty()) return "connection matrix " + e.connection_matrix;
  return "chakra " + e.chakra;
}

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

double events_per_second(const sim::RunResult& res) {
  return res.wall_time_s > 0 ? static_cast<double>(res.events) / res.wall_time_s : 0.0;
}

// Trace timestamps: microseconds rounded to the nanosecond (the precision Perfetto shows).
double trace_microseconds(Time t) {
  const std::int64_t ps = t.ps();
  const std::int64_t ns = ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000);
  return static_cast<double>(ns) / 1000.0;
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
  if (res.packets) {
    const net::PacketStats& p = *res.packets;
    j["packet"] = {
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
  if (r.control != nullptr) {
    const sim::ControlStats& c = *r.control;
    const auto [circuit, eps] = circuit_and_eps_bytes(r);
    j["reconfiguration"] = {
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
  if (!r.experiment.failures.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const sim::Failure& f : r.experiment.failures) {
      nlohmann::json part = {{"kind", sim::to_string(f.kind)}, {"server", f.server}};
      if (f.kind != sim::FailureKind::Server) part["index"] = f.index;
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
    j["failures"] = std::move(failures);
  }
  if (r.topoopt != nullptr) {
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
    j["topology"] = std::move(topology);
  }
  if (timing) {
    j["wall_time_s"] = res.wall_time_s;
    j["events_per_s"] = events_per_second(res);
  }
  return j;
}

std::optional<double> paper_network_cost(const fabric::Topology& topology) {
  try {
    return fabric::network_cost(topology, fabric::CostConvention::Paper,
                                fabric::PriceBook::paper_defaults())
        .total();
  } catch (const Error&) {
    return std::nullopt;  // a link speed without a price (docs/cost-model.md)
  }
}

std::string results_text(const SimulationReport& r) {
  const sim::RunResult& res = r.result;
  // Names come from the user (a file name, a model name): printable() keeps a byte 0xff or a
  // newline in them from breaking the lines.
  std::string out =
      fmt::format("simulate {}: {} on {} ({} GPUs, {} tasks)\n\n", printable(r.experiment.source),
                  printable(workload_label(r.experiment)), printable(r.topology.spec()),
                  r.graph.gpus(), with_commas(static_cast<std::int64_t>(r.graph.size())));
  Table t({"metric", "value"});
  // Every time in the value column in one unit, the one that fits the largest (docs/cli.md,
  // "Units in tables"): 0.229s under 31.102s, not 229.387ms.
  double largest_s = std::max(res.mean_iteration_time().seconds(), res.exposed_comm.seconds());
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    largest_s =
        std::max({largest_s, res.comm_time[k].seconds(), res.comm_time_profiled[k].seconds()});
  }
  if (r.control != nullptr) largest_s = std::max(largest_s, r.control->held_time.seconds());
  const auto time_text = [&](Time time) { return time_in_unit_of(time.seconds(), largest_s); };
  t.add_row({"iteration time", time_text(res.mean_iteration_time())});
  const double iteration_s = res.mean_iteration_time().seconds();
  const double tokens = study::tokens_per_iteration(r.experiment);
  if (tokens > 0 && iteration_s > 0) t.add_row({"tokens/s", whole_number(tokens / iteration_s)});
  if (const std::optional<double> cost = paper_network_cost(r.topology)) {
    t.add_row({"network cost (paper formulas)", dollars(*cost)});
  }
  t.add_row({"exposed communication (per GPU)", time_text(res.exposed_comm)});
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    t.add_row(
        {fmt::format("{} communication (per GPU)", traffic_label(k)), time_text(res.comm_time[k])});
    // The all-to-alls wait for the busiest expert GPU: a profiler counts that wait as time in
    // the all-to-all (the paper's measured shares are of this kind).
    if (sim::kTrafficClasses[k] == workload::Traffic::EP && res.comm_time[k] > Time::zero()) {
      t.add_row({"EP as profiled, with waits (per GPU)", time_text(res.comm_time_profiled[k])});
    }
  }
  if (r.control != nullptr) {
    const sim::ControlStats& c = *r.control;
    t.add_row({"reconfigurations",
               fmt::format("{} ({} conflicts, {} planner, {} policy)",
                           with_commas(c.reconfigurations), c.conflicts, c.planner, c.policy)});
    if (c.switching != "always") {
      t.add_row({"plans kept (not worth a switch)", with_commas(c.kept)});
    }
    // Every region's all-to-alls wait at the same time: the sum over regions can exceed the
    // iteration; the critical path's share is what the iteration pays.
    const std::size_t regions = r.topology.regions().size();
    t.add_row({fmt::format("all-to-alls held for circuits (summed over {} region{})", regions,
                           regions == 1 ? "" : "s"),
               fmt::format("{}, {}", with_commas(c.held), time_text(c.held_time))});
    t.add_row({"  of them on the critical path",
               fmt::format("{}, {}", with_commas(r.result.critical_holds),
                           time_text(r.result.critical_held_time))});
    if (c.predictions > 0) {
      t.add_row(
          {"predicted plans", fmt::format("{}, mean demand error {:.1f}%",
                                          with_commas(c.predictions), 100 * c.prediction_error)});
    }
  }
  if (!r.experiment.failures.empty()) {
    std::string what = fmt::format("{} part{}", r.experiment.failures.size(),
                                   r.experiment.failures.size() == 1 ? "" : "s");
    if (r.spares != nullptr && !r.spares->empty()) {
      what +=
          fmt::format(", {} rank{} on spares", r.spares->size(), r.spares->size() == 1 ? "" : "s");
    }
    if (r.control != nullptr) {
      what += fmt::format(", {} OCS port{} out, {} relay circuit{}", r.control->failed_ports,
                          r.control->failed_ports == 1 ? "" : "s", r.control->relays,
                          r.control->relays == 1 ? "" : "s");
    }
    t.add_row({"failures", what});
  }
  if (r.topoopt != nullptr) {
    const sim::TopoOptStats& p = *r.topoopt;
    t.add_row(
        {"planned topology", fmt::format("{} link{} ({} ring, {} matching, {} other), {}",
                                         with_commas(p.links), p.links == 1 ? "" : "s",
                                         with_commas(p.ring_links), with_commas(p.matching_links),
                                         with_commas(p.connectivity_links + p.leftover_links),
                                         p.connected ? "connected" : "not connected")});
  }
  if (res.packets) {
    const net::PacketStats& p = *res.packets;
    t.add_row({"packets (" + std::string(r.experiment.packet.transport.name()) + ")",
               fmt::format("{} sent, {} dropped, {} sent again, {} timeouts",
                           with_commas(p.packets_sent), with_commas(p.drops),
                           with_commas(p.retransmissions), with_commas(p.timeouts))});
    t.add_row({"ECN marks, PFC pauses",
               fmt::format("{}, {}", with_commas(p.marks), with_commas(p.pfc_pauses))});
  }
  t.add_row({"events", with_commas(res.events)});
  // What the run itself took is on its own line: it changes from run to run, the table does not.
  const std::string timing =
      fmt::format("\nsimulated in {:.2f}s wall time ({} events per second)\n", res.wall_time_s,
                  whole_number(events_per_second(res)));
  return out + t.render() + timing;
}

void write_links_csv(const SimulationReport& r, std::ostream& out) {
  out << provenance_csv_comment();
  // The packet backend adds its queues: packets sent, drops, ECN marks, the most bytes queued,
  // the mean bytes queued over the run, and PFC pause time.
  const bool packet = !r.result.ports.empty();
  out << "link,direction,from,to,kind,rate_gbps,bytes,busy_s,utilisation"
      << (packet ? ",packets,drops,ecn_marks,max_queue_bytes,mean_queue_bytes,pause_s" : "")
      << "\n";
  const double span = r.result.makespan.seconds();
  const auto& links = r.topology.links();
  for (std::size_t l = 0; l < links.size(); ++l) {
    const fabric::Link& link = links[l];
    for (int dir = 0; dir < 2; ++dir) {
      const std::size_t c = 2 * l + static_cast<std::size_t>(dir);
      const net::ChannelStats s =
          c < r.result.channels.size() ? r.result.channels[c] : net::ChannelStats{};
      if (link.kind != fabric::LinkKind::Cable && s.bytes == 0) continue;
      const fabric::NodeId from = dir == 0 ? link.a : link.b;
      const fabric::NodeId to = dir == 0 ? link.b : link.a;
      const double capacity = link.rate.bps() / 8.0 * span;
      out << fmt::format("{},{},{},{},{},{},{:.0f},{:.9f},{:.6f}", l, dir == 0 ? "ab" : "ba",
                         csv_field(r.topology.name(from)), csv_field(r.topology.name(to)),
                         csv_field(fabric::to_string(link.kind)), link.rate.gbps(), s.bytes,
                         s.busy.seconds(), capacity > 0 ? s.bytes / capacity : 0.0);
      if (packet) {
        const net::PortStats p = c < r.result.ports.size() ? r.result.ports[c] : net::PortStats{};
        const double mean =
            span > 0 ? p.queue_byte_ps / static_cast<double>(r.result.makespan.ps()) : 0.0;
        out << fmt::format(",{},{},{},{},{:.0f},{:.9f}", p.packets, p.drops, p.marks, p.max_queue,
                           mean, static_cast<double>(p.pause_ps) * 1e-12);
      }
      out << "\n";
    }
  }
}

std::string links_csv(const SimulationReport& r) {
  std::ostringstream out;
  write_links_csv(r, out);
  return out.str();
}

void write_collectives_csv(const SimulationReport& r, std::ostream& out) {
  out << provenance_csv_comment();
  out << "task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,"
         "end_s,duration_s,source_id\n";
  for (const sim::TaskSpan& span : r.result.spans) {
    const Task& t = r.graph.task(span.task);
    if (t.kind == TaskKind::Compute) continue;
    const std::size_t members = t.kind == TaskKind::P2P ? 2 : r.graph.group(t.group).size();
    const std::int64_t bytes = t.kind == TaskKind::Collective && t.matrix >= 0
                                   ? r.graph.matrix(t.matrix).off_diagonal_sum()
                                   : t.bytes.count();
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{:.9f},{:.9f},{:.9f},{}\n", span.task, t.iteration, t.layer,
        t.micro_batch, csv_field(workload::to_string(t.phase)),
        csv_field(workload::to_string(t.op)), csv_field(workload::to_string(t.traffic)),
        csv_field(t.kind == TaskKind::P2P ? "p2p" : workload::to_string(t.collective)), members,
        bytes, span.start.seconds(), span.end.seconds(), (span.end - span.start).seconds(),
        r.graph.source_id(span.task) >= 0 ? std::to_string(r.graph.source_id(span.task)) : "");
  }
}

std::string collectives_csv(const SimulationReport& r) {
  std::ostringstream out;
  write_collectives_csv(r, out);
  return out.str();
}

void write_trace_json(const SimulationReport& r, std::ostream& out, const TraceFilter& filter) {
  static const std::vector<sim::SpareMove> kNoSpares;
  const std::vector<bool> traced =
      traced_gpus(r.experiment, r.graph, r.spares != nullptr ? *r.spares : kNoSpares, filter);
  const auto is_traced = [&](std::int32_t g) {
    return g >= 0 && static_cast<std::size_t>(g) < traced.size() &&
           traced[static_cast<std::size_t>(g)];
  };
  JsonArrayStream events(out, {{"displayTimeUnit", "ms"}}, "traceEvents", -1);
  // Metadata: one process per GPU with two named tracks.
  nlohmann::json process = {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {}}};
  nlohmann::json thread = {
      {"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}, {"args", {}}};
  for (int g = 0; g < r.graph.gpus(); ++g) {
    if (!is_traced(g)) continue;
    process["pid"] = g;
    process["args"]["name"] = fmt::format("GPU {}", g);
    events.add(process);
    thread["pid"] = g;
    thread["tid"] = 0;
    thread["args"]["name"] = "compute";
    events.add(thread);
    thread["tid"] = 1;
    thread["args"]["name"] = "communication";
    events.add(thread);
  }
  // Fabrics that reconfigure: one more process, "OCS regions", with a track per region that
  // holds a traced GPU's server.
  const int ocs_pid = r.graph.gpus();
  const int per_server = r.topology.cluster().gpus_per_server;
  std::vector<bool> region_traced;
  for (const fabric::Region& region : r.topology.regions()) {
    bool any = false;
    for (int g = region.first_server * per_server;
         g < (region.first_server + region.servers) * per_server && !any; ++g)
      any = is_traced(g);
    if (static_cast<std::size_t>(region.id) >= region_traced.size())
      region_traced.resize(static_cast<std::size_t>(region.id) + 1, false);
    region_traced[static_cast<std::size_t>(region.id)] = any;
  }
  const auto is_traced_region = [&](int id) {
    return id >= 0 && static_cast<std::size_t>(id) < region_traced.size() &&
           region_traced[static_cast<std::size_t>(id)];
  };
  const bool ocs_process =
      r.control != nullptr &&
      std::find(region_traced.begin(), region_traced.end(), true) != region_traced.end();
  if (ocs_process) {
    process["pid"] = ocs_pid;
    process["args"]["name"] = "OCS regions";
    events.add(process);
    for (const fabric::Region& region : r.topology.regions()) {
      if (!is_traced_region(region.id)) continue;
      thread["pid"] = ocs_pid;
      thread["tid"] = region.id;
      thread["args"]["name"] =
          fmt::format("region {} (servers {}-{})", region.id, region.first_server,
                      region.first_server + region.servers - 1);
      events.add(thread);
    }
  }
  // One complete event per task and member GPU. The object is reused: assigning to existing
  // keys avoids rebuilding it a million times.
  nlohmann::json event = {{"name", ""}, {"cat", ""}, {"ph", "X"}, {"pid", 0},
                          {"tid", 0},   {"ts", 0.0}, {"dur", 0.0}};
  auto emit = [&](int pid, int tid, const std::string& name, const char* cat,
                  const sim::TaskSpan& span) {
    event["name"] = name;
    event["cat"] = cat;
    event["pid"] = pid;
    event["tid"] = tid;
    event["ts"] = trace_microseconds(span.start);
    event["dur"] = trace_microseconds(span.end - span.start);
    events.add(event);
  };
  for (const sim::TaskSpan& span : r.result.spans) {
    const Task& t = r.graph.task(span.task);
    std::string name = workload::to_string(t.op);
    if (t.layer >= 0) name += fmt::format(" L{}", t.layer);
    if (t.micro_batch >= 0) name += fmt::format(" mb{}", t.micro_batch);
    name += std::string(" ") + workload::to_string(t.phase);
    switch (t.kind) {
      case TaskKind::Compute:
        if (is_traced(t.gpu)) emit(t.gpu, 0, name, "compute", span);
        break;
      case TaskKind::P2P:
        if (is_traced(t.gpu)) emit(t.gpu, 1, name, workload::to_string(t.traffic), span);
        if (is_traced(t.peer)) emit(t.peer, 1, name, workload::to_string(t.traffic), span);
        break;
      case TaskKind::Collective:
        for (std::int32_t g : r.graph.group(t.group)) {
          if (is_traced(g)) emit(g, 1, name, workload::to_string(t.traffic), span);
        }
        break;
    }
  }
  if (ocs_process) {
    for (const sim::ReconfigurationSpan& span : r.control->spans) {
      if (is_traced_region(span.region))
        emit(ocs_pid, span.region, "reconfiguration", "ocs", {-1, span.start, span.end});
    }
  }
  events.finish();
}

std::string trace_json(const SimulationReport& r, const TraceFilter& filter) {
  std::ostringstream out;
  write_trace_json(r, out, filter);
  return out.str();
}

void check_simulation_outputs(const std::string& dir) {
  check_output_set(dir, std::vector<std::string>(std::begin(kSimulationOutputFiles),
                                                 std::end(kSimulationOutputFiles)));
}

void write_flows_csv(const SimulationReport& r, std::ostream& out) {
  out << provenance_csv_comment();
  out << "task,src,dst,bytes,start_s,end_s,duration_s\n";
  for (const sim::FlowRecord& f : r.result.flows) {
    out << fmt::format("{},{},{},{},{:.12f},{:.12f},{:.12f}\n", f.task,
                       csv_field(r.topology.name(f.src)), csv_field(r.topology.name(f.dst)),
                       f.size.count(), f.start.seconds(), f.end.seconds(),
                       (f.end - f.start).seconds());
  }
}

std::vector<std::string> write_simulation_outputs(const SimulationReport& r, const std::string& dir,
                                                  const SimulationOutputs& outputs) {
  const bool has_collectives = std::any_of(
      r.result.spans.begin(), r.result.spans.end(),
      [&](const sim::TaskSpan& span) { return r.graph.task(span.task).kind != TaskKind::Compute; });
  std::optional<UtilisationSeries> series;
  if (r.result.timeline) series.emplace(r.topology, r.result);
  const bool utilisation = series && series->bins() > 0;
  // Each file is produced while it is written (the trace is streamed), the page before: an error
  // in any of them leaves `dir` as it was.
  const std::map<std::string, std::pair<bool, ContentWriter>> candidates = {
      {"results.json",
       {true, [&](std::ostream& out) { out << json_text(results_json(r, false)) << "\n"; }}},
      {"links.csv", {true, [&](std::ostream& out) { write_links_csv(r, out); }}},
      {"collectives.csv",
       {has_collectives, [&](std::ostream& out) { write_collectives_csv(r, out); }}},
      {"utilisation.csv",
       {utilisation, [&](std::ostream& out) { write_utilisation_csv(*series, out); }}},
      {"report.html", {utilisation && outputs.report, nullptr}},
      {"trace.json",
       {outputs.trace, [&](std::ostream& out) { write_trace_json(r, out, outputs.trace_filter); }}},
      {"utilisation_links.csv",
       {outputs.link_utilisation && r.result.timeline,
        [&](std::ostream& out) { write_link_utilisation_csv(r.topology, r.result, out); }}},
      {"flows.csv", {outputs.flows, [&](std::ostream& out) { write_flows_csv(r, out); }}},
  };
  std::vector<std::string> written;
  for (const char* name : kSimulationOutputFiles) {
    if (candidates.at(name).first) written.push_back(name);
  }
  std::string html;
  if (candidates.at("report.html").first) html = simulation_html(r, *series, written);
  std::vector<OutputFile> files;
  for (const std::string& name : written) {
    if (name == "report.html") {
      files.push_back({name, [&](std::ostream& out) { out << html; }});
    } else {
      files.push_back({name, candidates.at(name).second});
    }
  }
  write_output_set(dir, files,
                   std::vector<std::string>(std::begin(kSimulationOutputFiles),
                                            std::end(kSimulationOutputFiles)));
  return written;
}

}  // namespace mfabric::report
