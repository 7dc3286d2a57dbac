// An htsim connection matrix as an experiment's workload: start times and triggers through the
// engine, with finish times from the fluid formula (drain at the fair share, then the path's
// latency).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "config/experiment.h"
#include "core/error.h"
#include "report/simulation_report.h"
#include "scratch_dir.h"
#include "sim/engine.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"
#include "test_text.h"

namespace mfabric::sim {
namespace {

class ConnectionMatrixSim : public mfabric::testing::ScratchDirTest {
 protected:
  ConnectionMatrixSim() : ScratchDirTest("mfabric_cm_sim") {}

  Simulation run(const std::string& cm, int servers = 4) {
    write("traffic.cm", cm);
    const std::string yaml = "cluster: {servers: " + std::to_string(servers) +
                             ", gpus_per_server: 1, nics_per_server: 1, link: 100G, "
                             "link_latency: 1us}\n"
                             "fabric: fat-tree\n"
                             "workload: {connection_matrix: traffic.cm}\n";
    SimulationOptions options;
    options.record_spans = true;
    return simulate(parse_experiment(yaml, write("e.yaml", yaml)), options);
  }
};

// 12.5 MB drains in 1 ms at 100G; every path is GPU -> PCIe -> NIC -> leaf -> NIC -> PCIe -> GPU,
// two cables of 1 us. Flows 1 and 4 share node 0's NIC (50G each: 2 ms), flow 2 waits for flow
// 1, flow 3 waits for its start time (5 ms).
TEST_F(ConnectionMatrixSim, StartTimesAndTriggersFollowTheFluidFormula) {
  const Simulation s =
      run("Nodes 4\n"
          "Connections 4\n"
          "Triggers 1\n"
          "0->1 id 1 start 0 size 12500000 send_done_trigger 1\n"
          "1->2 id 2 trigger 1 size 12500000\n"
          "2->3 id 3 start 5000 size 12500000\n"
          "0->3 id 4 start 0 size 12500000\n"
          "trigger id 1 oneshot\n");
  ASSERT_EQ(s.graph.size(), 4u);  // ids 1, 3, 4, then 2
  const auto us = [](double x) { return Time::picoseconds(static_cast<std::int64_t>(x * 1e6)); };
  const auto& spans = s.result.spans;
  ASSERT_EQ(spans.size(), 4u);
  const auto span_of = [&](int src, int dst) {
    for (const TaskSpan& sp : spans) {
      const workload::Task& t = s.graph.task(sp.task);
      if (t.gpu() == src && t.peer() == dst) return sp;
    }
    ADD_FAILURE() << src << "->" << dst;
    return TaskSpan{};
  };
  EXPECT_EQ(span_of(0, 1).start, Time::zero());
  EXPECT_EQ(span_of(0, 1).end, us(2002));
  EXPECT_EQ(span_of(0, 3).end, us(2002));
  EXPECT_EQ(span_of(1, 2).start, us(2002));
  EXPECT_EQ(span_of(1, 2).end, us(3004));
  EXPECT_EQ(span_of(2, 3).start, us(5000));
  EXPECT_EQ(span_of(2, 3).end, us(6002));
  ASSERT_EQ(s.result.iteration_times.size(), 1u);
  EXPECT_EQ(s.result.iteration_times[0], us(6002));
  EXPECT_EQ(s.result.transfers.bytes_delivered, 4 * 12'500'000);
  // collectives.csv: each flow's row ends with its htsim id, after its completion time. Flow 2
  // (1->2, task 3) ran from 2002 us to 3004 us.
  const std::string csv = testing::csv_body(report::collectives_csv(report::report_of(s)));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "task,iteration,layer,micro_batch,phase,op,traffic,collective,members,bytes,start_s,"
            "end_s,duration_s,source_id");
  EXPECT_NE(csv.find("\n3,0,-1,-1,other,generic,other,p2p,2,12500000,0.002002000,0.003004000,"
                     "0.001002000,2\n"),
            std::string::npos)
      << csv;
}

// The shipped example: two chained permutations of 16 MB on one 400G leaf, each 320 us of drain
// plus two 1 us cables.
TEST(ConnectionMatrixExample, TwoChainedPermutations) {
  // tests/sim/data need not exist: go up lexically.
  const std::filesystem::path root =
      std::filesystem::path(MFABRIC_TEST_DATA_DIR).parent_path().parent_path().parent_path();
  const std::string path = (root / "examples" / "htsim" / "permutation.yaml").string();
  const Simulation s = simulate(load_experiment(path));
  ASSERT_EQ(s.graph.size(), 32u);
  ASSERT_EQ(s.result.iteration_times.size(), 1u);
  EXPECT_EQ(s.result.iteration_times[0], Time::picoseconds(2 * (320'000'000 + 2'000'000)));
}

// ECMP takes the seed: a permutation across a 3-tier fat-tree of radix 4 (2 hosts per leaf) has
// flows that collide on uplinks for some hashes and not for others. Different seeds give
// different completion times, never below the collision-free time; the same seed gives the same.
TEST_F(ConnectionMatrixSim, EcmpChoicesFollowTheSeed) {
  std::string cm = "Nodes 16\n";
  for (int i = 0; i < 16; ++i) {
    cm += std::to_string(i) + "->" + std::to_string((i + 8) % 16) + " id " + std::to_string(i + 1) +
          " start 0 size 12500000\n";
  }
  write("perm.cm", cm);
  const auto time_with_seed = [&](int seed) {
    const std::string yaml = "seed: " + std::to_string(seed) +
                             "\ncluster: {servers: 16, gpus_per_server: 1, nics_per_server: 1, "
                             "link: 100G, link_latency: 1us}\n"
                             "fabric: fat-tree:radix=4\n"
                             "workload: {connection_matrix: perm.cm}\n";
    return simulate(parse_experiment(yaml, write("e.yaml", yaml))).result.iteration_times.at(0);
  };
  std::set<std::int64_t> times;
  for (int seed = 1; seed <= 12; ++seed) {
    const Time t = time_with_seed(seed);
    // 12.5 MB at 100G is 1 ms; the path has at most 6 cables of 1 us.
    EXPECT_GE(t, Time::picoseconds(1'000'000'000)) << "seed " << seed;
    times.insert(t.ps());
  }
  EXPECT_GE(times.size(), 2u) << "12 seeds gave one ECMP outcome";
  EXPECT_EQ(time_with_seed(5), time_with_seed(5));
  EXPECT_EQ(flow_salt_of_seed(1), 0u);  // seed 1 keeps the routes of earlier versions
  EXPECT_NE(flow_salt_of_seed(2), 0u);
}

TEST_F(ConnectionMatrixSim, MoreNodesThanGpusIsOneLine) {
  try {
    run("Nodes 8\n0->7 id 1 start 0 size 5\n", 4);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "Nodes");
    EXPECT_NE(e.message().find("8 nodes, more than the cluster's 4 GPUs"), std::string::npos)
        << e.what();
  }
}

TEST(ConnectionMatrixExperiment, OneWorkloadKindOnly) {
  try {
    parse_experiment(
        "cluster: {servers: 2}\nfabric: fat-tree\n"
        "workload: {connection_matrix: t.cm, model: mixtral-8x7b}\n",
        "e.yaml");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "workload");
    EXPECT_NE(e.message().find("'connection_matrix'"), std::string::npos) << e.what();
  }
  try {
    parse_experiment(
        "cluster: {servers: 2}\nfabric: fat-tree\n"
        "workload: {connection_matrix: t.cm, tp: 2}\n",
        "e.yaml");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "workload.tp");
    EXPECT_NE(e.message().find("does not apply to a connection_matrix workload"), std::string::npos)
        << e.what();
  }
}

