// The CSV files of `mfabric simulate --out` (simulation_report.h): links.csv (per directed
// channel), collectives.csv (per communication task) and flows.csv (per transfer), RFC 4180.
#include <fmt/format.h>

#include <ostream>
#include <sstream>
#include <string>

#include "core/output_text.h"
#include "core/provenance.h"
#include "report/simulation_report.h"

namespace mfabric::report {

using workload::Task;
using workload::TaskKind;

namespace {

// What `write` writes of the report, as a string.
std::string csv_text(const SimulationReport& r,
                     void (*write)(const SimulationReport&, std::ostream&)) {
  std::ostringstream out;
  write(r, out);
  return out.str();
}

}  // namespace

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
  return csv_text(r, write_links_csv);
}

void write_collectives_csv(const SimulationReport& r, std::ostream& out) {
  out << provenance_csv_comment();
  out << "task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,"
         "end_s,duration_s,source_id\n";
  for (const sim::TaskSpan& span : r.result.spans) {
    const Task& t = r.graph.task(span.task);
    if (t.kind == TaskKind::Compute) continue;
    const std::size_t members = t.kind == TaskKind::P2P ? 2 : r.graph.group(t.group()).size();
    const std::int64_t bytes = t.kind == TaskKind::Collective && t.matrix() >= 0
                                   ? r.graph.matrix(t.matrix()).off_diagonal_sum()
                                   : t.bytes().count();
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
  return csv_text(r, write_collectives_csv);
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

}  // namespace mfabric::report
