// RegionController with failed OCS ports (fail_port) and pinned relay circuits (pin_relay).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/region_controller.h"
#include "core/error.h"

namespace mfabric::control {
namespace region_controller_failures_test {
namespace {

using Circuits = std::vector<PortCircuit>;

// A clock and an OCS that record every call and hold the set of circuits up, failing the test
// when a circuit is torn down that is not up or set up when it already is (what the simulator's
// backend could not survive).
class RecordingSwitch final : public CircuitSwitch {
 public:
  Time now() const override { return now_; }
  void at(Time t, std::function<void()> fn) override { events_.emplace(t, std::move(fn)); }
  void tear_down(int, const Circuits& c) override {
    torn.push_back(c);
    for (const PortCircuit& p : c) {
      if (up.erase(p) == 0) ADD_FAILURE() << "tore down a circuit that is not up: " << text(p);
    }
  }
  void set_up(int, const Circuits& c) override {
    set.push_back(c);
    set_at.push_back(now_);
    for (const PortCircuit& p : c) {
      if (!up.insert(p).second) ADD_FAILURE() << "set up a circuit already up: " << text(p);
    }
  }
  void reconfigured(int, Time since) override { reconfigured_at.emplace_back(since, now_); }
  void run() {
    while (!events_.empty()) {
      auto it = events_.begin();
      now_ = it->first;
      auto fn = std::move(it->second);
      events_.erase(it);
      fn();
    }
  }
  static std::string text(const PortCircuit& p) {
    return std::to_string(p.server) + "." + std::to_string(p.nic) + "-" +
           std::to_string(p.peer_server) + "." + std::to_string(p.peer_nic);
  }
  bool ever_torn(const PortCircuit& p) const {
    for (const Circuits& call : torn) {
      for (const PortCircuit& c : call) {
        if (c == p) return true;
      }
    }
    return false;
  }
  // Every circuit ever set up touches none of these NICs.
  bool never_set_up_on(int server, int nic) const {
    for (const Circuits& call : set) {
      for (const PortCircuit& c : call) {
        if ((c.server == server && c.nic == nic) || (c.peer_server == server && c.peer_nic == nic))
          return false;
      }
    }
    return true;
  }

  std::vector<Circuits> torn;
  std::vector<Circuits> set;
  std::vector<Time> set_at;
  std::vector<std::pair<Time, Time>> reconfigured_at;  // reported reconfigurations: (start, end)
  std::set<PortCircuit> up;

 private:
  Time now_;
  std::multimap<Time, std::function<void()>> events_;
};

// 4 servers of 4 NICs, the last alpha = 2 on the OCS (NICs 2 and 3), one NUMA node: the mapping
// takes the lowest free OCS NIC, so every NIC below is derived by hand.
struct Region {
  explicit Region(Time delay = Time::milliseconds(25))
      : rc{0, ServerNics{4, 2, 1}, region_limits(2, 4, Rate::gbps(400), 4), *planner, delay, ocs} {}
  RecordingSwitch ocs;
  std::unique_ptr<Planner> planner = make_planner("greedy");
  RegionController rc;

