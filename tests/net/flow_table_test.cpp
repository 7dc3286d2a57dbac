// The flow backend's flow table (net/flow/flow_table.h) on its own: random routes added,
// extended, and removed, against a plain model (each flow's channel list); every channel's list
// must hold exactly the flows whose routes cross it, and removal must report each channel once,
// in route order, after the flow has left it.
#include "net/flow/flow_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace mfabric::net::flow {
namespace {

constexpr std::size_t kChannels = 40;

// A weighted flow's coefficients, by slot (route order).
using Coefficients = std::map<std::int32_t, std::vector<float>>;

void expect_consistent(const FlowTable& table,
                       const std::map<std::int32_t, std::vector<ChannelId>>& model,
                       const Coefficients& coefficients = {}) {
  for (const auto& [slot, route] : model) {
    const Hot& f = table.hot(slot);
    ASSERT_EQ(static_cast<std::size_t>(f.len), route.size()) << "slot " << slot;
    const auto weighted = coefficients.find(slot);
    EXPECT_EQ(f.weighted, weighted != coefficients.end());
    for (std::int32_t i = 0; i < f.len; ++i) {
      EXPECT_EQ(table.path(slot)[i], route[static_cast<std::size_t>(i)]);
      if (weighted != coefficients.end()) {
        EXPECT_EQ(table.coefficient(slot, i), weighted->second[static_cast<std::size_t>(i)])
            << "slot " << slot << ", entry " << i;
      }
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

// A flow of the model, drawn at random.
std::map<std::int32_t, std::vector<ChannelId>>::iterator any_flow(
    std::map<std::int32_t, std::vector<ChannelId>>& model, std::mt19937& rng) {
  auto it = model.begin();
  std::advance(it, static_cast<long>(rng() % model.size()));
  return it;
}

// A random channel put back into a random flow's route at a random place, in the table (with
// `coefficient`) and the model, as a mirrored PCIe channel comes back: the flow and the place,
// or -1 for the place when the channel drawn is on the route already.
std::pair<std::int32_t, std::int32_t> insert_random_channel(
    FlowTable& table, std::map<std::int32_t, std::vector<ChannelId>>& model, std::mt19937& rng,
    std::uniform_int_distribution<ChannelId>& channel, float coefficient) {
  auto it = any_flow(model, rng);
  const ChannelId c = channel(rng);
  if (std::find(it->second.begin(), it->second.end(), c) != it->second.end()) {
    return {it->first, -1};
  }
  const auto at = static_cast<std::int32_t>(rng() % (it->second.size() + 1));
  table.insert(it->first, at, c, coefficient);
  it->second.insert(it->second.begin() + at, c);
  return {it->first, at};
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
      auto it = any_flow(model, rng);
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
      insert_random_channel(table, model, rng, channel, 1.0F);
    }
    if (step % 100 == 0) expect_consistent(table, model);
  }
  expect_consistent(table, model);
}

TEST(FlowTable, LongWeightedRoutesKeepTheirChannelsAndCoefficientsAsTheStrideGrows) {
  // Coflows' routes (allocate_long) among plain ones, the stride growing under them, channels
  // put back into them, slots released and reused.
  std::mt19937 rng(9);
  FlowTable table;
  table.resize_channels(kChannels);
  std::map<std::int32_t, std::vector<ChannelId>> model;
  Coefficients coefficients;
  std::uniform_int_distribution<ChannelId> channel(0, kChannels - 1);
  const auto route_of = [&](std::size_t len) {
    std::vector<ChannelId> route;
    while (route.size() < len) {
      const ChannelId c = channel(rng);
      if (std::find(route.begin(), route.end(), c) == route.end()) route.push_back(c);
    }
    return route;
  };
  for (int step = 0; step < 2000; ++step) {
    const int o = static_cast<int>(rng() % 10);
    if (o < 4 || model.empty()) {
      const bool weighted = o % 2 == 0;
      const std::size_t len =
          weighted ? 10 + rng() % 26 : (step % 200 == 0 ? 14 + rng() % 10 : 1 + rng() % 6);
      const std::vector<ChannelId> route = route_of(len);
      std::int32_t s = -1;
      if (weighted) {
        s = table.allocate_long(static_cast<std::int32_t>(len));
        EXPECT_GE(table.capacity(s), static_cast<std::int32_t>(len));
      } else {
        s = table.allocate();
        table.reserve_route(static_cast<std::int32_t>(len));
      }
      EXPECT_EQ(model.count(s), 0U) << "a slot in use was handed out again";
      table.hot(s).len = 0;
      table.hot(s).weighted = weighted;
      std::vector<float> a;
      for (ChannelId c : route) {
        a.push_back(0.5F + static_cast<float>(rng() % 100));
        table.append(s, c, weighted ? a.back() : 1.0F);
      }
      model[s] = route;
      if (weighted) coefficients[s] = a;
    } else if (o < 8) {
      auto it = any_flow(model, rng);
      const std::int32_t s = it->first;
      table.remove_route(s, [](ChannelId, const std::vector<std::int32_t>&) {});
      table.hot(s).weighted = false;
      table.release(s);
      coefficients.erase(s);
      model.erase(it);
    } else {
      const auto [slot, at] = insert_random_channel(table, model, rng, channel, 7.0F);
      if (at < 0) continue;
      if (auto w = coefficients.find(slot); w != coefficients.end()) {
        w->second.insert(w->second.begin() + at, 7.0F);
      }
    }
    if (step % 50 == 0) expect_consistent(table, model, coefficients);
  }
  expect_consistent(table, model, coefficients);
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
