// The flow backend's max-min solver on its own (net/flow/max_min_solver.h): random flows over
// random channels, solved from nothing and after changes, against plain progressive filling
// (max_min_reference.h).
#include "net/flow/max_min_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "max_min_reference.h"

namespace mfabric::net::flow {
namespace {

using testing::reference_max_min;

// Flows and channels laid out as the flow backend lays them out, with the solver over them.
struct Network {
  static constexpr std::int32_t kStride = 6;
  std::vector<Hot> hot;
  std::vector<Chan> chans;
  std::vector<std::vector<std::int32_t>> on;
  std::vector<ChannelId> path;
  std::vector<float> coef;
  std::int32_t stride = kStride;
  SolverStats stats;
  MaxMinSolver solver{hot, chans, on, path, stride, stats, &coef};

  explicit Network(const std::vector<double>& caps) {
    chans.resize(caps.size());
    on.resize(caps.size());
    for (std::size_t c = 0; c < caps.size(); ++c)
      chans[c].cap = caps[c];
    solver.resize_channels(caps.size());
  }
  std::int32_t add(const std::vector<ChannelId>& route) {
    const auto s = static_cast<std::int32_t>(hot.size());
    Hot f;
    f.len = static_cast<std::int32_t>(route.size());
    f.fresh = true;
    f.state = FlowState::Active;
    hot.push_back(f);
    path.resize(hot.size() * kStride, -1);
    coef.resize(hot.size() * kStride, 1.0F);
    std::copy(route.begin(), route.end(), path.begin() + s * kStride);
    for (ChannelId c : route)
      on[static_cast<std::size_t>(c)].push_back(s);
    return s;
  }
  // A weighted flow: it uses route[i] coefficients[i] times over.
  std::int32_t add_weighted(const std::vector<ChannelId>& route,
                            const std::vector<double>& coefficients) {
    const std::int32_t s = add(route);
    hot[static_cast<std::size_t>(s)].weighted = true;
    for (std::size_t i = 0; i < route.size(); ++i)
      coef[static_cast<std::size_t>(s) * kStride + i] = static_cast<float>(coefficients[i]);
    return s;
  }
  // What the backend does with V's new rates (apply_rates), without completions.
  void apply() {
    for (ChannelId c : solver.channels())
      chans[static_cast<std::size_t>(c)].load = on[static_cast<std::size_t>(c)].empty()
                                                    ? 0.0
                                                    : chans[static_cast<std::size_t>(c)].new_load;
    for (std::int32_t s : solver.flows()) {
      hot[static_cast<std::size_t>(s)].rate = hot[static_cast<std::size_t>(s)].new_rate;
      hot[static_cast<std::size_t>(s)].fresh = false;
    }
  }
  // Re-fills from these channels, as the backend's flush() does with a level of 0.
  void solve(const std::vector<ChannelId>& seeds) {
    if (solver.gather(seeds, 0.0)) {
      solver.solve(0.0);
      apply();
    }
  }
  std::vector<ChannelId> route_of(std::int32_t s) const {
    return {path.begin() + s * kStride,
            path.begin() + s * kStride + hot[static_cast<std::size_t>(s)].len};
  }
};

void expect_max_min(const Network& n, const std::vector<double>& caps, const char* when) {
  std::map<TransferId, std::vector<ChannelId>> paths;
  for (std::size_t s = 0; s < n.hot.size(); ++s) {
    if (n.hot[s].state == FlowState::Active)
      paths[static_cast<TransferId>(s)] = n.route_of(static_cast<std::int32_t>(s));
  }
  const std::map<TransferId, double> want = reference_max_min(paths, caps);
  for (const auto& [s, rate] : want) {
    const double got = n.hot[static_cast<std::size_t>(s)].rate;
    EXPECT_NEAR(got, rate, rate * 1e-6 + 1e-3) << when << ": flow " << s;
  }
}

// 4 to 15 channels of 1 to 100 Gb/s.
std::vector<double> random_capacities(std::mt19937& rng) {
  std::vector<double> caps(4 + rng() % 12);
  for (double& c : caps)
    c = 1e9 * static_cast<double>(1 + rng() % 100);
  return caps;
}

TEST(MaxMinSolver, RandomFlowsGetTheReferenceRatesFromScratchAndAfterChanges) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> caps = random_capacities(rng);
    const auto channels = static_cast<int>(caps.size());
    Network n(caps);
    const int flows = 1 + static_cast<int>(rng() % 40);
    for (int f = 0; f < flows; ++f) {
      std::vector<ChannelId> all(static_cast<std::size_t>(channels));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(1 + rng() % Network::kStride);
      n.add(all);
    }
    std::vector<ChannelId> every(static_cast<std::size_t>(channels));
    std::iota(every.begin(), every.end(), 0);
    n.solve(every);
    expect_max_min(n, caps, "from scratch");

    // A capacity change: re-fill from that channel only (the solver grows V as needed).
    const auto changed = static_cast<ChannelId>(rng() % static_cast<unsigned>(channels));
    caps[static_cast<std::size_t>(changed)] *= 0.25;
    n.chans[static_cast<std::size_t>(changed)].cap = caps[static_cast<std::size_t>(changed)];
    n.solve({changed});
    expect_max_min(n, caps, "after a capacity change");

