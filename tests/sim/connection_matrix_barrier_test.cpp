// A barrier that several flows fire and several wait for is one task of the graph
// (workload::connection_matrix_graph): through the engine it must release the waiting flows the
// moment the last firing flow is done, move no bytes, and leave every figure of the run as the
// flows alone make it.
#include <gtest/gtest.h>

#include <string>

#include "report/simulation_report.h"
#include "scratch_dir.h"
#include "sim/engine.h"
#include "sim/experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

class ConnectionMatrixBarrier : public mfabric::testing::ScratchDirTest {
 protected:
  ConnectionMatrixBarrier() : ScratchDirTest("mfabric_cm_barrier") {}

  Simulation run(const std::string& cm) {
    write("traffic.cm", cm);
    const std::string yaml =
        "cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100G, "
        "link_latency: 1us}\n"
        "fabric: fat-tree\n"
        "workload: {connection_matrix: traffic.cm}\n";
    SimulationOptions options;
    options.record_spans = true;
    return simulate(parse_experiment(yaml, write("e.yaml", yaml)), options);
  }
};

// 12.5 MB drains in 1 ms at 100G, plus two cables of 1 us. Flows 1 and 2 (on different NICs)
// fire barrier 1 at 1002 us and 2002 us; flows 3 and 4 start when the second is done.
TEST_F(ConnectionMatrixBarrier, ReleasesTheWaitingFlowsWhenTheLastFiringFlowIsDone) {
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
  const std::string csv = report::collectives_csv(report::report_of(s));
  EXPECT_NE(csv.find("\n2,0,-1,-1,other,generic,none,barrier,1,0,0.002002000,0.002002000,"
                     "0.000000000,\n"),
            std::string::npos)
      << csv;
}

// The same flows with a barrier per waiting flow (each fired by both flows, so no barrier task):
// every figure of the run is the same.
TEST_F(ConnectionMatrixBarrier, FiguresAreThoseOfDirectDependencies) {
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