  // Requests a plan and runs the clock until it is up.
  void plan_now(std::int64_t key, const ServerDemand& demand) {
    rc.request(
        key, [demand] { return demand; }, [] {});
    ocs.run();
  }
};

// Two pairs with demand. Greedy with alpha 2: (a, b) and (c, d) get two circuits each.
ServerDemand two_pairs(int a, int b, int c, int d) {
  ServerDemand demand(4);
  demand.add(a, b, 1000);
  demand.add(c, d, 1000);
  return demand;
}

const std::vector<bool> kAllRelay{true, true, true, true};

TEST(RegionControllerFailures, FailingAPortInForceTearsExactlyItsCircuitDown) {
  Region r;
  r.plan_now(1, two_pairs(0, 1, 2, 3));
  // (0, 1) x2 on NICs 2 and 3 at both ends, (2, 3) x2 likewise.
  EXPECT_EQ(r.ocs.up,
            (std::set<PortCircuit>{{0, 2, 1, 2}, {0, 3, 1, 3}, {2, 2, 3, 2}, {2, 3, 3, 3}}));
  r.rc.fail_port(0, 3);
  ASSERT_EQ(r.ocs.torn.size(), 1u);
  EXPECT_EQ(r.ocs.torn[0], (Circuits{{0, 3, 1, 3}}));
  EXPECT_EQ(r.rc.plan().circuits_between(0, 1), 1);
  EXPECT_EQ(r.rc.plan().circuits_between(2, 3), 2);
  EXPECT_EQ(r.rc.plan().ports_used, (std::vector<int>{1, 1, 2, 2}));
  EXPECT_EQ(r.rc.stats().failed_ports, 1);
  EXPECT_EQ(r.rc.stats().circuits_torn_down, 1);
  EXPECT_EQ(r.rc.failed_ports(), (std::set<std::pair<int, int>>{{0, 3}}));
  // Failing it again does nothing.
  r.rc.fail_port(0, 3);
  EXPECT_EQ(r.ocs.torn.size(), 1u);
  EXPECT_EQ(r.rc.stats().failed_ports, 1);

  // The same demand under a new key now plans one circuit at server 0 (ports {1, 2, 2, 2}):
  // (0, 1) x1, (2, 3) x2, which is what is up: nothing switches.
  r.plan_now(2, two_pairs(0, 1, 2, 3));
  EXPECT_EQ(r.rc.stats().unchanged, 1);
  EXPECT_EQ(r.ocs.torn.size(), 1u);

  // A new matching: (0, 2) x1 (server 0 has one port), (1, 3) x2; server 0's NIC 3 stays dark
  // and the failed circuit is never torn down again.
  r.plan_now(3, two_pairs(0, 2, 1, 3));
  EXPECT_EQ(r.rc.plan().circuits_between(0, 2), 1);
  EXPECT_EQ(r.rc.plan().circuits_between(1, 3), 2);
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{0, 2, 2, 2}, {1, 2, 3, 2}, {1, 3, 3, 3}}));
  // NIC 3 of server 0 was in the first set-up (before the failure), never after.
  EXPECT_FALSE(r.ocs.never_set_up_on(0, 3));
  for (std::size_t k = 1; k < r.ocs.set.size(); ++k) {
    for (const PortCircuit& c : r.ocs.set[k])
      EXPECT_FALSE(c.server == 0 && c.nic == 3) << RecordingSwitch::text(c);
  }
  int torn_failed = 0;
  for (const Circuits& call : r.ocs.torn) {
    for (const PortCircuit& c : call)
      torn_failed += c == PortCircuit{0, 3, 1, 3};
  }
  EXPECT_EQ(torn_failed, 1);
}

TEST(RegionControllerFailures, FailingAPortWhileItsCircuitComesUpDropsIt) {
  Region r;
  r.rc.request(
      1, [] { return two_pairs(0, 1, 2, 3); }, [] {});
  ASSERT_TRUE(r.rc.reconfiguring());
  r.rc.fail_port(1, 3);  // {0, 3, 1, 3} is coming up
  EXPECT_TRUE(r.ocs.torn.empty());
  EXPECT_EQ(r.rc.plan().circuits_between(0, 1), 1);
  r.ocs.run();
  EXPECT_FALSE(r.rc.reconfiguring());
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{0, 2, 1, 2}, {2, 2, 3, 2}, {2, 3, 3, 3}}));
  EXPECT_TRUE(r.ocs.torn.empty());
  EXPECT_EQ(r.rc.stats().circuits_set_up, 3);
  EXPECT_EQ(r.rc.stats().circuits_torn_down, 0);
}

TEST(RegionControllerFailures, FailingAKeptCircuitDuringAReconfigurationTearsItAtOnce) {
  Region r;
  r.plan_now(1, two_pairs(0, 1, 2, 3));
  // Plan 2, for (0, 1) alone, keeps its two circuits; the two (2, 3) circuits go.
  ServerDemand only01(4);
  only01.add(0, 1, 1000);
  r.rc.request(
      2, [only01] { return only01; }, [] {});
  ASSERT_TRUE(r.rc.reconfiguring());
  ASSERT_EQ(r.ocs.torn.size(), 1u);  // the (2, 3) circuits
  r.rc.fail_port(0, 2);              // {0, 2, 1, 2} is kept and up
  ASSERT_EQ(r.ocs.torn.size(), 2u);
  EXPECT_EQ(r.ocs.torn[1], (Circuits{{0, 2, 1, 2}}));
  // A port whose circuit the reconfiguration already tore down: nothing more to tear down.
  r.rc.fail_port(2, 2);
  EXPECT_EQ(r.ocs.torn.size(), 2u);
  r.ocs.run();
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{0, 3, 1, 3}}));
  EXPECT_EQ(r.rc.stats().failed_ports, 2);
}

