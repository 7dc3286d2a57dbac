// The packet settings of an experiment (config/packet_settings.h) in runs: a registered
// transport's own block, and values just inside the limits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/packet_experiment.h"
#include "net/toy_transport.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

using testing::packet_experiment;

// A transport registered by a test (tests/net/toy_transport.h) runs a transfer to the end.
TEST(PacketSettingsInRuns, ARegisteredTransportRuns) {
  net::testing::register_toy_transport();
  const Simulation run =
      simulate(parse_experiment(packet_experiment("transport: toy, toy: {window: 8}"), "exp.yaml"));
  EXPECT_GT(run.result.transfers.bytes_sent, 0);
  EXPECT_EQ(run.result.transfers.bytes_delivered, run.result.transfers.bytes_sent);
}

// Values just inside the limits run, quickly: each timer one picosecond above its floor, the
// DCQCN rates at theirs. At these settings RoCE and IRN time out (a timeout is never shorter
// than the route's round trip, and at most one per packet sent) and the run completes.
TEST(PacketSettingsInRuns, ValuesJustInsideTheLimitsRun) {
  const std::vector<std::string> runs = {
      "transport: dctcp, dctcp: {min_rto: 332801ps}",
      "transport: roce-dcqcn, ecn_threshold: 20kB, roce: {rto: 332801ps}, dcqcn: {alpha_timer: "
      "332801ps, rate_timer: 332801ps, cnp_interval: 332801ps, byte_counter: 4160B}",
      "transport: roce-dcqcn, ecn_threshold: 20kB, roce: {rto: 332801ps}, dcqcn: {variant: "
      "ns3-rdma, rate_timer: 665601ps, min_rate: 1Mbps, additive_increase: 100Kbps, "
      "hyper_increase: 100Kbps}",
      "transport: roce-dcqcn, ecn_threshold: 20kB, roce: {rto: 332801ps}, dcqcn: {min_rate: "
      "1Mbps, additive_increase: 100Kbps, hyper_increase: 100Kbps}",
      "transport: irn, ecn_threshold: 20kB, irn: {rto_low: 332801ps, rto_high: 332801ps}, dcqcn: "
      "{alpha_timer: 332801ps, rate_timer: 332801ps, cnp_interval: 332801ps, min_rate: 1Mbps}",
  };
  for (const std::string& settings : runs) {
    SCOPED_TRACE(settings);
    const Simulation run = simulate(parse_experiment(packet_experiment(settings), "exp.yaml"));
    const RunResult& r = run.result;
    EXPECT_GT(r.makespan, Time::zero());
    ASSERT_TRUE(r.packets.has_value());
    EXPECT_EQ(r.transfers.bytes_delivered, r.transfers.bytes_sent);
    EXPECT_EQ(r.transfers.bytes_delivered, 4 * 3 * (std::int64_t{1} << 20) / 4);
    EXPECT_LE(r.packets->timeouts, r.packets->packets_sent);
  }
}

}  // namespace
}  // namespace mfabric::sim
