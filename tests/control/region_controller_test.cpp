#include "control/region_controller.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mfabric::control {
namespace {

// A clock and an OCS that record what the controller does.
class FakeSwitch final : public CircuitSwitch {
 public:
  Time now() const override { return now_; }
  void at(Time t, std::function<void()> fn) override { events_.emplace(t, std::move(fn)); }
  void tear_down(int, const std::vector<PortCircuit>& c) override {
    torn += static_cast<int>(c.size());
  }
  void set_up(int, const std::vector<PortCircuit>& c) override { up += static_cast<int>(c.size()); }
  void reconfigured(int, Time since) override { spans.emplace_back(since, now_); }
  // Runs the scheduled events in time order.
  void run() {
    while (!events_.empty()) {
      auto it = events_.begin();
      now_ = it->first;
      auto fn = std::move(it->second);
      events_.erase(it);
      fn();
    }
  }
  int torn = 0, up = 0;
  std::vector<std::pair<Time, Time>> spans;  // reported reconfigurations: (start, end)

 private:
  Time now_;
  std::multimap<Time, std::function<void()>> events_;
};

// 4 servers; alpha 1: one circuit per server, so the plan is a matching of the heaviest pairs.
ServerDemand pairs(int a, int b, int c, int d) {
  ServerDemand demand(4);
  demand.add(a, b, 1000);
  demand.add(c, d, 1000);
  return demand;
}

struct Fixture {
  FakeSwitch ocs;
  std::unique_ptr<Planner> planner = make_planner("greedy");
  RegionController rc{0,        ServerNics{8, 1, 2},    region_limits(1, 8, Rate::gbps(400), 4),
                      *planner, Time::milliseconds(25), ocs};
  int builds = 0;
  RegionController::DemandSource source(ServerDemand d) {
    return [this, d] {
      ++builds;
      return d;
    };
  }
};

TEST(RegionController, ReconfiguresAfterTheDelayAndSwitchesOnlyWhatChanges) {
  Fixture f;
  std::vector<Time> ready;
  EXPECT_FALSE(f.rc.request(1, f.source(pairs(0, 1, 2, 3)), [&] { ready.push_back(f.ocs.now()); }));
  EXPECT_TRUE(f.rc.reconfiguring());
  f.ocs.run();
  EXPECT_EQ(ready, std::vector<Time>{Time::milliseconds(25)});
  EXPECT_EQ(f.ocs.up, 2);
  EXPECT_EQ(f.ocs.torn, 0);
  // The same plan under another key switches nothing: served at once, said by the return
  // value, not through `ready`. So is the plan in force.
  EXPECT_TRUE(f.rc.request(2, f.source(pairs(0, 1, 2, 3)), [&] { ready.push_back(Time::max()); }));
  EXPECT_TRUE(f.rc.request(2, f.source(pairs(0, 2, 1, 3)), [&] { ready.push_back(Time::max()); }));
  EXPECT_EQ(ready.size(), 1u);
  EXPECT_EQ(f.rc.stats().unchanged, 1);
  // A different matching tears both circuits down and puts two up.
  f.rc.request(3, f.source(pairs(0, 2, 1, 3)), [&] { ready.push_back(f.ocs.now()); });
  f.ocs.run();
  EXPECT_EQ(ready.back(), Time::milliseconds(50));
  EXPECT_EQ(f.ocs.torn, 2);
  EXPECT_EQ(f.ocs.up, 4);
  EXPECT_EQ(f.rc.stats().reconfigurations, 2);
  EXPECT_EQ(f.rc.stats().busy, Time::milliseconds(50));
  // Each reconfiguration is reported once it ends, with its start; the unchanged plan is not.
  const std::vector<std::pair<Time, Time>> spans{{Time::zero(), Time::milliseconds(25)},
                                                 {Time::milliseconds(25), Time::milliseconds(50)}};
  EXPECT_EQ(f.ocs.spans, spans);
}

TEST(RegionController, RequestsWaitInOrderAndDemandsAreBuiltOnlyForNewPlans) {
  Fixture f;
  std::vector<int> order;
  f.rc.request(1, f.source(pairs(0, 1, 2, 3)), [&] { order.push_back(1); });
  f.rc.request(1, f.source(pairs(0, 1, 2, 3)), [&] { order.push_back(11); });  // same key
  f.rc.request(2, f.source(pairs(0, 2, 1, 3)), [&] { order.push_back(2); });   // a conflict
  f.rc.request(2, f.source(pairs(0, 2, 1, 3)), [&] { order.push_back(22); });  // joins it
  f.ocs.run();
  EXPECT_EQ(order, (std::vector<int>{1, 11, 2, 22}));
  EXPECT_EQ(f.rc.stats().conflicts, 1);
  EXPECT_EQ(f.builds, 2);
  EXPECT_EQ(f.rc.current_key(), 2);
  EXPECT_FALSE(f.rc.reconfiguring());
}

// A region of 4 servers of 2 NICs, one on the OCS (alpha 1), at 400G, switching when faster.
std::unique_ptr<RegionController> when_faster(const Planner& planner, Time delay,
                                              CircuitSwitch& ocs) {
  return std::make_unique<RegionController>(0, ServerNics{2, 1, 1},
                                            region_limits(1, 2, Rate::gbps(400), 4), planner, delay,
                                            ocs, SwitchRule::WhenFaster);
}

// b bytes on each of (0, 2) and (1, 3).
ServerDemand crossed(std::int64_t bytes) {
  ServerDemand d(4);
  d.add(0, 2, bytes);
  d.add(1, 3, bytes);
  return d;
}

TEST(RegionController, WhenFasterSwitchesOnlyWhenTheNewPlanSavesMoreThanTheDelay) {
  // A pair with a circuit gets 400G, a pair without one its EPS share, 1 x 400G / 3 peers. The
  // crossed demand of b bytes while the circuits 0-1 and 2-3 are up: on them it takes
  // 8b / (400G / 3) = 6e-11 b seconds, on its own plan 8b / 400G = 2e-11 b, so the switch saves
  // 4e-11 b seconds, which equals the 25 ms delay at b = 625 MB.
  FakeSwitch ocs;
  const std::unique_ptr<Planner> planner = make_planner("greedy");
  const std::unique_ptr<RegionController> rc = when_faster(*planner, Time::milliseconds(25), ocs);
  int ready = 0;
  // The first plan always goes up (there are no circuits to compare with).
  rc->request(
      1, [] { return pairs(0, 1, 2, 3); }, [&] { ++ready; });
  ocs.run();
  EXPECT_EQ(ocs.up, 2);
  // 600 MB: the switch would save 24 ms, less than 25: kept, served at once, nothing switched.
  EXPECT_TRUE(rc->request(
      2, [] { return crossed(600'000'000); }, [&] { ++ready; }));
  EXPECT_EQ(ready, 1);
  EXPECT_FALSE(rc->reconfiguring());
  EXPECT_EQ(ocs.torn, 0);
  EXPECT_EQ(rc->stats().kept, 1);
  EXPECT_EQ(rc->stats().unchanged, 0);
  EXPECT_EQ(rc->plan().circuits_between(0, 1), 1);
  EXPECT_EQ(rc->current_key(), 2);
  // 650 MB: it would save 26 ms: switched.
  rc->request(
      3, [] { return crossed(650'000'000); }, [&] { ++ready; });
  EXPECT_TRUE(rc->reconfiguring());
  ocs.run();
  EXPECT_EQ(ready, 2);
  EXPECT_EQ(ocs.torn, 2);
  EXPECT_EQ(ocs.up, 4);
  EXPECT_EQ(rc->stats().reconfigurations, 2);
  EXPECT_EQ(rc->plan().circuits_between(0, 2), 1);
  EXPECT_EQ(rc->stats().kept, 1);
  EXPECT_EQ(to_string(SwitchRule::WhenFaster), std::string("when-faster"));
  EXPECT_EQ(parse_switch_rule("always"), SwitchRule::Always);
  EXPECT_FALSE(parse_switch_rule("sometimes").has_value());
}

TEST(RegionController, WhenFasterPutsTheFirstRequestsPlanUpOverAnInstalledOne) {
  // A plan installed before training (no demand made it) does not count: the first request's
  // plan goes up over it however little it saves; the next is judged against that one.
  FakeSwitch ocs;
  const std::unique_ptr<Planner> planner = make_planner("greedy");
  const std::unique_ptr<RegionController> rc = when_faster(*planner, Time::milliseconds(25), ocs);
  rc->install(0, pairs(0, 1, 2, 3));
  rc->request(
      1, [] { return crossed(1'000'000); }, [] {});
  ocs.run();
  EXPECT_EQ(rc->stats().reconfigurations, 1);
  EXPECT_EQ(rc->plan().circuits_between(0, 2), 1);
  rc->request(
      2, [] { return pairs(0, 1, 2, 3); }, [] {});
  EXPECT_EQ(rc->stats().kept, 1);
}

TEST(RegionController, WhenFasterAlwaysSwitchesWithoutADelay) {
  // With an ideal OCS a switch costs nothing: the 600 MB demand's plan goes up.
  FakeSwitch ocs;
  const std::unique_ptr<Planner> planner = make_planner("greedy");
  const std::unique_ptr<RegionController> rc = when_faster(*planner, Time::zero(), ocs);
  rc->request(
      1, [] { return pairs(0, 1, 2, 3); }, [] {});
  rc->request(
      2, [] { return crossed(600'000'000); }, [] {});
  ocs.run();
  EXPECT_EQ(rc->stats().kept, 0);
  EXPECT_EQ(rc->stats().reconfigurations, 2);
}

}  // namespace
}  // namespace mfabric::control
