// Chakra traces through the whole path: trace files -> read_chakra -> sim::run on a flow-level
// fabric, with times and bytes checked against formulas (docs/chakra.md, docs/network.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "report/simulation_report.h"
#include "sim/engine.h"
#include "sim/load_experiment.h"
#include "workload/chakra_test_util.h"

namespace mfabric::sim {
namespace {

using namespace workload::chakra_testing;
using workload::Traffic;

// n servers of one GPU and one NIC on one leaf: every GPU-to-GPU path is GPU -> PCIe -> NIC ->
// leaf -> NIC -> PCIe -> GPU, two cables of `latency` (PCIe has none) at `rate` throughout.
fabric::Topology one_leaf(int n, Rate rate, Time latency) {
  fabric::ClusterSpec c;
  c.servers = n;
  c.gpus_per_server = 1;
  c.nics_per_server = 1;
  c.numa_nodes = 1;
  c.link = rate;
  c.link_latency = latency;
  return fabric::build_fabric("fat-tree", c);
}

// ASTRA-sim's custom ring all-reduce of S bytes over n ranks: 2(n-1) steps; at each, every rank
// sends a chunk S/n to its right neighbour, then receives one from its left (the receive depends
// on the send), and the next step's send depends on the previous receive.
void write_ring_all_reduce(const std::string& prefix, int n, std::int64_t chunk) {
  for (int r = 0; r < n; ++r) {
    std::vector<workload::chakra_testing::pb::Node> nodes;
    for (int step = 0; step < 2 * (n - 1); ++step) {
      const auto send_id = static_cast<std::uint64_t>(2 * step + 1);
      const auto recv_id = send_id + 1;
      if (step == 0) {
        nodes.push_back(send(send_id, (r + 1) % n, chunk, step));
      } else {
        nodes.push_back(send(send_id, (r + 1) % n, chunk, step, {send_id - 1}));
      }
      nodes.push_back(recv(recv_id, (r + n - 1) % n, chunk, step, {send_id}));
    }
    write_rank(prefix, r, nodes, r % 2 == 1);  // odd ranks gzip-compressed
  }
}

std::size_t class_index(Traffic t) {
  for (std::size_t k = 0; k < kTrafficClasses.size(); ++k) {
    if (kTrafficClasses[k] == t) return k;
  }
  ADD_FAILURE() << "no traffic class " << workload::to_string(t);
  return 0;
}

TEST(ChakraSim, SendThenReceiveRingAllReduceTakesTheRingFormula) {
  TempDir dir;
  const int n = 8;
  const std::int64_t S = std::int64_t{8} << 20;  // 8 MiB: chunks of 1 MiB
  const std::int64_t chunk = S / n;
  write_ring_all_reduce(dir.prefix(), n, chunk);
  const workload::TaskGraph graph = workload::read_chakra(dir.prefix(), {});
  const Rate B = Rate::gbps(400);
  const Time latency = Time::microseconds(1);
  const fabric::Topology topology = one_leaf(n, B, latency);
  net::FlowBackend backend(topology);
  const RunResult r = run(graph, topology, backend);

  // Each step: the chunk at B plus the path latency (two cables); steps are sequential and the
  // n transfers of a step share no channel. 2(n-1) x (S/n x 8 / B + 2 x 1us).
  const double step_s = static_cast<double>(chunk) * 8 / 400e9 + 2 * latency.seconds();
  const double expected_s = 2 * (n - 1) * step_s;
  ASSERT_EQ(r.iteration_times.size(), 1u);
  // Each transfer's drain time is rounded up to a whole picosecond: at most 1 ps per step.
  EXPECT_NEAR(static_cast<double>(r.iteration_times[0].ps()), expected_s * 1e12, 2.0 * (n - 1));
  std::cout << "ring all-reduce of " << S << " bytes over " << n << " ranks: simulated "
            << r.iteration_times[0].ps() << " ps, formula " << std::llround(expected_s * 1e12)
            << " ps\n";
}

TEST(ChakraSim, CommunicationOnlyTraceIsExposedAndCountedAsOther) {
  TempDir dir;
  const int n = 8;
  const std::int64_t chunk = 1 << 20;
  write_ring_all_reduce(dir.prefix(), n, chunk);
  const workload::TaskGraph graph = workload::read_chakra(dir.prefix(), {});
  const fabric::Topology topology = one_leaf(n, Rate::gbps(400), Time::microseconds(1));
  net::FlowBackend backend(topology);
  const RunResult r = run(graph, topology, backend);
  const double total = r.iteration_times.at(0).seconds();

  // Every receive waits for its transfer for the whole step, and nothing else happens: each
  // GPU's exposed communication is the whole run.
  EXPECT_GT(r.exposed_comm, Time::zero());
  EXPECT_NEAR(r.exposed_comm.seconds(), total, 1e-9);
  // Every GPU takes part in two transfers per step (sending and receiving), so its average time
  // in "other" communication is twice the run; the parallelism classes saw none.
  EXPECT_NEAR(r.comm_time[class_index(Traffic::Other)].seconds(), 2 * total, 1e-9);
  for (Traffic t : {Traffic::TP, Traffic::EP, Traffic::DP, Traffic::PP}) {
    EXPECT_EQ(r.comm_time[class_index(t)], Time::zero()) << workload::to_string(t);
  }

  // The report names the class "other".
  config::Experiment e;
  e.source = "test.yaml";
  e.chakra = dir.prefix();
  const nlohmann::json j =
      report::results_json({e, topology, graph, r, nullptr, nullptr, nullptr, nullptr, {}}, false);
  EXPECT_NEAR(j.at("comm_time_s").at("other").get<double>(), 2 * total, 1e-9);
  EXPECT_GT(j.at("exposed_comm_s").get<double>(), 0.0);
}

TEST(ChakraSim, AllGatherMovesNTimesCommSize) {
  // ASTRA-sim's all-gather comm_size is each rank's input: n x comm_size is gathered, and a ring
  // sends (n-1) x comm_size out of every GPU.
  TempDir dir;
  const int n = 8;
  const std::int64_t comm_size = 1 << 20;
  for (int r = 0; r < n; ++r) {
    write_rank(dir.prefix(), r, {coll(1, workload::chakra_testing::pb::ALL_GATHER, comm_size, "")});
  }
  const workload::TaskGraph graph = workload::read_chakra(dir.prefix(), {});
  ASSERT_EQ(graph.size(), 1u);
  EXPECT_EQ(graph.task(0).bytes(), Bytes(n * comm_size));
  const fabric::Topology topology = one_leaf(n, Rate::gbps(400), Time::microseconds(1));
  net::FlowBackend backend(topology);
  const RunResult r = run(graph, topology, backend);
  for (int g = 0; g < n; ++g) {
    const fabric::NodeId gpu = gpu_node(topology, g);
    double out = 0;
    for (fabric::LinkId l : topology.links_of(gpu)) {
      const fabric::Link& link = topology.link(l);
      if (link.kind != fabric::LinkKind::Pcie) continue;
      const std::size_t channel = 2 * static_cast<std::size_t>(l) + (link.a == gpu ? 0 : 1);
      out += r.channels.at(channel).bytes;
    }
    EXPECT_DOUBLE_EQ(out, static_cast<double>((n - 1) * comm_size)) << "GPU " << g;
  }
}

TEST(ChakraSim, ExperimentFields) {
  const config::Experiment e = parse_experiment(R"(
workload: {chakra: traces/job, chakra_control_deps: ignore, chakra_comm_groups: groups.json}
)",
                                                "runs/test.yaml");
  EXPECT_EQ(e.chakra, "runs/traces/job");
  EXPECT_EQ(e.chakra_control_deps, workload::ControlDeps::Ignore);
  EXPECT_EQ(e.chakra_comm_groups, "runs/groups.json");
  EXPECT_EQ(parse_experiment("workload: {chakra: job}\n", "t.yaml").chakra_control_deps,
            workload::ControlDeps::Relaxed);
  try {
    parse_experiment("workload: {chakra: job, chakra_control_deps: lenient}\n", "t.yaml");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& err) {
    EXPECT_EQ(err.field(), "workload.chakra_control_deps");
    EXPECT_NE(std::string(err.what()).find("lenient"), std::string::npos);
  }
  EXPECT_THROW(
      parse_experiment("workload: {model: mixtral-8x7b, chakra_comm_groups: g.json}\n", "t.yaml"),
      Error);
}

}  // namespace
}  // namespace mfabric::sim
