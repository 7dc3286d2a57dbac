// Failures in the simulator (docs/reliability.md, "Failures"): spares (sim/spares.h) and whole
// runs with parts failing at start and mid-run. The list and its checks against the fabric:
// tests/config/failures_test.cpp.
#include "sim/spares.h"

#include <gtest/gtest.h>

#include <string>

#include "config/failure_cases.h"
#include "core/error.h"
#include "fabric/builders.h"
#include "report/simulation_report.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

using testing::error_field;
using testing::mfabric_fabric;
using testing::parse;

TEST(Failures, SparesPreferTheFailedPartsRegion) {
  // 12 servers in regions of 4; the job uses the first 8 (64 GPUs), so region 2 is all spare.
  const fabric::Topology t = mfabric_fabric(12);
  const SparePlacement gpu = place_spares(parse("[{kind: gpu, server: 1, index: 2}]"), t, 64, "");
  ASSERT_EQ(gpu.moves.size(), 1u);
  EXPECT_EQ(gpu.moves[0].from_gpu, 10);
  EXPECT_EQ(gpu.moves[0].to_gpu, 64);  // region 0 has no idle GPU: the first idle one
  EXPECT_EQ(gpu.gpu_of[10], 64);
  EXPECT_EQ(gpu.gpu_of[11], 11);
  // A job of 60 GPUs leaves 4 idle in region 1 (server 7): a GPU of region 1 takes one of them.
  const SparePlacement regional =
      place_spares(parse("[{kind: gpu, server: 5, index: 0}]"), t, 60, "");
  EXPECT_EQ(regional.moves.at(0).to_gpu, 60);
  const SparePlacement server = place_spares(
      parse("[{kind: server, server: 3}, {kind: gpu, server: 0, index: 0}]"), t, 64, "");
  ASSERT_EQ(server.moves.size(), 9u);
  for (int k = 0; k < 8; ++k)
    EXPECT_EQ(server.gpu_of[static_cast<std::size_t>(24 + k)], 64 + k);
  EXPECT_EQ(server.gpu_of[0], 72);  // after the server took server 8
  // No spare left: the error names the failure.
  EXPECT_EQ(error_field([&] {
              place_spares(parse("[{kind: gpu, server: 1, index: 2}]"), t, 96, "t.yaml");
            }),
            "failures[0]");
  EXPECT_EQ(error_field([&] {
              place_spares(
                  parse("[{kind: server, server: 0}, {kind: server, server: 1}, {kind: gpu, "
                        "server: 2, index: 0}, {kind: server, server: 3}, {kind: server, "
                        "server: 4}, {kind: server, server: 5}]"),
                  t, 64, "t.yaml");
            }),
            "failures[5]");
}

// Two servers of 2 GPUs and 2 NICs on a non-blocking fat-tree at 100G; one ring all-reduce per
// rail (GPU k of both servers), 1 GiB each. The rings are bandwidth-bound on the NICs.
Simulation rails(const std::string& failures) {
  return simulate(parse_experiment(
      "cluster: {servers: 2, gpus_per_server: 2, nics_per_server: 2, link: 100G}\n"
      "fabric: fat-tree\n"
      "workload: {collective: all-reduce, bytes: 1GiB, group: per-rail, algorithm: ring}\n" +
          failures,
      "t.yaml"));
}

TEST(Failures, ANicDownAtStartSendsItsRailThroughTheOtherNic) {
  const Simulation healthy = rails("");
  const Simulation failed = rails("failures: [{kind: nic, server: 0, index: 0}]\n");
  // Server 0's rail-0 traffic detours through GPU 1's NIC, which now carries both rails: twice
  // the bytes on the bottleneck, twice the time (latency and NVSwitch hops aside).
  const double ratio = failed.result.makespan.seconds() / healthy.result.makespan.seconds();
  EXPECT_NEAR(ratio, 2.0, 0.01);
  EXPECT_EQ(failed.result.transfers.bytes_delivered, failed.result.transfers.bytes_sent);
  EXPECT_EQ(failed.spares.size(), 0u);
}

TEST(Failures, ANicDownMidRunMovesItsTransfersWithoutLosingBytes) {
  const Simulation healthy = rails("");
  const Time half = Time::picoseconds(healthy.result.makespan.ps() / 2);
  const Simulation failed = rails(
      "failures: [{kind: nic, server: 0, index: 0, at: " + std::to_string(half.ps()) + "ps}]\n");
  // Half the bytes went at full speed; the other halves of both rails then share one NIC: the
  // second half takes twice as long, 1.5x in all.
  const double ratio = failed.result.makespan.seconds() / healthy.result.makespan.seconds();
  EXPECT_NEAR(ratio, 1.5, 0.01);
  EXPECT_EQ(failed.result.transfers.delivered, failed.result.transfers.started);
  EXPECT_EQ(failed.result.transfers.bytes_delivered, failed.result.transfers.bytes_sent);
  const nlohmann::json j = report::results_json(report::report_of(failed), false);
  EXPECT_EQ(j["failures"]["parts"][0]["kind"], "nic");
  EXPECT_DOUBLE_EQ(j["failures"]["parts"][0]["at_s"].get<double>(), half.seconds());
}