// --- barriers ---------------------------------------------------------------------------------
// A barrier that several flows fire and several wait for is one task of the graph
// (workload::connection_matrix_graph): through the engine it must release the waiting flows the
// moment the last firing flow is done, move no bytes, and leave every figure of the run as the
// flows alone make it.

// 12.5 MB drains in 1 ms at 100G, plus two cables of 1 us. Flows 1 and 2 (on different NICs)
// fire barrier 1 at 1002 us and 2002 us; flows 3 and 4 start when the second is done.
TEST_F(ConnectionMatrixSim, ReleasesTheWaitingFlowsWhenTheLastFiringFlowIsDone) {
  const Simulation s =
      run("Nodes 4\n"
          "Triggers 1\n"
          "0->1 id 1 start 0 size 12500000 send_done_trigger 1\n"
          "2->3 id 2 start 0 size 25000000 send_done_trigger 1\n"
          "1->2 id 3 trigger 1 size 12500000\n"
          "3->0 id 4 trigger 1 size 12500000\n"
          "trigger id 1 barrier 2\n");
  ASSERT_EQ(s.graph.size(), 5u);  // ids 1, 2, the barrier, ids 3, 4
  const auto us = [](double x) { return Time::picoseconds(static_cast<std::int64_t>(x * 1e6)); };
  const auto& spans = s.result.spans;
  ASSERT_EQ(spans.size(), 5u);
  const auto span_of = [&](workload::TaskId id) {
    for (const TaskSpan& sp : spans) {
      if (sp.task == id) return sp;
    }
    ADD_FAILURE() << id;
    return TaskSpan{};
  };
  EXPECT_EQ(span_of(0).end, us(1002));
  EXPECT_EQ(span_of(1).end, us(2002));
  EXPECT_EQ(span_of(2).start, us(2002));  // the barrier takes no time
  EXPECT_EQ(span_of(2).end, us(2002));
  EXPECT_EQ(span_of(3).start, us(2002));
  EXPECT_EQ(span_of(3).end, us(3004));
  EXPECT_EQ(span_of(4).start, us(2002));
  EXPECT_EQ(span_of(4).end, us(3004));
  EXPECT_EQ(s.result.iteration_times.at(0), us(3004));
  // Only the flows cross the network and count as communication.
  EXPECT_EQ(s.result.transfers.started, 4);
  EXPECT_EQ(s.result.transfers.bytes_delivered, 62'500'000);
  // Other communication per GPU: flows of 1.002, 2.002, 1.002 and 1.002 ms, each for its 2 of
  // the 4 GPUs; the barrier adds nothing.
  EXPECT_NEAR(s.result.comm_time[4].seconds(), 5.008e-3 / 2, 1e-12);
  // collectives.csv: the barrier is a row of its own, of one member and no bytes, without a
  // source id.
  const std::string csv = testing::csv_body(report::collectives_csv(report::report_of(s)));
  EXPECT_NE(csv.find("\n2,0,-1,-1,other,generic,none,barrier,1,0,0.002002000,0.002002000,"
                     "0.000000000,\n"),
            std::string::npos)
      << csv;
}