TEST(RegionControllerFailures, PlansGiveAServerWithFailedPortsFewerCircuits) {
  Region r;
  ServerDemand only01(4);
  only01.add(0, 1, 1000);
  r.plan_now(1, only01);
  EXPECT_EQ(r.rc.plan().circuits_between(0, 1), 2);
  r.rc.fail_port(1, 2);  // tears {0, 2, 1, 2} down
  r.rc.fail_port(0, 3);  // tears {0, 3, 1, 3} down
  EXPECT_EQ(r.rc.plan().total_circuits(), 0);
  EXPECT_TRUE(r.ocs.up.empty());
  // Server 0 only has NIC 2, server 1 only NIC 3: one circuit, on those.
  r.plan_now(2, only01);
  EXPECT_EQ(r.rc.plan().circuits_between(0, 1), 1);
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{0, 2, 1, 3}}));
  // Every port of server 0 failed: no circuit at all.
  r.rc.fail_port(0, 2);
  r.plan_now(3, only01);
  EXPECT_EQ(r.rc.plan().ports_used[0], 0);
  EXPECT_TRUE(r.ocs.up.empty());
}

TEST(RegionControllerFailures, PinPicksTheLowestPeerAndPortsAndComesUpAfterTheDelay) {
  Region r;
  r.plan_now(1, two_pairs(0, 1, 2, 3));  // up at 25 ms
  const std::size_t set_calls = r.ocs.set.size();
  // Server 2 lost its EPS NICs. Server 0 cannot relay; server 1 can: the peer. Lowest working
  // unpinned OCS NICs: 2 at server 2, 2 at server 1.
  const std::optional<PortCircuit> pin = r.rc.pin_relay(2, {false, true, false, true});
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(*pin, (PortCircuit{1, 2, 2, 2}));
  EXPECT_EQ(r.rc.pinned(), (Circuits{{1, 2, 2, 2}}));
  // The planned circuits on those NICs go at once: (2, 3) on NIC 2 of server 2, (0, 1) on NIC 2
  // of server 1.
  ASSERT_EQ(r.ocs.torn.size(), 2u);
  EXPECT_EQ(r.ocs.torn[0], (Circuits{{2, 2, 3, 2}}));
  EXPECT_EQ(r.ocs.torn[1], (Circuits{{0, 2, 1, 2}}));
  EXPECT_EQ(r.rc.plan().ports_used, (std::vector<int>{1, 1, 1, 1}));
  // Not up before the delay; up 25 ms after the pin.
  EXPECT_EQ(r.ocs.set.size(), set_calls);
  r.ocs.run();
  ASSERT_EQ(r.ocs.set.size(), set_calls + 1);
  EXPECT_EQ(r.ocs.set.back(), (Circuits{{1, 2, 2, 2}}));
  EXPECT_EQ(r.ocs.set_at.back(), Time::milliseconds(50));
  EXPECT_TRUE(r.ocs.up.contains(PortCircuit{1, 2, 2, 2}));
  EXPECT_EQ(r.rc.stats().relays_pinned, 1);
  // Putting the pin up was a reconfiguration of its own, reported after the plan's.
  const std::vector<std::pair<Time, Time>> reconfigured{
      {Time::zero(), Time::milliseconds(25)}, {Time::milliseconds(25), Time::milliseconds(50)}};
  EXPECT_EQ(r.ocs.reconfigured_at, reconfigured);
  EXPECT_EQ(r.rc.stats().reconfigurations, 2);
  // Pinning it again returns the same circuit and switches nothing.
  EXPECT_EQ(r.rc.pin_relay(2, kAllRelay), pin);
  EXPECT_EQ(r.ocs.set.size(), set_calls + 1);
  EXPECT_EQ(r.rc.stats().relays_pinned, 1);

  // Later plans: servers 1 and 2 have one port each, and the pinned circuit stays up.
  ServerDemand heavy12(4);
  heavy12.add(1, 2, 5000);
  heavy12.add(0, 3, 1000);
  heavy12.add(0, 2, 500);
  r.plan_now(2, heavy12);
  r.plan_now(3, two_pairs(0, 2, 1, 3));
  r.plan_now(4, two_pairs(1, 2, 0, 3));
  EXPECT_EQ(r.rc.stats().reconfigurations, 5);  // 4 plans and the pin
  EXPECT_FALSE(r.ocs.ever_torn(*pin));
  EXPECT_TRUE(r.ocs.up.contains(*pin));
  for (std::size_t k = set_calls + 1; k < r.ocs.set.size(); ++k) {
    for (const PortCircuit& c : r.ocs.set[k]) {
      EXPECT_FALSE(c.server == 1 && c.nic == 2) << RecordingSwitch::text(c);
      EXPECT_FALSE(c.peer_server == 1 && c.peer_nic == 2) << RecordingSwitch::text(c);
      EXPECT_FALSE(c.peer_server == 2 && c.peer_nic == 2) << RecordingSwitch::text(c);
      EXPECT_FALSE(c.server == 2 && c.nic == 2) << RecordingSwitch::text(c);
    }
  }
  for (int s = 0; s < 4; ++s) {
    EXPECT_LE(r.rc.plan().ports_used[static_cast<std::size_t>(s)], s == 1 || s == 2 ? 1 : 2);
  }
  // (1, 2) x1 on the remaining NIC 3 at both ends, beside the pin.
  EXPECT_EQ(r.rc.plan().circuits_between(1, 2), 1);
  EXPECT_TRUE(r.ocs.up.contains(PortCircuit{1, 3, 2, 3}));
}

