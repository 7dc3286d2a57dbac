#include "control/region_controller.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
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
  f.rc.request(1, f.source(pairs(0, 1, 2, 3)), [&] { ready.push_back(f.ocs.now()); });
  EXPECT_TRUE(f.rc.reconfiguring());
  f.ocs.run();
  EXPECT_EQ(ready, std::vector<Time>{Time::milliseconds(25)});
  EXPECT_EQ(f.ocs.up, 2);
  EXPECT_EQ(f.ocs.torn, 0);
  // The same plan under another key switches nothing and is ready at once.
  f.rc.request(2, f.source(pairs(0, 1, 2, 3)), [&] { ready.push_back(f.ocs.now()); });
  EXPECT_EQ(ready.size(), 2u);
  EXPECT_EQ(f.rc.stats().unchanged, 1);
  // A different matching tears both circuits down and puts two up.
  f.rc.request(3, f.source(pairs(0, 2, 1, 3)), [&] { ready.push_back(f.ocs.now()); });
  f.ocs.run();
  EXPECT_EQ(ready.back(), Time::milliseconds(50));
  EXPECT_EQ(f.ocs.torn, 2);
  EXPECT_EQ(f.ocs.up, 4);
  EXPECT_EQ(f.rc.stats().reconfigurations, 2);
  EXPECT_EQ(f.rc.stats().busy, Time::milliseconds(50));
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

}  // namespace
}  // namespace mfabric::control
