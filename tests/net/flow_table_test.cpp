// The flow backend's flow table (net/flow/flow_table.h) on its own: random routes added,
// extended, and removed, against a plain model (each flow's channel list); every channel's list
// must hold exactly the flows whose routes cross it, and removal must report each channel once,
// in route order, after the flow has left it.
#include "net/flow/flow_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace mfabric::net::flow {
namespace {

constexpr std::size_t kChannels = 40;

void expect_consistent(const FlowTable& table,
                       const std::map<std::int32_t, std::vector<ChannelId>>& model) {
  for (const auto& [slot, route] : model) {
    const Hot& f = table.hot(slot);
    ASSERT_EQ(static_cast<std::size_t>(f.len), route.size()) << "slot " << slot;
    for (std::int32_t i = 0; i < f.len; ++i) {
      EXPECT_EQ(table.path(slot)[i], route[static_cast<std::size_t>(i)]);
    }
  }
  for (std::size_t c = 0; c < kChannels; ++c) {
    std::vector<std::int32_t> want;
    for (const auto& [slot, route] : model) {
      want.insert(want.end(),
                  static_cast<std::size_t>(
                      std::count(route.begin(), route.end(), static_cast<ChannelId>(c))),
                  slot);
    }
    std::vector<std::int32_t> got = table.flows_on(static_cast<ChannelId>(c));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << "channel " << c;
  }
}

TEST(FlowTable, ChannelListsFollowRandomRoutes) {
  std::mt19937 rng(7);
  FlowTable table;
  table.resize_channels(kChannels);
  std::map<std::int32_t, std::vector<ChannelId>> model;
  std::uniform_int_distribution<int> op(0, 9);
  std::uniform_int_distribution<ChannelId> channel(0, kChannels - 1);
  for (int step = 0; step < 3000; ++step) {
    const int o = op(rng);
    if (o < 4 || model.empty()) {
      // A new flow; every 50th a route longer than any before (the stride grows).
      const std::int32_t s = table.allocate();
      EXPECT_EQ(model.count(s), 0U) << "a slot in use was handed out again";
      const std::size_t len =
          step % 50 == 0
              ? std::min<std::size_t>(5 + static_cast<std::size_t>(step / 50), kChannels - 4)
              : 1 + rng() % 6;
      std::vector<ChannelId> route;
      while (route.size() < len) {
        const ChannelId c = channel(rng);
        if (std::find(route.begin(), route.end(), c) == route.end()) route.push_back(c);
      }
      table.reserve_route(static_cast<std::int32_t>(len));
      table.hot(s).len = 0;
      for (ChannelId c : route)
        table.append(s, c);
      model[s] = route;
    } else if (o < 8) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      const std::int32_t s = it->first;
      std::vector<ChannelId> seen;
      table.remove_route(s, [&](ChannelId c, const std::vector<std::int32_t>& left) {
        seen.push_back(c);
        EXPECT_EQ(std::count(left.begin(), left.end(), s), 0) << "still on channel " << c;
      });
      EXPECT_EQ(seen, it->second);
      EXPECT_EQ(table.hot(s).len, 0);
      table.release(s);
      model.erase(it);
    } else {
      // A channel put back into a route at a random place.
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      const ChannelId c = channel(rng);
      if (std::find(it->second.begin(), it->second.end(), c) != it->second.end()) continue;
      const auto at = static_cast<std::int32_t>(rng() % (it->second.size() + 1));
      table.insert(it->first, at, c);
      it->second.insert(it->second.begin() + at, c);
    }
    if (step % 100 == 0) expect_consistent(table, model);
  }
  expect_consistent(table, model);
}

TEST(FlowTable, FindsOnlyActiveFlowsById) {
  FlowTable table;
  table.resize_channels(2);
  const std::int32_t a = table.allocate();
  const std::int32_t b = table.allocate();
  table.cold(a).id = 10;
  table.cold(b).id = 11;
  table.hot(a).state = FlowState::Active;
  table.hot(b).state = FlowState::Paused;
  EXPECT_EQ(table.find_active(10), a);
  EXPECT_EQ(table.find_active(11), -1);
  EXPECT_EQ(table.find_active(12), -1);
  table.release(a);
  EXPECT_EQ(table.allocate(), a);
}

}  // namespace
}  // namespace mfabric::net::flow