    // New flows: re-fill from their channels.
    std::vector<ChannelId> seeds;
    for (int k = 0; k < 3; ++k) {
      const auto c = static_cast<ChannelId>(rng() % static_cast<unsigned>(channels));
      n.add({c});
      seeds.push_back(c);
    }
    n.solve(seeds);
    expect_max_min(n, caps, "after new flows");
  }
}

TEST(MaxMinSolver, WeightedFlowsGetTheReferenceRatesFromScratchAndAfterChanges) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> caps = random_capacities(rng);
    const auto channels = static_cast<int>(caps.size());
    Network n(caps);
    std::map<TransferId, std::vector<double>> coefficients;
    const int flows = 1 + static_cast<int>(rng() % 30);
    for (int f = 0; f < flows; ++f) {
      std::vector<ChannelId> all(static_cast<std::size_t>(channels));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      // A coflow's route names each channel once.
      all.resize(std::min<std::size_t>(all.size(), 1 + rng() % Network::kStride));
      if (rng() % 3 != 0) {
        n.add(all);
        continue;
      }
      // Coefficients as a coflow has them: a channel's share of its members' bytes over the
      // average member's, from 0.05 to 40.
      std::vector<double> a;
      for (std::size_t i = 0; i < all.size(); ++i)
        a.push_back(0.05 + 0.01 * static_cast<double>(rng() % 4000));
      coefficients[n.add_weighted(all, a)] = a;
    }
    const auto expect = [&](const char* when) {
      std::map<TransferId, std::vector<ChannelId>> paths;
      for (std::size_t s = 0; s < n.hot.size(); ++s)
        paths[static_cast<TransferId>(s)] = n.route_of(static_cast<std::int32_t>(s));
      const std::map<TransferId, double> want =
          testing::reference_weighted_max_min(paths, coefficients, caps);
      for (const auto& [s, rate] : want) {
        EXPECT_NEAR(n.hot[static_cast<std::size_t>(s)].rate, rate, rate * 1e-5 + 1e-3)
            << when << ": flow " << s << " of trial " << trial;
      }
      // No channel carries more than its capacity.
      for (int c = 0; c < channels; ++c) {
        double load = 0;
        for (std::int32_t s : n.on[static_cast<std::size_t>(c)]) {
          const std::vector<ChannelId> r = n.route_of(s);
          const auto at = std::find(r.begin(), r.end(), c) - r.begin();
          const auto it = coefficients.find(s);
          load += n.hot[static_cast<std::size_t>(s)].rate *
                  (it == coefficients.end() ? 1.0 : it->second[static_cast<std::size_t>(at)]);
        }
        EXPECT_LE(load, caps[static_cast<std::size_t>(c)] * (1 + 1e-6))
            << when << ", channel " << c;
      }
    };
    std::vector<ChannelId> every(static_cast<std::size_t>(channels));
    std::iota(every.begin(), every.end(), 0);
    n.solve(every);
    expect("from scratch");

    const auto changed = static_cast<ChannelId>(rng() % static_cast<unsigned>(channels));
    caps[static_cast<std::size_t>(changed)] *= 0.25;
    n.chans[static_cast<std::size_t>(changed)].cap = caps[static_cast<std::size_t>(changed)];
    n.solve({changed});
    expect("after a capacity change");
  }
}

TEST(MaxMinSolver, AWeightedFlowCountsAsItsCoefficientOfFlows) {
  // Channel 0 (30G): a flow and a coflow that uses it twice (two members there): a third each
  // of the channel as if three flows shared it, 10G, the coflow's load 20G.
  Network n({30e9, 100e9});
  const std::int32_t a = n.add({0});
  const std::int32_t b = n.add_weighted({0, 1}, {2.0, 0.5});
  n.solve({0, 1});
  EXPECT_DOUBLE_EQ(n.hot[static_cast<std::size_t>(a)].rate, 10e9);
  EXPECT_DOUBLE_EQ(n.hot[static_cast<std::size_t>(b)].rate, 10e9);
  EXPECT_DOUBLE_EQ(n.chans[0].load, 30e9);
  EXPECT_DOUBLE_EQ(n.chans[1].load, 5e9);
}

TEST(MaxMinSolver, ASharedBottleneckSplitsEvenlyAndTheRestGoesToTheOthers) {
  // Channel 0 (10G) carries flows a and b; channel 1 (100G) carries b and c: a and b get 5G,
  // c the 95G left on channel 1.
  Network n({10e9, 100e9});
  const std::int32_t a = n.add({0});
  const std::int32_t b = n.add({0, 1});
  const std::int32_t c = n.add({1});
  n.solve({0, 1});
  EXPECT_DOUBLE_EQ(n.hot[static_cast<std::size_t>(a)].rate, 5e9);
  EXPECT_DOUBLE_EQ(n.hot[static_cast<std::size_t>(b)].rate, 5e9);
  EXPECT_DOUBLE_EQ(n.hot[static_cast<std::size_t>(c)].rate, 95e9);
  EXPECT_EQ(n.hot[static_cast<std::size_t>(a)].bneck, 0);
  EXPECT_EQ(n.hot[static_cast<std::size_t>(c)].bneck, 1);
  EXPECT_GE(n.stats.water_fills, 1);
}

}  // namespace
}  // namespace mfabric::net::flow