TEST(RegionControllerFailures, PinSkipsPeersWithoutAWorkingPort) {
  Region r;
  r.rc.fail_port(0, 2);
  r.rc.fail_port(0, 3);
  r.rc.fail_port(1, 2);
  // Server 0 has no working port; server 1 has NIC 3.
  const auto pin = r.rc.pin_relay(3, kAllRelay);
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(*pin, (PortCircuit{1, 3, 3, 2}));
  // The server itself without a working port, or no peer that can relay: nothing to pin.
  EXPECT_EQ(r.rc.pin_relay(0, kAllRelay), std::nullopt);
  EXPECT_EQ(r.rc.pin_relay(2, {true, false, false, false}), std::nullopt);
  // A pinned server (3, without EPS) never relays, even when can_relay says so.
  EXPECT_EQ(r.rc.pin_relay(2, {false, false, false, true}), std::nullopt);
  r.ocs.run();
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{1, 3, 3, 2}}));
  // Server 1 has no port left for plans (one failed, one pinned); server 3 one.
  r.plan_now(1, two_pairs(1, 2, 2, 3));
  EXPECT_EQ(r.rc.plan().ports_used[1], 0);
  EXPECT_EQ(r.rc.plan().circuits_between(2, 3), 1);
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{1, 3, 3, 2}, {2, 2, 3, 3}}));
}

TEST(RegionControllerFailures, ARelayWithAnotherFreePortRelaysAgain) {
  Region r;
  const auto first = r.rc.pin_relay(1, kAllRelay);
  const auto second = r.rc.pin_relay(2, kAllRelay);
  ASSERT_TRUE(first.has_value() && second.has_value());
  // Server 0 relays for both, on its NICs 2 and 3.
  EXPECT_EQ(*first, (PortCircuit{0, 2, 1, 2}));
  EXPECT_EQ(*second, (PortCircuit{0, 3, 2, 2}));
  // Server 3: server 0 has no port left and servers 1 and 2 have no EPS: no relay.
  EXPECT_EQ(r.rc.pin_relay(3, kAllRelay), std::nullopt);
  EXPECT_EQ(r.rc.stats().relays_pinned, 2);
}

