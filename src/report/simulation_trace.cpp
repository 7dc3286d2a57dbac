// trace.json of `mfabric simulate --trace` (simulation_report.h): the run in the Chrome trace
// event format that Perfetto reads, a process per GPU with a compute and a communication track
// and, for fabrics that reconfigure, one for the OCS regions; streamed event by event.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/json_text.h"
#include "report/simulation_report.h"

namespace mfabric::report {
namespace {

using workload::Task;
using workload::TaskKind;

// Trace timestamps: microseconds rounded to the nanosecond (the precision Perfetto shows).
double trace_microseconds(Time t) {
  const std::int64_t ps = t.ps();
  const std::int64_t ns = ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000);
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

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
        if (is_traced(t.gpu())) emit(t.gpu(), 0, name, "compute", span);
        break;
      case TaskKind::P2P:
        if (is_traced(t.gpu())) emit(t.gpu(), 1, name, workload::to_string(t.traffic), span);
        if (is_traced(t.peer())) emit(t.peer(), 1, name, workload::to_string(t.traffic), span);
        break;
      case TaskKind::Collective:
        for (std::int32_t g : r.graph.group(t.group())) {
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

}  // namespace mfabric::report
