// The text summary of `mfabric simulate` (simulation_report.h): one table of the run's figures,
// every time in one unit, and the wall time on a line of its own.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/output_text.h"
#include "core/units.h"
#include "report/format.h"
#include "report/simulation_report.h"
#include "report/simulation_summary.h"
#include "report/table.h"
#include "study/compare.h"

namespace mfabric::report {
namespace {

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

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100 * fraction);
}

// What each GPU gets done, how busy it is and why it idles (training jobs only).
void add_gpu_rows(const SimulationReport& r, Table& t) {
  if (const std::optional<study::GpuThroughput> g = gpu_throughput_of(r)) {
    t.add_row({"tokens/s per GPU", whole_number(g->tokens_per_s_per_gpu)});
    t.add_row({"model TFLOP/s per GPU (MFU)",
               fmt::format("{:.1f} (MFU {})", g->model_tflops_per_gpu, percent(g->mfu))});
  }
  const std::optional<study::GpuBusy> b = gpu_busy_of(r);
  if (!b) return;
  std::string busy = percent(b->busy_fraction);
  if (b->stages > 1) {
    busy += fmt::format(" (stages {} to {})", percent(b->least_busy.busy_fraction),
                        percent(b->busiest.busy_fraction));
  }
  t.add_row({"GPU compute busy (of the iteration)", busy});
  if (b->stages > 1) {
    t.add_row({"  idle in pipeline bubbles (estimate)",
               fmt::format("{} ({} micro-batches, {} stages)", percent(b->bubble_fraction),
                           b->micro_batches, b->stages)});
  }
  t.add_row({"  idle waiting for communication", percent(b->comm_wait_fraction)});
  t.add_row({"  idle waiting for other GPUs", percent(b->other_wait_fraction)});
}

}  // namespace

std::optional<std::string> idle_warning(const SimulationReport& r) {
  const std::optional<study::GpuBusy> b = gpu_busy_of(r);
  return b ? study::idle_warning(*b) : std::nullopt;
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
  // A shortcut changes what the figures are: said before them (docs/shortcuts.md).
  for (const sim::Shortcut& s : r.shortcuts) {
    if (s.name == "extrapolate") {
      const std::optional<sim::Extrapolation>& x = r.result.extrapolation;
      out += s.used && x ? fmt::format(
                               "Steady state: {}. Times, communication and compute below are "
                               "the whole job's; the network's counters the simulated "
                               "micro-batches' ({} sent of the job's {}).\n\n",
                               s.detail, to_string(Bytes(r.result.transfers.bytes_sent)),
                               to_string(Bytes(x->bytes_sent)))
                         : fmt::format("Not extrapolated: {}.\n\n", s.detail);
    } else {
      // The rate solvers' shortcuts: "fast-solver", "coflows".
      const bool coflows = s.name == "coflows";
      out += s.used ? fmt::format(
                          "{}: {}; within {:.1f}% of the exact solver as "
                          "measured (--exact for it).\n\n",
                          coflows ? "Coflows" : "Fast solver", s.detail, s.bound * 100)
                    : fmt::format("Not {}: {}.\n\n", coflows ? "coflows" : "the fast solver",
                                  s.detail);
    }
  }
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
  add_gpu_rows(r, t);
  if (const std::optional<double> cost = paper_network_cost(r.topology)) {
    t.add_row({"network cost (paper formulas)", dollars(*cost)});
  }
  t.add_row({"exposed communication (per GPU)", time_text(res.exposed_comm)});
  for (std::size_t k = 0; k < sim::kTrafficClasses.size(); ++k) {
    // Context parallelism's row only for a job that has it.
    if (sim::kTrafficClasses[k] == workload::Traffic::CP && res.comm_time[k] == Time::zero()) {
      continue;
    }
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
  // Which compute the times rest on: a job that names no calibration takes its GPU's measured
  // one (workload::default_calibration), so the name is said, not assumed.
  t.add_row({"calibration", r.experiment.calibration.name});
  // The routing skew the verdict rests on, said rather than assumed.
  if (r.routing != nullptr) t.add_row({"expert routing", r.routing->text()});
  t.add_row({"events", with_commas(res.events)});
  // What the run itself took is on its own line: it changes from run to run, the table does not.
  const std::string timing =
      fmt::format("\nsimulated in {:.2f}s wall time ({} events per second)\n", res.wall_time_s,
                  whole_number(events_per_second(res)));
  return out + t.render() + timing;
}

}  // namespace mfabric::report