// The same flows with a barrier per waiting flow (each fired by both flows, so no barrier task):
// every figure of the run is the same.
TEST_F(ConnectionMatrixSim, FiguresAreThoseOfDirectDependencies) {
  const std::string head =
      "Nodes 4\n"
      "0->1 id 1 start 0 size 12500000 send_done_trigger 1 recv_done_trigger 2\n"
      "2->3 id 2 start 0 size 25000000 send_done_trigger 1 recv_done_trigger 2\n"
      "trigger id 1 barrier 2\n"
      "trigger id 2 barrier 2\n";
  const Simulation shared = run(head +
                                "1->2 id 3 trigger 1 size 12500000\n"
                                "3->0 id 4 trigger 1 size 12500000\n");
  const Simulation direct = run(head +
                                "1->2 id 3 trigger 1 size 12500000\n"
                                "3->0 id 4 trigger 2 size 12500000\n");
  ASSERT_EQ(shared.graph.size(), 5u);  // trigger 1 is a task: two flows wait for it
  ASSERT_EQ(direct.graph.size(), 4u);
  EXPECT_EQ(shared.result.iteration_times, direct.result.iteration_times);
  EXPECT_EQ(shared.result.makespan, direct.result.makespan);
  EXPECT_EQ(shared.result.exposed_comm, direct.result.exposed_comm);
  EXPECT_EQ(shared.result.comm_time, direct.result.comm_time);
  EXPECT_EQ(shared.result.transfers.started, direct.result.transfers.started);
  EXPECT_EQ(shared.result.transfers.bytes_delivered, direct.result.transfers.bytes_delivered);
}

}  // namespace
}  // namespace mfabric::sim
