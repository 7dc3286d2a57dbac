#include "fabric/server_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "core/error.h"

namespace mfabric::fabric {
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

}  // namespace
}  // namespace mfabric::fabric
