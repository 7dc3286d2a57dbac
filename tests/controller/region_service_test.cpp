#include "controller/region_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <set>
#include <thread>

#include "controller/ocs_alarm_listener.h"
#include "core/error.h"
#include "ocs/ocs_emulator_process.h"
#include "ocs/tl1_test_client.h"
#include "scratch_dir.h"

namespace mfabric::controller {
namespace {

using mfabric::testing::OcsEmulatorChild;
using mfabric::testing::Tl1TestClient;
using PortPairs = std::set<std::pair<int, int>>;
using tl1::parse_patches;
using tl1::Tl1AutonomousMessage;
using tl1::Tl1Client;
using tl1::Tl1ClientOptions;
using tl1::Tl1Completion;
using tl1::Tl1Credentials;

// Four servers of four NICs, two of them on the OCS: device ports 1-8 of a 16-port OCS.
constexpr const char* kRegions =
    "regions:\n"
    "  - name: rack0\n"
    "    servers: 4\n"
    "    nics: 4\n"
    "    alpha: 2\n"
    "    first_port: 1\n";

// Two heavy pairs and a light one: the heavy pairs get both circuits of their servers.
control::ServerDemand two_pairs() {
  control::ServerDemand demand(4);
  demand.add(0, 1, 1'000'000'000);
  demand.add(2, 3, 1'000'000'000);
  return demand;
}

// The other pairing: every circuit of two_pairs() goes.
control::ServerDemand crossed_pairs() {
  control::ServerDemand demand(4);
  demand.add(0, 2, 1'000'000'000);
  demand.add(1, 3, 1'000'000'000);
  return demand;
}

PortPairs held_by(const std::string& address) {
  Tl1TestClient client(address);
  client.log_in();
  const auto patches = parse_patches(client.ask("RTRV-PATCH:::2;"));
  return {patches.begin(), patches.end()};
}

void fail_port(const std::string& address, int port) {
  Tl1TestClient client(address);
  client.log_in();
  EXPECT_EQ(client.ask("OPR-PORT-FAIL::" + std::to_string(port) + ":2:;").completion,
            Tl1Completion::Compld);
}

class RegionServiceTest : public mfabric::testing::ScratchDirTest {
 protected:
  RegionServiceTest() : ScratchDirTest("region_service") {}

  std::unique_ptr<RegionControllerService> controller(const std::string& address,
                                                      Tl1ClientOptions options = {},
                                                      std::size_t tl1_window = kDefaultTl1Window) {
    auto ocs = std::make_unique<Tl1Client>(address, Tl1Credentials{"admin", "admin"}, options);
    return std::make_unique<RegionControllerService>(parse_regions(kRegions, "regions"),
                                                     std::move(ocs), tl1_window);
  }
  // A region holding two_pairs()'s circuits, then a submit of crossed_pairs() against the
  // emulator restarted with 1.5 s a switch and killed (SIGKILL) `kill_after` into it; the
  // emulator stays down. The controller sends `tl1_window` commands ahead.
  struct KilledSubmit {
    std::string address;
    std::unique_ptr<RegionControllerService> service;
    std::string outcome;  // "completed" or the submit's error
  };
  KilledSubmit submit_killed_after(std::chrono::milliseconds kill_after, std::size_t tl1_window) {
    auto emulator = std::make_unique<OcsEmulatorChild>(state(), "10ms", 16);
    KilledSubmit killed;
    killed.address = emulator->address();
    Tl1ClientOptions options;
    options.max_attempts = 2;
    options.retry_delay = Time::milliseconds(50);
    options.command_timeout = Time::milliseconds(3000);
    killed.service = controller(killed.address, options, tl1_window);
    killed.service->start();
    EXPECT_EQ(killed.service->submit("rack0", 0, 0, two_pairs()).circuits.size(), 4u);
    emulator->stop(SIGTERM);

    emulator = std::make_unique<OcsEmulatorChild>(state(), "1500ms", 16, killed.address);
    auto submitted = std::async(std::launch::async, [&] {
      try {
        killed.service->submit("rack0", 1, 0, crossed_pairs());
        return std::string("completed");
      } catch (const Error& e) {
        return std::string(e.what());
      }
    });
    std::this_thread::sleep_for(kill_after);
    emulator->stop(SIGKILL);
    if (submitted.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      ADD_FAILURE() << "the submit did not end after the OCS was killed";
      std::abort();  // the future's thread holds references to this frame
    }
    killed.outcome = submitted.get();
    return killed;
  }
  // rack0's circuits once their generation is no longer `generation`, polled every 10 ms for at
  // most `polls` polls (the last read when it did not change).
  static RegionCircuits circuits_after(RegionControllerService& service, std::int64_t generation,
                                       int polls) {
    RegionCircuits now = service.circuits("rack0");
    for (int k = 0; k < polls && now.generation == generation; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      now = service.circuits("rack0");
    }
    return now;
  }
  static PortPairs reported(const RegionControllerService& service,
                            const RegionCircuits& in_force) {
    PortPairs pairs;
    for (const control::PortCircuit& circuit : in_force.circuits) {
      const auto [a, b] = service.device_ports(in_force.region, circuit);
      pairs.insert({std::min(a, b), std::max(a, b)});
    }
    return pairs;
  }
  std::string state() const { return (dir_ / "ocs.state").string(); }
};

TEST_F(RegionServiceTest, ASubmitPutsThePlanUpAndANewControllerReadsItBack) {
  OcsEmulatorChild emulator(state(), "5ms", 16);
  {
    Tl1TestClient client(emulator.address());
    client.log_in();
    // Not the region's: left alone, never reported.
    client.send("ENT-PATCH::12,14:2:;");
    client.receive();  // IP 2
    EXPECT_EQ(client.response().completion, Tl1Completion::Compld);
  }
  auto service = controller(emulator.address());
  service->start();
  EXPECT_EQ(service->circuits("rack0").generation, 1);
  EXPECT_TRUE(service->circuits("rack0").circuits.empty());

  const RegionCircuits first = service->submit("rack0", 3, 1, two_pairs());
  EXPECT_EQ(first.generation, 2);
  EXPECT_EQ(first.layer, 3);
  EXPECT_EQ(first.micro_batch, 1);
  EXPECT_EQ(first.circuits.size(), 4u);
  PortPairs expected = reported(*service, first);
  expected.insert({12, 14});
  EXPECT_EQ(held_by(emulator.address()), expected);

  // The same plan again switches nothing and keeps the generation.
  EXPECT_EQ(service->submit("rack0", 3, 2, two_pairs()).generation, 2);
  // Every circuit changes: one generation for the set without the circuits being removed (what
  // readers see while the DLT-PATCHes go), one for the new plan.
  const RegionCircuits crossed = service->submit("rack0", 4, 1, crossed_pairs());
  EXPECT_EQ(crossed.generation, 4);
  expected = reported(*service, crossed);
  expected.insert({12, 14});
  EXPECT_EQ(held_by(emulator.address()), expected);
  EXPECT_EQ(service->health().commands, 4 + 8);

  auto restarted = controller(emulator.address());
  restarted->start();
  const RegionCircuits read_back = restarted->circuits("rack0");
  EXPECT_EQ(read_back.circuits, crossed.circuits);
  EXPECT_EQ(read_back.layer, -1);
}

// With the alarm listener (a second session), a port that fails is read back at once: its patch
// is removed and the circuits reported drop it before any submit.
TEST_F(RegionServiceTest, AnAlarmMakesTheControllerReadTheOcsBackAtOnce) {
  OcsEmulatorChild emulator(state(), "5ms", 16);
  auto service = controller(emulator.address());
  service->start();
  OcsAlarmListener listener(
      std::make_unique<Tl1Client>(emulator.address(), Tl1Credentials{"admin", "admin"}),
      [&](const Tl1AutonomousMessage&) { service->ocs_alarm(); }, Time::milliseconds(50),
      Time::milliseconds(50));
  const RegionCircuits first = service->submit("rack0", 0, 0, two_pairs());
  ASSERT_EQ(first.circuits.size(), 4u);
  // Let the listener log in before the failure (alarms go to logged-in sessions).
  for (int k = 0; k < 250 && !listener.listening(); ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fail_port(emulator.address(), 1);
  const RegionCircuits now = circuits_after(*service, first.generation, 300);
  EXPECT_GT(now.generation, first.generation);
  EXPECT_EQ(now.circuits.size(), 3u);
  EXPECT_EQ(reported(*service, now), held_by(emulator.address()));
  for (const auto& [a, b] : held_by(emulator.address())) {
    EXPECT_NE(a, 1);
    EXPECT_NE(b, 1);
  }
  EXPECT_GE(service->health().alarms, 1);
  EXPECT_GE(listener.alarms(), 1);
}

// GetCircuits does not wait for a submit under way: while the mirrors of a new plan move, it
// answers at once with what the OCS certainly holds (the circuits being removed already gone).
TEST_F(RegionServiceTest, CircuitsAreAnsweredWhileASubmitIsUnderWay) {
  OcsEmulatorChild emulator(state(), "400ms", 16);
  auto service = controller(emulator.address());
  service->start();
  const RegionCircuits first = service->submit("rack0", 0, 0, two_pairs());
  ASSERT_EQ(first.circuits.size(), 4u);
  auto submitted = std::async(std::launch::async,
                              [&] { return service->submit("rack0", 1, 0, crossed_pairs()); });
  // Until the submit has sent its disconnects (well within the first 400 ms round).
  const RegionCircuits during = circuits_after(*service, first.generation, 30);
  // The submit needs two rounds of 400 ms of switching: it is still under way.
  EXPECT_EQ(submitted.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  EXPECT_TRUE(during.circuits.empty());
  EXPECT_EQ(during.generation, first.generation + 1);
  const RegionCircuits after = submitted.get();
  EXPECT_EQ(after.circuits.size(), 4u);
  EXPECT_EQ(service->circuits("rack0").circuits, after.circuits);
  EXPECT_GT(after.generation, during.generation);
}

// A port that fails while the disconnects of a plan are under way (no alarm session here): its
// ENT-PATCH of the next round is refused (SROF) while the others complete; the submit reads the
// OCS back and finishes the plan around the port (rolls forward), and succeeds.
TEST_F(RegionServiceTest, AChangeRefusedInAPipelinedRoundIsRolledForwardAroundIt) {
  OcsEmulatorChild emulator(state(), "400ms", 16);
  auto service = controller(emulator.address());
  service->start();
  const RegionCircuits first = service->submit("rack0", 0, 0, two_pairs());
  ASSERT_EQ(first.circuits.size(), 4u);
  const std::int64_t read_backs = service->health().reconciliations;
  auto submitted = std::async(std::launch::async,
                              [&] { return service->submit("rack0", 1, 0, crossed_pairs()); });
  circuits_after(*service, first.generation, 30);  // the disconnects are under way
  fail_port(emulator.address(), 1);  // server 0's first OCS NIC, wanted by the crossed plan
  const RegionCircuits after = submitted.get();
  EXPECT_EQ(after.layer, 1);
  EXPECT_EQ(after.circuits.size(), 3u);
  for (const control::PortCircuit& circuit : after.circuits)
    EXPECT_FALSE(circuit.server == 0 && circuit.nic == 2);
  EXPECT_EQ(reported(*service, after), held_by(emulator.address()));
  EXPECT_EQ(service->health().unusable_ports, std::vector<int>{1});
  // The submit's own read-back, then the one after the refusal.
  EXPECT_EQ(service->health().reconciliations, read_backs + 2);
}

TEST_F(RegionServiceTest, FailedPortsArePlannedAround) {
  OcsEmulatorChild emulator(state(), "5ms", 16);
  auto service = controller(emulator.address());
  service->start();
  const RegionCircuits first = service->submit("rack0", 0, 0, two_pairs());
  ASSERT_EQ(first.circuits.size(), 4u);
  // Server 0's first OCS NIC (device port 1) fails under its circuit.
  fail_port(emulator.address(), 1);
  const RegionCircuits after = service->submit("rack0", 1, 0, two_pairs());
  for (const control::PortCircuit& circuit : after.circuits) {
    EXPECT_FALSE(circuit.server == 0 && circuit.nic == 2);
  }
  EXPECT_EQ(after.circuits.size(), 3u);
  for (const auto& [a, b] : held_by(emulator.address())) {
    EXPECT_NE(a, 1);
    EXPECT_NE(b, 1);
  }
  EXPECT_EQ(reported(*service, after), held_by(emulator.address()));
  EXPECT_EQ(service->health().unusable_ports, std::vector<int>{1});
}

// The OCS killed with SIGKILL while its mirrors move (a long switching time), then restarted on
// the same state file and address: the controller never reports a circuit the OCS does not hold,
// and the next submit completes the plan. One command at a time (--tl1-window 1): the kill lands
// between the commands of one round.
TEST_F(RegionServiceTest, AnOcsKilledMidReconfigurationIsReadBackAndCompleted) {
  // The four disconnects take 1.5 s each: kill during the first ones.
  const auto [address, service, outcome] = submit_killed_after(std::chrono::milliseconds(2000), 1);
  EXPECT_NE(outcome.find("reconfiguration incomplete"), std::string::npos) << outcome;
  EXPECT_FALSE(service->health().ocs_reachable);
  // Unreachable: nothing is vouched for.
  EXPECT_THROW(service->circuits("rack0"), Error);

  auto emulator = std::make_unique<OcsEmulatorChild>(state(), "10ms", 16, address);
  const RegionCircuits read_back = service->circuits("rack0");
  const PortPairs held = held_by(address);
  EXPECT_EQ(reported(*service, read_back), held);
  EXPECT_TRUE(service->health().ocs_reachable);
  EXPECT_LT(held.size(), 4u);  // part of the old plan went before the kill
  EXPECT_EQ(read_back.layer, -1);

  const RegionCircuits completed = service->submit("rack0", 1, 0, crossed_pairs());
  EXPECT_EQ(completed.circuits.size(), 4u);
  EXPECT_GT(completed.generation, read_back.generation);
  EXPECT_EQ(reported(*service, completed), held_by(address));
  EXPECT_TRUE(service->health().ocs_reachable);
}

// The same with the changes pipelined (the default window): the four disconnects are accepted
// at once and the kill lands while their mirrors move, before any connect was sent; read back,
// the region holds what the OCS journaled, and the next submit completes the plan.
TEST_F(RegionServiceTest, AnOcsKilledDuringPipelinedChangesIsReadBackAndCompleted) {
  const auto [address, service, outcome] =
      submit_killed_after(std::chrono::milliseconds(750), kDefaultTl1Window);
  EXPECT_NE(outcome.find("reconfiguration incomplete"), std::string::npos) << outcome;
  EXPECT_THROW(service->circuits("rack0"), Error);

  auto emulator = std::make_unique<OcsEmulatorChild>(state(), "10ms", 16, address);
  const RegionCircuits read_back = service->circuits("rack0");
  const PortPairs held = held_by(address);
  EXPECT_EQ(reported(*service, read_back), held);
  EXPECT_TRUE(held.empty());  // every disconnect was journaled, no connect sent
  const RegionCircuits completed = service->submit("rack0", 1, 0, crossed_pairs());
  EXPECT_EQ(completed.circuits.size(), 4u);
  EXPECT_GT(completed.generation, read_back.generation);
  EXPECT_EQ(reported(*service, completed), held_by(address));
}

TEST_F(RegionServiceTest, BadInputIsOneError) {
  OcsEmulatorChild emulator(state(), "5ms", 16);
  auto service = controller(emulator.address());
  service->start();
  EXPECT_THROW(service->submit("rack9", 0, 0, two_pairs()), Error);
  EXPECT_THROW(service->submit("rack0", 0, 0, control::ServerDemand(5)), Error);
  // A region beyond the OCS's ports.
  auto too_big = std::make_unique<RegionControllerService>(
      parse_regions("regions:\n  - {name: r, servers: 4, nics: 4, alpha: 2, first_port: 10}\n",
                    "regions"),
      std::make_unique<Tl1Client>(emulator.address(), Tl1Credentials{"admin", "admin"}));
  EXPECT_THROW(too_big->start(), Error);
  // No TL1 command may ever be sent with a window of 0.
  EXPECT_THROW(controller(emulator.address(), {}, 0), Error);
}

TEST(RegionsFile, BadRegionsNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"regions: []\n", "regions"},
      {"regions:\n  - {name: a, servers: 2, first_port: 1, colour: red}\n", "regions[0]"},
      {"regions:\n  - {name: 'a b', servers: 2, first_port: 1}\n", "regions[0].name"},
      {"regions:\n  - {name: a, servers: 0, first_port: 1}\n", "regions[0].servers"},
      {"regions:\n  - {name: a, servers: 2, first_port: 1, planner: magic}\n",
       "regions[0].planner"},
      {"regions:\n  - {name: a, servers: 2, first_port: 1}\n  - {name: a, servers: 2, "
       "first_port: 20}\n",
       "regions[1].name"},
      {"regions:\n  - {name: a, servers: 2, first_port: 1}\n  - {name: b, servers: 2, "
       "first_port: 12}\n",
       "regions[1].first_port"},
  };
  for (const auto& [text, field] : cases) {
    try {
      parse_regions(text, "regions.yaml");
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.source(), "regions.yaml") << text;
      EXPECT_EQ(e.field().rfind(field, 0), 0u) << text << ": " << e.what();
    }
  }
  const auto regions = parse_regions(
      "regions:\n  - {name: a, servers: 2, first_port: 1}\n  - {name: b, servers: 2, "
      "first_port: 13, planner: optimal, link: 200G}\n",
      "regions.yaml");
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[1].planner, "optimal");
  EXPECT_EQ(regions[1].ports().first_port, 12);
}

}  // namespace
}  // namespace mfabric::controller
