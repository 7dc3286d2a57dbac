#include "control/topoopt_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>

#include "control/topoopt.h"
#include "core/error.h"

namespace mfabric::control {
namespace {

using Hops = std::vector<std::int32_t>;

Hops to_vector(std::span<const std::int32_t> s) {
  return Hops(s.begin(), s.end());
}

// A path is a walk from src to dst over the links, visiting no server twice.
void expect_walk(const std::vector<ServerLink>& links, int src, int dst,
                 std::span<const std::int32_t> path) {
  std::set<int> seen{src};
  int at = src;
  for (const std::int32_t id : path) {
    ASSERT_GE(id, 0);
    ASSERT_LT(static_cast<std::size_t>(id), links.size());
    const ServerLink& l = links[static_cast<std::size_t>(id)];
    ASSERT_TRUE(l.a == at || l.b == at) << "link " << id << " does not touch server " << at;
    at = l.a == at ? l.b : l.a;
    EXPECT_TRUE(seen.insert(at).second) << "server " << at << " visited twice";
  }
  EXPECT_EQ(at, dst);
}

void expect_all_valid(const ForwardingPaths& routes, const std::vector<ServerLink>& links, int k) {
  for (int s = 0; s < routes.servers(); ++s) {
    for (int t = 0; t < routes.servers(); ++t) {
      const auto paths = routes.paths(s, t);
      if (s == t) {
        EXPECT_TRUE(paths.empty());
        EXPECT_EQ(routes.distance(s, t), 0);
        continue;
      }
      EXPECT_LE(static_cast<int>(paths.size()), k);
      if (routes.distance(s, t) < 0) {
        EXPECT_TRUE(paths.empty());
        continue;
      }
      ASSERT_FALSE(paths.empty()) << s << " -> " << t;
      EXPECT_EQ(static_cast<int>(paths[0].size()), routes.distance(s, t));
      std::set<Hops> distinct;
      for (std::size_t i = 0; i < paths.size(); ++i) {
        expect_walk(links, s, t, paths[i]);
        if (i > 0) {
          EXPECT_LE(paths[i - 1].size(), paths[i].size()) << "not shortest first";
        }
        EXPECT_TRUE(distinct.insert(to_vector(paths[i])).second) << "repeated path";
      }
    }
  }
}

TEST(ForwardingPaths, SquareHasTwoWaysAcross) {
  // 0-1-2-3-0, links 0..3.
  const std::vector<ServerLink> links{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  const ForwardingPaths routes(4, links);
  EXPECT_EQ(routes.distance(0, 2), 2);
  ASSERT_EQ(routes.path_count(0, 2), 2);  // a cycle has exactly two simple paths per pair
  EXPECT_EQ(to_vector(routes.path(0, 2, 0)), (Hops{0, 1}));
  EXPECT_EQ(to_vector(routes.path(0, 2, 1)), (Hops{3, 2}));
  EXPECT_EQ(routes.path_servers(0, 2, 1), (std::vector<int>{0, 3, 2}));
  // Neighbours: the direct link, then the long way round (3 hops = shortest + 2).
  ASSERT_EQ(routes.path_count(0, 1), 2);
  EXPECT_EQ(to_vector(routes.path(0, 1, 0)), (Hops{0}));
  EXPECT_EQ(to_vector(routes.path(0, 1, 1)), (Hops{3, 2, 1}));
  // Reverse direction walks the same links backwards.
  EXPECT_EQ(to_vector(routes.path(2, 0, 0)), (Hops{1, 0}));
  expect_all_valid(routes, links, 4);
}

TEST(ForwardingPaths, ExtraHopsBoundTheDetours) {
  const std::vector<ServerLink> links{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  ForwardingOptions options;
  options.max_extra_hops = 0;
  const ForwardingPaths equal_cost(4, links, options);
  EXPECT_EQ(equal_cost.path_count(0, 1), 1);
  EXPECT_EQ(equal_cost.path_count(0, 2), 2);
  options.max_extra_hops = 1;
  EXPECT_EQ(ForwardingPaths(4, links, options).path_count(0, 1), 1);  // the detour is +2
  options.k = 1;
  EXPECT_EQ(ForwardingPaths(4, links, options).path_count(0, 2), 1);
}

TEST(ForwardingPaths, ParallelLinksAreSeparatePaths) {
  const std::vector<ServerLink> links{{0, 1}, {1, 0}, {1, 2}};
  const ForwardingPaths routes(3, links);
  ASSERT_EQ(routes.path_count(0, 1), 2);
  EXPECT_EQ(to_vector(routes.path(0, 1, 0)), (Hops{0}));
  EXPECT_EQ(to_vector(routes.path(0, 1, 1)), (Hops{1}));
  ASSERT_EQ(routes.path_count(0, 2), 2);
  EXPECT_EQ(to_vector(routes.path(0, 2, 0)), (Hops{0, 2}));
  EXPECT_EQ(to_vector(routes.path(0, 2, 1)), (Hops{1, 2}));
  expect_all_valid(routes, links, 4);
}

TEST(ForwardingPaths, UnreachableServersHaveNoPaths) {
  const std::vector<ServerLink> links{{0, 1}, {2, 3}};
  const ForwardingPaths routes(4, links);
  EXPECT_EQ(routes.distance(0, 2), -1);
  EXPECT_EQ(routes.path_count(0, 2), 0);
  EXPECT_TRUE(routes.paths(0, 3).empty());
  EXPECT_EQ(routes.path_count(2, 3), 1);
}

// Every simple path from s to t, by exhaustive search: the reference for the k shortest.
std::vector<std::size_t> all_simple_path_lengths(int n, const std::vector<ServerLink>& links, int s,
                                                 int t) {
  std::vector<std::size_t> lengths;
  std::vector<bool> on(static_cast<std::size_t>(n), false);
  std::function<void(int, std::size_t)> go = [&](int v, std::size_t depth) {
    if (v == t) {
      lengths.push_back(depth);
      return;
    }
    on[static_cast<std::size_t>(v)] = true;
    for (const ServerLink& l : links) {
      const int w = l.a == v ? l.b : (l.b == v ? l.a : -1);
      if (w >= 0 && !on[static_cast<std::size_t>(w)]) go(w, depth + 1);
    }
    on[static_cast<std::size_t>(v)] = false;
  };
  go(s, 0);
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

TEST(ForwardingPaths, MatchesExhaustiveSearchOnSmallGraphs) {
  std::uint64_t state = 12345;
  const auto next = [&](int bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(bound));
  };
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 5 + next(5);
    std::vector<ServerLink> links;
    for (int i = 0; i < n + next(2 * n); ++i) {
      const int a = next(n);
      const int b = next(n);
      if (a != b) links.push_back(ServerLink{a, b});
    }
    ForwardingOptions options;
    options.k = 1 + next(6);
    options.max_extra_hops = next(4);
    const ForwardingPaths routes(n, links, options);
    expect_all_valid(routes, links, options.k);
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < n; ++t) {
        if (s == t) continue;
        std::vector<std::size_t> expected = all_simple_path_lengths(n, links, s, t);
        if (!expected.empty()) {
          const std::size_t limit = expected[0] + static_cast<std::size_t>(options.max_extra_hops);
          expected.erase(std::remove_if(expected.begin(), expected.end(),
                                        [&](std::size_t len) { return len > limit; }),
                         expected.end());
        }
        if (static_cast<int>(expected.size()) > options.k) {
          expected.resize(static_cast<std::size_t>(options.k));
        }
        std::vector<std::size_t> got;
        for (const auto& p : routes.paths(s, t))
          got.push_back(p.size());
        EXPECT_EQ(got, expected) << "trial " << trial << ": " << s << " -> " << t;
      }
    }
  }
}

TEST(ForwardingPaths, BadInputIsAnError) {
  const std::vector<ServerLink> links{{0, 1}};
  EXPECT_THROW(ForwardingPaths(0, links), Error);
  EXPECT_THROW(ForwardingPaths(2, std::vector<ServerLink>{{0, 0}}), Error);
  EXPECT_THROW(ForwardingPaths(2, std::vector<ServerLink>{{0, 2}}), Error);
  ForwardingOptions options;
  options.k = 0;
  EXPECT_THROW(ForwardingPaths(2, links, options), Error);
  options.k = 1;
  options.max_extra_hops = -1;
  EXPECT_THROW(ForwardingPaths(2, links, options), Error);
  const ForwardingPaths routes(2, links);
  EXPECT_THROW(routes.path(0, 1, 1), Error);
  EXPECT_THROW(routes.path(0, 1, -1), Error);
  EXPECT_THROW(routes.distance(0, 2), Error);
  EXPECT_THROW(routes.paths(-1, 0), Error);
}

// A MoE-like demand over regions of 8 servers (all-to-all inside, pipeline between neighbouring
// regions, DP rings over the same position of every region).
JobDemand moe_like(int regions) {
  const int per = 8;
  JobDemand d;
  d.servers = regions * per;
  d.pairs = PairDemand(d.servers);
  for (int r = 0; r < regions; ++r) {
    for (int i = 0; i < per; ++i) {
      for (int j = i + 1; j < per; ++j) {
        d.pairs.set(r * per + i, r * per + j, Bytes(1'000'000 + 1000 * i + j));
      }
      if (r + 1 < regions) d.pairs.set(r * per + i, (r + 1) * per + i, Bytes(300'000));
    }
  }
  for (int i = 0; i < per; ++i) {
    std::vector<int> group;
    for (int r = 0; r < regions; ++r)
      group.push_back(r * per + i);
    d.rings.push_back(RingDemand{group, Bytes(2'000'000), Bytes(2'000'000), 1});
  }
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void plan_and_route(int regions, int degree, bool all_pairs) {
  const JobDemand demand = moe_like(regions);
  const auto t0 = std::chrono::steady_clock::now();
  const TopoOptTopology topology = plan_topoopt(demand, regions * 8, degree);
  const double plan_s = seconds_since(t0);
  ASSERT_TRUE(topology.connected);

  const auto t1 = std::chrono::steady_clock::now();
  const ForwardingPaths routes(topology);
  const double build_s = seconds_since(t1);
  // The pairs a simulation of this job asks for: those with demand, and ring neighbours.
  const auto t2 = std::chrono::steady_clock::now();
  std::size_t demand_pairs = 0;
  for (int s = 0; s < demand.servers; ++s) {
    for (int t = 0; t < demand.servers; ++t) {
      if (s != t && demand.pairs.at(s, t).count() > 0) {
        ASSERT_GE(routes.path_count(s, t), 1);
        ++demand_pairs;
      }
    }
  }
  for (const RingDemand& ring : demand.rings) {
    for (std::size_t i = 0; i < ring.servers.size(); ++i) {
      ASSERT_GE(routes.path_count(ring.servers[i], ring.servers[(i + 1) % ring.servers.size()]), 1);
    }
  }
  const double used_s = seconds_since(t2);
  const double used_mb = static_cast<double>(routes.memory_bytes()) / 1e6;
  std::printf(
      "[ timing ] %d servers x %d NICs: plan %.3f s (%zu links, %d matching rounds); routes: "
      "distances %.3f s, %zu demand pairs + rings %.3f s, %.1f MB\n",
      regions * 8, degree, plan_s, topology.links.size(), topology.matching_rounds, build_s,
      demand_pairs, used_s, used_mb);
  if (!all_pairs) return;
  const auto t3 = std::chrono::steady_clock::now();
  routes.compute_all();
  const double all_s = seconds_since(t3);
  int diameter = 0;
  std::size_t paths = 0;
  for (int s = 0; s < routes.servers(); ++s) {
    for (int t = 0; t < routes.servers(); ++t) {
      diameter = std::max(diameter, routes.distance(s, t));
      paths += static_cast<std::size_t>(routes.path_count(s, t));
      if (s != t) {
        ASSERT_GE(routes.path_count(s, t), 1);
      }
    }
  }
  std::printf("[ timing ] %d servers: all pairs, k=4: %.3f s, %zu paths, diameter %d, %.1f MB\n",
              regions * 8, all_s, paths, diameter,
              static_cast<double>(routes.memory_bytes()) / 1e6);
}

TEST(ForwardingPaths, AllPairsAt128ServersAndEightNics) {
  plan_and_route(16, 8, true);
}

// 1024 servers take seconds at the tests' -O1: run with MFABRIC_TOPOOPT_SCALE=1 (and
// MFABRIC_TOPOOPT_ALL_PAIRS=1 to search every pair).
TEST(ForwardingPaths, AllPairsAt1024Servers) {
  if (std::getenv("MFABRIC_TOPOOPT_SCALE") == nullptr) GTEST_SKIP() << "MFABRIC_TOPOOPT_SCALE";
  plan_and_route(128, 8, std::getenv("MFABRIC_TOPOOPT_ALL_PAIRS") != nullptr);
}

}  // namespace
}  // namespace mfabric::control
