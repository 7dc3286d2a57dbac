#include "report/simulation_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "report/format.h"
#include "report/table.h"

namespace mfabric::report {
namespace {

using workload::Task;
using workload::TaskKind;

const char* traffic_key(std::size_t k) {
  static constexpr const char* kKeys[] = {"tp", "ep", "dp", "pp"};
  return kKeys[k];
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
  return "chakra " + e.chakra;
}

}  // namespace

nlohmann::json results_json(const SimulationReport& r, bool timing) {
  const sim::RunResult& res = r.result;
  nlohmann::json comm = nlohmann::json::object();
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    comm[traffic_key(k)] = res.comm_time[k].seconds();
  }
  nlohmann::json iterations = nlohmann::json::array();
  for (Time t : res.iteration_times)
    iterations.push_back(t.seconds());
  nlohmann::json j = {
      {"schema", kResultsSchema},
      {"experiment", r.experiment.source},
      {"seed", r.experiment.seed},
      {"fabric", r.topology.spec()},
      {"workload", workload_label(r.experiment)},
      {"gpus", r.graph.gpus()},
      {"tasks", r.graph.size()},
      {"iterations", res.iteration_times.size()},
      {"iteration_time_s", res.mean_iteration_time().seconds()},
      {"iteration_times_s", iterations},
      {"exposed_comm_s", res.exposed_comm.seconds()},
      {"comm_time_s", comm},
      {"events", res.events},
  };
  if (timing) {
    j["wall_time_s"] = res.wall_time_s;
    j["events_per_s"] =
        res.wall_time_s > 0 ? static_cast<double>(res.events) / res.wall_time_s : 0.0;
  }
  return j;
}

std::string results_text(const SimulationReport& r) {
  const sim::RunResult& res = r.result;
  std::string out =
      fmt::format("simulate {}: {} on {} ({} GPUs, {} tasks)\n\n", r.experiment.source,
                  workload_label(r.experiment), r.topology.spec(), r.graph.gpus(),
                  with_commas(static_cast<std::int64_t>(r.graph.size())));
  Table t({"metric", "value"});
  t.add_row({"iteration time", to_string(res.mean_iteration_time())});
  t.add_row({"exposed communication (per GPU)", to_string(res.exposed_comm)});
  static constexpr const char* kNames[] = {"TP", "EP", "DP", "PP"};
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    t.add_row({fmt::format("{} communication (per GPU)", kNames[k]), to_string(res.comm_time[k])});
  }
  t.add_row({"events", with_commas(res.events)});
  // What the run itself took is on its own line: it changes from run to run, the table does not.
  const std::string timing = fmt::format(
      "\nsimulated in {:.2f}s wall time ({} events per second)\n", res.wall_time_s,
      with_commas(static_cast<std::int64_t>(
          res.wall_time_s > 0 ? static_cast<double>(res.events) / res.wall_time_s : 0)));
  return out + t.render() + timing;
}

std::string links_csv(const SimulationReport& r) {
  std::string out = "link,direction,from,to,kind,rate_gbps,bytes,busy_s,utilisation\n";
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
      out += fmt::format("{},{},{},{},{},{},{:.0f},{:.9f},{:.6f}\n", l, dir == 0 ? "ab" : "ba",
                         r.topology.name(from), r.topology.name(to), fabric::to_string(link.kind),
                         link.rate.gbps(), s.bytes, s.busy.seconds(),
                         capacity > 0 ? s.bytes / capacity : 0.0);
    }
  }
  return out;
}

std::string collectives_csv(const SimulationReport& r) {
  std::string out =
      "task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,end_s,"
      "duration_s\n";
  for (const sim::TaskSpan& span : r.result.spans) {
    const Task& t = r.graph.task(span.task);
    if (t.kind == TaskKind::Compute) continue;
    const std::size_t members = t.kind == TaskKind::P2P ? 2 : r.graph.group(t.group).size();
    const std::int64_t bytes = t.kind == TaskKind::Collective && t.matrix >= 0
                                   ? r.graph.matrix(t.matrix).off_diagonal_sum()
                                   : t.bytes.count();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.9f},{:.9f},{:.9f}\n", span.task,
                       t.iteration, t.layer, t.micro_batch, workload::to_string(t.phase),
                       workload::to_string(t.op), workload::to_string(t.traffic),
                       t.kind == TaskKind::P2P ? "p2p" : workload::to_string(t.collective), members,
                       bytes, span.start.seconds(), span.end.seconds(),
                       (span.end - span.start).seconds());
  }
  return out;
}

std::string trace_json(const SimulationReport& r) {
  // Written by hand rather than through nlohmann::json: a 1024-GPU iteration has about a million
  // events, and building the document in memory first would triple the peak memory.
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](int pid, int tid, const std::string& name, const char* cat, Time start,
                  Time end) {
    out += fmt::format(
        "{}{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},"
        "\"ts\":{:.3f},\"dur\":{:.3f}}}",
        first ? "" : ",\n", name, cat, pid, tid, start.seconds() * 1e6,
        (end - start).seconds() * 1e6);
    first = false;
  };
  for (int g = 0; g < r.graph.gpus(); ++g) {
    out += fmt::format(
        "{}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"GPU "
        "{}\"}}}},\n"
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":"
        "\"compute\"}}}},\n"
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":1,\"args\":{{\"name\":"
        "\"communication\"}}}}",
        first ? "" : ",\n", g, g, g, g);
    first = false;
  }
  for (const sim::TaskSpan& span : r.result.spans) {
    const Task& t = r.graph.task(span.task);
    std::string name = workload::to_string(t.op);
    if (t.layer >= 0) name += fmt::format(" L{}", t.layer);
    if (t.micro_batch >= 0) name += fmt::format(" mb{}", t.micro_batch);
    name += std::string(" ") + workload::to_string(t.phase);
    switch (t.kind) {
      case TaskKind::Compute:
        emit(t.gpu, 0, name, "compute", span.start, span.end);
        break;
      case TaskKind::P2P:
        emit(t.gpu, 1, name, workload::to_string(t.traffic), span.start, span.end);
        emit(t.peer, 1, name, workload::to_string(t.traffic), span.start, span.end);
        break;
      case TaskKind::Collective:
        for (std::int32_t g : r.graph.group(t.group)) {
          emit(g, 1, name, workload::to_string(t.traffic), span.start, span.end);
        }
        break;
    }
  }
  out += "\n]}\n";
  return out;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path, "", "cannot be written (directory missing or not permitted)");
    out << content;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw Error(path, "", "writing failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw Error(path, "", "cannot be written: " + ec.message());
  }
}

void write_simulation_outputs(const SimulationReport& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "", "cannot create the output directory: " + ec.message());
  const std::filesystem::path d(dir);
  // Everything is rendered before anything is written, so an error leaves no partial set.
  const std::string results = results_json(r, /*timing=*/false).dump(2) + "\n";
  const std::string links = links_csv(r);
  const std::string collectives = collectives_csv(r);
  const std::string trace = trace_json(r);
  write_file_atomically((d / "results.json").string(), results);
  write_file_atomically((d / "links.csv").string(), links);
  write_file_atomically((d / "collectives.csv").string(), collectives);
  write_file_atomically((d / "trace.json").string(), trace);
}

}  // namespace mfabric::report
