// TopoOpt in whole simulations: the topology is planned once from the job's demand, connected
// before the first event, and traffic between servers without a direct link is forwarded
// (docs/topoopt.md, "In simulations").
#include "sim/topoopt_control.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "config/experiment.h"
#include "config/workload_builder.h"
#include "control/job_demand.h"
#include "core/error.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "report/simulation_report.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

// 8 servers x 8 GPUs x 8 NICs, Mixtral 8x7B cut down: TP 4, PP 2, EP 8 (each EP group spans 4
// servers), DP 2.
const char* const kTopoOptTraining = R"(
cluster: {servers: 8, link: 400G}
fabric: topoopt
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 8, micro_batch: 2, seq: 256}
)";

TEST(TopoOptControl, ConnectsExactlyThePlannedLinksBeforeTheFirstEvent) {
  const config::Experiment e = parse_experiment(kTopoOptTraining, "t.yaml");
  const fabric::Topology t = fabric::build_fabric(e.fabric, e.cluster);
  const workload::TaskGraph graph = config::build_workload(e);
  net::FlowBackend backend(t);
  TopoOptControl control(graph, t);
  const control::TopoOptTopology& plan = control.plan();
  ASSERT_FALSE(plan.links.empty());
  EXPECT_EQ(plan.servers, 8);
  EXPECT_EQ(plan.degree, 8);
  EXPECT_TRUE(plan.connected);

  EngineOptions options;
  options.controller = &control;
  options.record_spans = false;
  const RunResult r = run(graph, t, backend, options);

  const net::LinkTable& links = backend.links();
  EXPECT_EQ(links.circuits(), plan.links.size());
  ASSERT_EQ(control.circuits().size(), plan.links.size());
  std::set<fabric::NodeId> nics;
  for (std::size_t i = 0; i < plan.links.size(); ++i) {
    const control::PanelLink& p = plan.links[i];
    const fabric::Link& c = links.link(control.circuits()[i]);
    // The ends, in either order.
    EXPECT_EQ(std::minmax(c.a, c.b),
              std::minmax(t.nic(p.server_a, p.nic_a), t.nic(p.server_b, p.nic_b)));
    // Each NIC holds at most one circuit.
    EXPECT_TRUE(nics.insert(c.a).second) << t.name(c.a);
    EXPECT_TRUE(nics.insert(c.b).second) << t.name(c.b);
  }
  EXPECT_LE(nics.size(), 8u * 8u);
  EXPECT_EQ(r.transfers.delivered, r.transfers.started);
  EXPECT_EQ(r.transfers.bytes_delivered, r.transfers.bytes_sent);

  const TopoOptStats s = control.stats();
  EXPECT_EQ(s.links, static_cast<std::int64_t>(plan.links.size()));
  EXPECT_EQ(s.ring_links + s.matching_links + s.connectivity_links + s.leftover_links, s.links);
  EXPECT_EQ(s.degree, 8);
  EXPECT_TRUE(s.connected);
  EXPECT_GE(s.planning_wall_s, 0.0);
}

TEST(TopoOptSimulation, TrainingFinishesAndDeliversEveryByte) {
  const Simulation s = simulate(parse_experiment(kTopoOptTraining, "t.yaml"));
  ASSERT_TRUE(s.topoopt.has_value());
  EXPECT_FALSE(s.control.has_value());
  const net::TransferTotals& t = s.result.transfers;
  EXPECT_GT(t.started, 0);
  EXPECT_EQ(t.delivered, t.started);
  EXPECT_EQ(t.bytes_delivered, t.bytes_sent);
  ASSERT_EQ(s.result.iteration_times.size(), 1u);
  EXPECT_GT(s.result.iteration_times[0], Time::zero());

  // results.json has the planned topology; the fields of other fabrics are not there.
  const nlohmann::json j = report::results_json(report::report_of(s), false);
  ASSERT_TRUE(j.contains("topology"));
  EXPECT_EQ(j["topology"]["kind"], "topoopt");
  EXPECT_EQ(j["topology"]["links"], s.topoopt->links);
  EXPECT_EQ(j["topology"]["connected"], true);
  EXPECT_GT(j["topology"]["circuit_bytes"].get<double>(), 0.0);
  EXPECT_FALSE(j["topology"].contains("planning_wall_time_s"));
  EXPECT_FALSE(j.contains("reconfiguration"));
  EXPECT_TRUE(report::results_json(report::report_of(s), true)["topology"].contains(
      "planning_wall_time_s"));
}