// 8 servers (two regions of 4: one pipeline stage's EP group each), mFabric as in the paper:
// alpha 6, so 2 EPS NICs per server.
std::string mfabric_job(int servers, const std::string& dp, const std::string& policy) {
  return "cluster: {servers: " + std::to_string(servers) +
         ", link: 400G}\nfabric: {kind: mfabric, region: 4, policy: " + policy +
         "}\n"
         "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 8, "
         "micro_batch: 2, "
         "seq: 256" +
         dp + "}\n";
}

Simulation run_mfabric(const std::string& failures, int servers = 8, const std::string& dp = "",
                       const std::string& policy = "block") {
  return simulate(parse_experiment(mfabric_job(servers, dp, policy) + failures, "t.yaml"));
}

void expect_everything_delivered(const Simulation& s) {
  EXPECT_EQ(s.result.transfers.delivered, s.result.transfers.started);
  EXPECT_EQ(s.result.transfers.bytes_delivered, s.result.transfers.bytes_sent);
}

TEST(Failures, AnOcsPortDownIsPlannedAround) {
  const Simulation healthy = run_mfabric("");
  for (const std::string at : {"start", "30ms"}) {
    const Simulation s =
        run_mfabric("failures: [{kind: ocs-port, server: 1, index: 0, at: " + at + "}]\n");
    expect_everything_delivered(s);
    EXPECT_EQ(s.control->failed_ports, 1) << at;
    EXPECT_GE(s.result.mean_iteration_time(), healthy.result.mean_iteration_time()) << at;
  }
}

TEST(Failures, AServerWithoutEpsNicsRelaysThroughAPeer) {
  const Simulation healthy = run_mfabric("");
  // NICs 0 and 1 are server 1's EPS NICs: its DP and PP traffic now leaves over a relay
  // circuit to a peer of its region, which forwards it over the EPS (from 20 ms on; before,
  // over NIC 1).
  const Simulation s = run_mfabric(
      "failures: [{kind: nic, server: 1, index: 0}, {kind: nic, server: 1, index: 1, at: 20ms}]\n");
  expect_everything_delivered(s);
  EXPECT_EQ(s.control->relays, 1);
  EXPECT_GT(s.result.mean_iteration_time(), healthy.result.mean_iteration_time());
}

TEST(Failures, PinningARelayCountsAsAReconfiguration) {
  // The relay circuit takes the OCS's delay to come up: the reconfigurations counted, their
  // spans and their summed time describe the same events, the pin included.
  const Simulation s = run_mfabric(
      "failures: [{kind: nic, server: 1, index: 0}, {kind: nic, server: 1, index: 1, at: 20ms}]\n");
  ASSERT_TRUE(s.control.has_value());
  ASSERT_EQ(s.control->relays, 1);
  EXPECT_EQ(static_cast<std::int64_t>(s.control->spans.size()), s.control->reconfigurations);
  Time summed;
  for (const ReconfigurationSpan& span : s.control->spans)
    summed += span.end - span.start;
  EXPECT_EQ(summed, s.control->reconfiguration_time);
}

TEST(Failures, SparesTakeTheRanksOfAFailedGpuAndServer) {
  // 12 servers, the job on the first 8 (dp 1): region 2 is the spare pool, reached over the EPS.
  const Simulation healthy = run_mfabric("", 12, ", dp: 1");
  const Simulation gpu =
      run_mfabric("failures: [{kind: gpu, server: 1, index: 2}]\n", 12, ", dp: 1");
  const Simulation server = run_mfabric("failures: [{kind: server, server: 6}]\n", 12, ", dp: 1");
  for (const Simulation* s : {&gpu, &server}) {
    expect_everything_delivered(*s);
    EXPECT_GE(s->result.mean_iteration_time(), healthy.result.mean_iteration_time());
    EXPECT_EQ(s->graph.job_gpus(), 64);
    EXPECT_EQ(s->graph.gpus(), 96);
  }
  ASSERT_EQ(gpu.spares.size(), 1u);
  EXPECT_EQ(gpu.spares[0].to_gpu, 64);
  EXPECT_EQ(server.spares.size(), 8u);
  // No task runs on a failed GPU.
  for (const workload::Task& t : gpu.graph.tasks())
    EXPECT_NE(t.gpu(), 10);
}

TEST(Failures, ARegionWithNoServerLeftToRelayIsTheExperimentsError) {
  // Every server of region 0 loses both EPS NICs: the last has no healthy peer to relay for it.
  std::string failures = "failures: [";
  for (int s = 0; s < 4; ++s) {
    for (int n = 0; n < 2; ++n)
      failures +=
          "{kind: nic, server: " + std::to_string(s) + ", index: " + std::to_string(n) + "},";
  }
  failures.back() = ']';
  try {
    run_mfabric(failures + "\n");
    FAIL() << "a region cut off from the EPS ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "t.yaml");
    EXPECT_EQ(e.field(), "failures");
    EXPECT_NE(std::string(e.what()).find("server 3"), std::string::npos) << e.what();
  }
}

TEST(Failures, TheTextReportSaysWhatFailed) {
  const Simulation s = run_mfabric(
      "failures: [{kind: ocs-port, server: 1, index: 0}, {kind: gpu, server: 2, index: 3}]\n", 12,
      ", dp: 1");
  const std::string text = report::results_text(report::report_of(s));
  EXPECT_NE(text.find("2 parts, 1 rank on spares, 2 OCS ports out, 0 relay circuits"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace mfabric::sim