TEST(RegionControllerFailures, PinWithoutDelayComesUpAtOnceAndKeepsAnIdenticalCircuitUp) {
  Region r(Time::zero());
  r.plan_now(1, two_pairs(0, 1, 2, 3));
  const std::size_t set_calls = r.ocs.set.size();
  // Server 0 pins to server 1 on NIC 2 at both ends: the planned {0, 2, 1, 2}, already up, is
  // kept up as the pin: nothing is torn down or set up.
  const auto pin = r.rc.pin_relay(0, {false, true, false, false});
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(*pin, (PortCircuit{0, 2, 1, 2}));
  EXPECT_TRUE(r.ocs.torn.empty());
  EXPECT_EQ(r.ocs.set.size(), set_calls);
  EXPECT_EQ(r.rc.plan().circuits_between(0, 1), 1);
  // Server 3 pins to server 1: NIC 2 at server 3, NIC 3 at server 1 (its NIC 2 is pinned). The
  // planned circuits on them, {2, 2, 3, 2} and {0, 3, 1, 3}, go; with a zero delay the pin is
  // set up at once, within the call.
  const auto other = r.rc.pin_relay(3, {false, true, false, false});
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(*other, (PortCircuit{1, 3, 3, 2}));
  EXPECT_EQ(r.ocs.torn, (std::vector<Circuits>{{{2, 2, 3, 2}}, {{0, 3, 1, 3}}}));
  ASSERT_EQ(r.ocs.set.size(), set_calls + 1);
  EXPECT_EQ(r.ocs.set.back(), (Circuits{{1, 3, 3, 2}}));
  EXPECT_EQ(r.ocs.up, (std::set<PortCircuit>{{0, 2, 1, 2}, {1, 3, 3, 2}, {2, 3, 3, 3}}));
  EXPECT_EQ(r.rc.plan().total_circuits(), 1);  // (2, 3) on NIC 3
}

TEST(RegionControllerFailures, PinDuringAReconfigurationDropsTheCircuitsComingUpOnItsPorts) {
  Region r;
  r.rc.request(
      1, [] { return two_pairs(0, 1, 2, 3); }, [] {});
  ASSERT_TRUE(r.rc.reconfiguring());
  // Server 3 pins to server 2 (NIC 2 at both ends): {2, 2, 3, 2} was coming up, it never will.
  const auto pin = r.rc.pin_relay(3, {false, false, true, false});
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(*pin, (PortCircuit{2, 2, 3, 2}));
  EXPECT_TRUE(r.ocs.torn.empty());
  r.ocs.run();
  // The reconfiguration's circuits and the pin, each set up once (the switch checks).
  EXPECT_EQ(r.ocs.up,
            (std::set<PortCircuit>{{0, 2, 1, 2}, {0, 3, 1, 3}, {2, 3, 3, 3}, {2, 2, 3, 2}}));
  EXPECT_EQ(r.rc.plan().circuits_between(2, 3), 1);
  EXPECT_FALSE(r.rc.reconfiguring());
}

TEST(RegionControllerFailures, FailingAPinnedPortUnpinsAndARepinMoves) {
  Region r;
  const auto pin = r.rc.pin_relay(2, kAllRelay);  // peer 0, NIC 2 at both ends
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(*pin, (PortCircuit{0, 2, 2, 2}));
  // Failing it before it is up: it never comes up.
  r.rc.fail_port(0, 2);
  EXPECT_TRUE(r.rc.pinned().empty());
  r.ocs.run();
  EXPECT_TRUE(r.ocs.up.empty());
  EXPECT_TRUE(r.ocs.torn.empty());
  // Pinned again: server 0's NIC 3 now.
  const auto again = r.rc.pin_relay(2, kAllRelay);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, (PortCircuit{0, 3, 2, 2}));
  r.ocs.run();
  EXPECT_TRUE(r.ocs.up.contains(*again));
  // Failing a pinned port once up tears the pin down.
  r.rc.fail_port(2, 2);
  EXPECT_EQ(r.ocs.torn.back(), (Circuits{*again}));
  EXPECT_TRUE(r.rc.pinned().empty());
  EXPECT_TRUE(r.ocs.up.empty());
}

TEST(RegionControllerFailures, BadIndicesAreErrors) {
  Region r;
  try {
    r.rc.fail_port(0, 1);  // an EPS NIC
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "nic");
  }
  EXPECT_THROW(r.rc.fail_port(0, 4), Error);   // no such NIC
  EXPECT_THROW(r.rc.fail_port(-1, 2), Error);  // no such server
  r.plan_now(1, two_pairs(0, 1, 2, 3));
  EXPECT_THROW(r.rc.fail_port(4, 2), Error);  // beyond the region's 4 servers
  EXPECT_THROW(r.rc.pin_relay(4, kAllRelay), Error);
  EXPECT_THROW(r.rc.pin_relay(0, {true, true}), Error);  // one entry per server
  EXPECT_EQ(r.rc.stats().failed_ports, 0);
  EXPECT_TRUE(r.ocs.torn.empty());
}

}  // namespace
}  // namespace region_controller_failures_test
}  // namespace mfabric::control