TEST(TopoOptSimulation, DegreeTwoTrainingIsForwardedThroughServers) {
  // 2 NICs per server: each server has at most 2 neighbours but talks to more (EP over 4
  // servers, DP), so some traffic must cross intermediate servers; all of it arrives.
  std::string yaml = kTopoOptTraining;
  yaml.replace(yaml.find("servers: 8,"), 11, "servers: 8, nics_per_server: 2,");
  const config::Experiment e = parse_experiment(yaml, "t.yaml");
  const fabric::Topology t = fabric::build_fabric(e.fabric, e.cluster);
  const workload::TaskGraph graph = config::build_workload(e);
  TopoOptControl control(graph, t);
  const control::JobDemand demand = control::job_demand(graph, t.cluster().gpus_per_server);
  std::set<std::pair<int, int>> linked;
  for (const control::PanelLink& l : control.plan().links) {
    linked.insert(std::minmax(l.server_a, l.server_b));
  }
  int forwarded_pairs = 0;
  for (int a = 0; a < 8; ++a) {
    for (int b : demand.pairs.partners(a)) {
      if (a < b && !linked.contains({a, b})) ++forwarded_pairs;
    }
  }
  EXPECT_GT(forwarded_pairs, 0);

  net::FlowBackend backend(t);
  EngineOptions options;
  options.controller = &control;
  const RunResult r = run(graph, t, backend, options);
  EXPECT_EQ(r.transfers.delivered, r.transfers.started);
  EXPECT_EQ(r.transfers.bytes_delivered, r.transfers.bytes_sent);
  // Every byte on a circuit came out of a GPU over PCIe into the sending NIC, at the source
  // and at every server that forwarded it (host forwarding does not bypass the server).
  double circuit_bytes = 0;
  for (fabric::LinkId c : control.circuits()) {
    circuit_bytes += r.channels[2 * static_cast<std::size_t>(c)].bytes +
                     r.channels[2 * static_cast<std::size_t>(c) + 1].bytes;
  }
  double pcie_up = 0;  // GPU -> NIC, at every server: the first hop and every forwarded hop
  for (std::size_t l = 0; l < t.links().size(); ++l) {
    if (t.link(static_cast<fabric::LinkId>(l)).kind == fabric::LinkKind::Pcie) {
      pcie_up += r.channels[2 * l].bytes;  // a is the GPU
    }
  }
  EXPECT_NEAR(circuit_bytes, pcie_up, pcie_up * 1e-9);
  EXPECT_GT(circuit_bytes, 0);
}

TEST(TopoOptSimulation, OtherFabricsReportNoTopologyPlan) {
  std::string yaml = kTopoOptTraining;
  yaml.replace(yaml.find("topoopt"), 7, "fat-tree");
  const Simulation s = simulate(parse_experiment(yaml, "t.yaml"));
  EXPECT_FALSE(s.topoopt.has_value());
  EXPECT_FALSE(report::results_json(report::report_of(s), false).contains("topology"));
}

TEST(TopoOptSimulation, RingAllReduceOnRingLinksRunsAtTheRingFormula) {
  // 8 servers x 1 GPU x 2 NICs: the only demand is one ring group over all servers, so both NICs
  // of every server go to one ring in server order (stride 1), the ring the lowering walks.
  // Each ring step crosses one circuit (2 fibres of 1 us) at the full 400G.
  const Simulation s = simulate(parse_experiment(R"(
cluster: {servers: 8, gpus_per_server: 1, nics_per_server: 2, link: 400G, link_latency: 1us}
fabric: topoopt
workload: {collective: all-reduce, bytes: 256MiB, algorithm: ring}
)",
                                                 "t.yaml"));
  ASSERT_TRUE(s.topoopt.has_value());
  EXPECT_EQ(s.topoopt->links, 8);
  EXPECT_EQ(s.topoopt->ring_links, 8);
  EXPECT_EQ(s.topoopt->rings, 1);
  const double n = 8, S = 256.0 * 1024 * 1024 * 8, B = 400e9;
  const double expected = 2 * (n - 1) / n * S / B + 2 * (n - 1) * 2e-6;
  EXPECT_NEAR(s.result.iteration_times[0].seconds(), expected, expected * 1e-6);
}

TEST(TopoOptSimulation, APlanThatLeavesTrafficUnreachableNamesTheServers) {
  // Degree 1 joins servers in pairs only: the all-reduce over 4 servers cannot run.
  try {
    simulate(parse_experiment(R"(
cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 400G}
fabric: topoopt
workload: {collective: all-reduce, bytes: 1MiB, algorithm: ring}
)",
                              "deg1.yaml"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deg1.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("not connected"), std::string::npos) << what;
    EXPECT_NE(what.find("servers 0 and"), std::string::npos) << what;
  }
}

TEST(TopoOptControl, RejectsAFabricWithoutAPatchPanel) {
  const config::Experiment e = parse_experiment(kTopoOptTraining, "t.yaml");
  const fabric::Topology t = fabric::build_fabric("fat-tree", e.cluster);
  const workload::TaskGraph graph = config::build_workload(e);
  EXPECT_THROW(TopoOptControl(graph, t), Error);
}

}  // namespace
}  // namespace mfabric::sim
