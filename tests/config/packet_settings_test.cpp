// The packet backend's settings at load (docs/packet.md, "Limits of the settings"): every timer
// and rate of the transport in force between limits drawn from the fabric's links and the packet
// size, settings of another transport refused, and transfers a flow cannot hold found from the
// workload. Each refusal is one Error naming the file, the field, the value and the limit; a
// value just inside each limit loads, and runs.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "config/packet_experiment.h"
#include "core/error.h"
#include "net/toy_transport.h"

namespace mfabric::config {
namespace packet_settings_test {

// The error parsing `simulation` settings gives, if any.
std::optional<Error> refusal(const std::string& simulation, const std::string& bytes = "1MiB") {
  try {
    read_experiment(testing::packet_experiment(simulation, bytes), "exp.yaml");
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// Expects a refusal of `field` whose message holds each of `words`.
void expect_refused(const std::string& simulation, const std::string& field,
                    const std::vector<std::string>& words) {
  const std::optional<Error> e = refusal(simulation);
  ASSERT_TRUE(e.has_value()) << simulation;
  EXPECT_EQ(e->source(), "exp.yaml") << e->what();
  EXPECT_EQ(e->field(), field) << e->what();
  EXPECT_EQ(std::string(e->what()).find('\n'), std::string::npos) << e->what();
  for (const std::string& w : words)
    EXPECT_NE(e->message().find(w), std::string::npos) << "'" << w << "' in: " << e->what();
}

void expect_accepted(const std::string& simulation) {
  const std::optional<Error> e = refusal(simulation);
  EXPECT_FALSE(e.has_value()) << simulation << ": " << (e ? e->what() : "");
}

struct TimerCase {
  std::string settings;  // with $ where the timer's value goes
  std::string field;
  std::string floor;  // as printed
  std::string above;  // a value just above it
};

const std::vector<TimerCase> kTimers = {
    {"transport: dctcp, dctcp: {min_rto: $}", "simulation.dctcp.min_rto", "332.8ns", "333ns"},
    {"transport: roce-dcqcn, roce: {rto: $}", "simulation.roce.rto", "332.8ns", "333ns"},
    {"transport: irn, irn: {rto_low: $, rto_high: $}", "simulation.irn.rto_low", "332.8ns",
     "333ns"},
    {"transport: roce-dcqcn, dcqcn: {alpha_timer: $}", "simulation.dcqcn.alpha_timer", "332.8ns",
     "333ns"},
    {"transport: roce-dcqcn, dcqcn: {rate_timer: $}", "simulation.dcqcn.rate_timer", "332.8ns",
     "333ns"},
    // The ns3-rdma variant halves its rate timer in hyper increase: twice the floor.
    {"transport: roce-dcqcn, dcqcn: {variant: ns3-rdma, rate_timer: $}",
     "simulation.dcqcn.rate_timer", "665.6ns", "666ns"},
    {"transport: irn, dcqcn: {cnp_interval: $}", "simulation.dcqcn.cnp_interval", "332.8ns",
     "333ns"},
};

std::string with_value(std::string settings, const std::string& value) {
  for (std::size_t at = settings.find('$'); at != std::string::npos; at = settings.find('$'))
    settings.replace(at, 1, value);
  return settings;
}

TEST(PacketSettings, EveryTimerIsAtLeastOnePacketOnTheSlowestLink) {
  for (const TimerCase& c : kTimers) {
    SCOPED_TRACE(c.field);
    expect_refused(with_value(c.settings, "1ps"), c.field,
                   {"at least " + c.floor, "4160-byte packet", "100Gbps", "got 1ps"});
    expect_refused(with_value(c.settings, "332ns"), c.field, {"got 332ns"});
    expect_accepted(with_value(c.settings, c.above));
  }
  // cnp_interval 0 is a CNP for every marked packet.
  expect_accepted("transport: roce-dcqcn, dcqcn: {cnp_interval: 0s}");
}

TEST(PacketSettings, EveryTimerIsAtMostAMinute) {
  for (const TimerCase& c : kTimers) {
    SCOPED_TRACE(c.field);
    expect_refused(with_value(c.settings, "61s"), c.field, {"at most 60s", "got 61s"});
    expect_accepted(with_value(c.settings, "60s"));
  }
  expect_refused("transport: irn, irn: {rto_high: 2min}", "simulation.irn.rto_high",
                 {"at most 60s", "got 120s"});
}

TEST(PacketSettings, TheFloorsFollowTheLinkRateAndThePacketSize) {
  // 64 KiB packets (65,600 bytes on the wire) at 100G: 5.248 us.
  expect_refused("transport: roce-dcqcn, mtu: 64KiB, roce: {rto: 5us}", "simulation.roce.rto",
                 {"at least 5.248us", "65600-byte packet"});
  expect_accepted("transport: roce-dcqcn, mtu: 64KiB, roce: {rto: 5.25us}");
  // The defaults are checked too where they are used: at 100 Mb/s a packet takes 332.8 us,
  // longer than DCQCN's 55 us alpha timer; DCTCP does not run DCQCN.
  const std::string slow =
      "cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100Mbps}\n"
      "fabric: fat-tree\nworkload: {collective: all-to-all, bytes: 1MiB, group: all}\n";
  try {
    read_experiment(slow + "simulation: {backend: packet, transport: roce-dcqcn}\n", "exp.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.dcqcn.alpha_timer") << e.what();  // roce.rto's 1 ms passes
    EXPECT_NE(e.message().find("got 55us"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(
      read_experiment(slow + "simulation: {backend: packet, dctcp: {min_rto: 1ms}}\n", "exp.yaml"));
}

TEST(PacketSettings, DcqcnCountsAndRatesAgainstThePacketAndTheLinkRate) {
  // The byte counter: at least one packet on the wire.
  expect_refused("transport: roce-dcqcn, dcqcn: {byte_counter: 4159B}",
                 "simulation.dcqcn.byte_counter", {"4160 bytes", "got 4159"});
  expect_accepted("transport: roce-dcqcn, dcqcn: {byte_counter: 4160B}");
  // min_rate: from 1 Mb/s to the line rate.
  expect_refused("transport: roce-dcqcn, dcqcn: {min_rate: 101G}", "simulation.dcqcn.min_rate",
                 {"100Gbps", "got 101Gbps"});
  expect_refused("transport: irn, dcqcn: {min_rate: 999Kbps}", "simulation.dcqcn.min_rate",
                 {"1Mbps", "got 999Kbps"});
  expect_accepted("transport: roce-dcqcn, dcqcn: {min_rate: 100G}");
  expect_accepted("transport: roce-dcqcn, dcqcn: {min_rate: 1Mbps}");
  // Increase steps: from a millionth of the line rate (100 Kb/s) to the line rate.
  for (const std::string field : {"additive_increase", "hyper_increase"}) {
    SCOPED_TRACE(field);
    expect_refused("transport: roce-dcqcn, dcqcn: {" + field + ": 101G}",
                   "simulation.dcqcn." + field, {"and 100Gbps", "got 101Gbps"});
    expect_refused("transport: roce-dcqcn, dcqcn: {" + field + ": 99Kbps}",
                   "simulation.dcqcn." + field, {"between 100Kbps", "got 99Kbps"});
    expect_refused("transport: roce-dcqcn, dcqcn: {" + field + ": 0G}", "simulation.dcqcn." + field,
                   {"got 0bps"});
    expect_accepted("transport: roce-dcqcn, dcqcn: {" + field + ": 100Kbps}");
    expect_accepted("transport: roce-dcqcn, dcqcn: {" + field + ": 100G}");
  }
}

TEST(PacketSettings, SettingsOfAnotherTransportAreRefused) {
  expect_refused("transport: dctcp, dcqcn: {g: 0.5}", "simulation.dcqcn", {"'dctcp'"});
  expect_refused("dcqcn: {g: 0.5}", "simulation.dcqcn", {"'dctcp'"});  // dctcp by default
  expect_refused("transport: roce-dcqcn, dctcp: {g: 0.5}", "simulation.dctcp", {"'roce-dcqcn'"});
  expect_refused("transport: irn, dctcp: {g: 0.5}", "simulation.dctcp", {"'irn'"});
  expect_refused("transport: dctcp, roce: {rto: 1ms}", "simulation.roce", {"'dctcp'"});
  expect_refused("transport: irn, roce: {rto: 1ms}", "simulation.roce", {"'irn'"});
  expect_refused("transport: dctcp, irn: {rto_low: 200us}", "simulation.irn", {"'dctcp'"});
  expect_refused("transport: roce-dcqcn, irn: {rto_low: 200us}", "simulation.irn",
                 {"'roce-dcqcn'"});
  expect_refused("transport: irn, irn: {dcqcn: false}, dcqcn: {g: 0.5}", "simulation.dcqcn",
                 {"irn.dcqcn is false"});
  // PFC thresholds need PFC, on by default for roce-dcqcn only.
  expect_refused("transport: dctcp, pfc_xoff: 400kB", "simulation.pfc_xoff",
                 {"PFC is off", "'dctcp'"});
  expect_refused("transport: roce-dcqcn, pfc: false, pfc_xon: 100kB", "simulation.pfc_xon",
                 {"PFC is off"});
  expect_accepted("transport: dctcp, pfc: true, pfc_xoff: 200kB, pfc_xon: 100kB");
  expect_accepted("transport: roce-dcqcn, pfc_xoff: 200kB, pfc_xon: 100kB");
  // RED's probability needs RED.
  expect_refused("ecn_pmax: 0.5", "simulation.ecn_pmax", {"ecn_max is 0"});
  expect_accepted("ecn_max: 200kB, ecn_pmax: 0.5");
  // Each transport with its own blocks.
  expect_accepted("transport: dctcp, dctcp: {g: 0.5}");
  expect_accepted("transport: roce-dcqcn, roce: {rto: 2ms}, dcqcn: {g: 0.5}");
  expect_accepted("transport: irn, irn: {rto_low: 200us}, dcqcn: {g: 0.5}");
}

// A transport registered by a test (tests/net/toy_transport.h) is an experiment's like the
// built-in ones: its block is a `simulation:` key, read and checked by the transport, and refused
// for another transport (its runs: tests/sim/packet_settings_sim_test.cpp).
TEST(PacketSettings, ARegisteredTransportReadsItsOwnBlock) {
  net::testing::register_toy_transport();
  const Experiment e =
      read_experiment(testing::packet_experiment("transport: toy, toy: {window: 8}"), "exp.yaml");
  ASSERT_NE(e.packet.transport.get<net::testing::ToySettings>(), nullptr);
  EXPECT_EQ(e.packet.transport.get<net::testing::ToySettings>()->window, 8);
  expect_refused("transport: toy, toy: {window: 0}", "simulation.toy.window", {"got 0"});
  expect_refused("transport: toy, toy: {windw: 2}", "simulation.toy.windw", {"window"});
  expect_refused("transport: dctcp, toy: {window: 2}", "simulation.toy",
                 {"settings of transport toy", "'dctcp'"});
  expect_refused("transport: toy, dctcp: {g: 0.5}", "simulation.dctcp",
                 {"settings of transport dctcp", "'toy'"});
  expect_refused("transport: toy, dcqcn: {g: 0.5}", "simulation.dcqcn",
                 {"DCQCN settings, used by transports roce-dcqcn and irn", "'toy'"});
}

// A micro benchmark's transfers between servers carry at least bytes / GPUs: found at load when
// that is more packets than a flow may have (2^31 - 1). At mtu 64 a flow holds 137,438,953,408
// bytes; four GPUs of an all-to-all send a quarter of `bytes` to each.
TEST(PacketSettings, ATransferAFlowCannotHoldIsFoundAtLoad) {
  const std::int64_t largest = std::int64_t{2147483647} * 64;
  const std::optional<Error> e = refusal("mtu: 64B", std::to_string(4 * largest + 4) + "B");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->source(), "exp.yaml");
  EXPECT_EQ(e->field(), "workload.bytes");
  for (const std::string w : {"simulation.mtu 64 bytes", "2147483648 packets of 64 bytes",
                              "more than a flow may have (2147483647)", "at least 65 bytes"}) {
    EXPECT_NE(e->message().find(w), std::string::npos) << "'" << w << "' in: " << e->what();
  }
  EXPECT_FALSE(refusal("mtu: 64B", std::to_string(4 * largest) + "B").has_value());
  // One collective per server stays inside it: fluid, no packets, any size.
  EXPECT_NO_THROW(read_experiment(
      "cluster: {servers: 2, gpus_per_server: 2, nics_per_server: 1, link: 100G}\n"
      "fabric: fat-tree\nworkload: {collective: all-to-all, bytes: 1024TiB, group: per-server}\n"
      "simulation: {backend: packet, mtu: 64B}\n",
      "exp.yaml"));
}

}  // namespace packet_settings_test
}  // namespace mfabric::config
