// Link utilisation over time in whole runs (SimulationOptions::timeline, net/link_timeline.h):
// the bins add up to the bytes links.csv counts, circuits' bytes land on their NICs' fibres on
// mFabric and TopoOpt, on both backends, and counting changes nothing else.
#include <gtest/gtest.h>

#include <string>

#include "report/simulation_report.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

std::string training(const std::string& fabric, const std::string& extra = "") {
  return "cluster: {servers: 8, link: 400G}\nfabric: " + fabric +
         "\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: "
         "8, micro_batch: 2, "
         "seq: 256}\n" +
         extra;
}

Simulation run(const std::string& yaml, std::optional<net::TimelineOptions> timeline) {
  SimulationOptions options;
  options.timeline = timeline;
  return simulate(parse_experiment(yaml, "t.yaml"), options);
}

// Bytes over the circuits (channels past the topology's links) and over the optical NICs'
// fibres in the timeline, towards the device and from it.
struct OpticalBytes {
  double circuits = 0;
  double towards_device = 0;
  double from_device = 0;
};

OpticalBytes optical_bytes(const Simulation& s) {
  OpticalBytes out;
  const fabric::Topology& t = s.topology;
  for (std::size_t c = 2 * t.links().size(); c < s.result.channels.size(); ++c)
    out.circuits += s.result.channels[c].bytes;
  for (std::size_t l = 0; l < t.links().size(); ++l) {
    const fabric::Link& k = t.links()[l];
    const fabric::NodeKind b = t.node(k.b).kind;
    if (t.node(k.a).kind != fabric::NodeKind::Nic ||
        (b != fabric::NodeKind::Ocs && b != fabric::NodeKind::PatchPanel))
      continue;
    out.towards_device += s.result.timeline->total_bytes(static_cast<net::ChannelId>(2 * l));
    out.from_device += s.result.timeline->total_bytes(static_cast<net::ChannelId>(2 * l + 1));
  }
  return out;
}

// Every topology channel: its bins add up to its bytes in links.csv (except optical fibres,
// which links.csv leaves at zero: their circuits' bytes are in the circuit slots).
void expect_bins_add_up(const Simulation& s) {
  ASSERT_TRUE(s.result.timeline.has_value());
  const net::LinkTimeline& tl = *s.result.timeline;
  ASSERT_EQ(tl.channels(), 2 * s.topology.links().size());
  for (std::size_t c = 0; c < tl.channels(); ++c) {
    const fabric::Link& k = s.topology.links()[c / 2];
    const fabric::NodeKind b = s.topology.node(k.b).kind;
    if (b == fabric::NodeKind::Ocs || b == fabric::NodeKind::PatchPanel) continue;
    const double expected = s.result.channels[c].bytes;
    EXPECT_NEAR(tl.total_bytes(static_cast<net::ChannelId>(c)), expected, 1e-6 * (1 + expected))
        << "channel " << c;
  }
}

TEST(TimelineSim, FatTreeBinsAddUpAndCountingChangesNothing) {
  const std::string yaml = training("{kind: fat-tree, radix: 16}");
  const Simulation counted = run(yaml, net::TimelineOptions{});
  expect_bins_add_up(counted);
  // Automatic bins: 1 ms doubled while the run needs more than 400; never more than 400.
  EXPECT_GE(counted.result.timeline->bin(), Time::milliseconds(1));
  EXPECT_LE(counted.result.timeline->bins(), 400);
  const Simulation plain = run(yaml, std::nullopt);
  EXPECT_FALSE(plain.result.timeline.has_value());
  EXPECT_EQ(report::results_json(report::report_of(counted), false),
            report::results_json(report::report_of(plain), false));
}

TEST(TimelineSim, MfabricCircuitBytesAreOnTheirFibresBothWays) {
  const Simulation s = run(training("{kind: mfabric, region: 4, alpha: 2}"),
                           net::TimelineOptions{Time::milliseconds(2)});
  expect_bins_add_up(s);
  const OpticalBytes o = optical_bytes(s);
  ASSERT_GT(o.circuits, 0);
  EXPECT_NEAR(o.towards_device, o.circuits, 1e-6 * o.circuits);
  EXPECT_NEAR(o.from_device, o.circuits, 1e-6 * o.circuits);
}

TEST(TimelineSim, TopoOptForwardedBytesCountOncePerCircuit) {
  const Simulation s = run(training("topoopt"), net::TimelineOptions{});
  expect_bins_add_up(s);
  const OpticalBytes o = optical_bytes(s);
  ASSERT_GT(o.circuits, 0);
  EXPECT_NEAR(o.towards_device, o.circuits, 1e-6 * o.circuits);
  EXPECT_NEAR(o.from_device, o.circuits, 1e-6 * o.circuits);
}

TEST(TimelineSim, PacketBackendCountsItsPacketsAndItsFluidPart) {
  const Simulation s =
      run("cluster: {servers: 8, link: 400G}\nfabric: {kind: mfabric, region: 4, alpha: 2}\n"
          "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: "
          "4, micro_batch: 2, "
          "seq: 16}\nsimulation: {backend: packet, mtu: 64KiB}\n",
          net::TimelineOptions{});
  expect_bins_add_up(s);
  const OpticalBytes o = optical_bytes(s);
  ASSERT_GT(o.circuits, 0);
  EXPECT_NEAR(o.towards_device, o.circuits, 1e-6 * o.circuits);
}

TEST(TimelineSim, FixedBinsBeyondTheBoundStopTheRun) {
  // 1 ns bins over a run of seconds: far beyond 50M cells.
  EXPECT_THROW(
      run(training("{kind: fat-tree, radix: 16}"), net::TimelineOptions{Time::nanoseconds(1)}),
      net::TimelineTooFine);
}

}  // namespace
}  // namespace mfabric::sim
