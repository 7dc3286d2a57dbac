#include "control/topoopt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "control/topoopt_steps.h"
#include "core/error.h"

namespace mfabric::control {
namespace {

JobDemand empty_demand(int servers) {
  JobDemand d;
  d.servers = servers;
  d.pairs = PairDemand(servers);
  return d;
}

void add_ring(JobDemand& d, std::vector<int> servers, std::int64_t network_bytes) {
  d.rings.push_back(RingDemand{std::move(servers), Bytes(network_bytes), Bytes(network_bytes), 1});
}

// Every NIC at most once, NIC numbers below the degree, no self links, the unused count adds up.
void expect_valid(const TopoOptTopology& t) {
  std::set<std::pair<int, int>> nics;
  std::vector<int> used(static_cast<std::size_t>(t.servers), 0);
  for (const PanelLink& l : t.links) {
    ASSERT_NE(l.server_a, l.server_b);
    for (const auto& [s, nic] : {std::pair{l.server_a, l.nic_a}, std::pair{l.server_b, l.nic_b}}) {
      ASSERT_GE(s, 0);
      ASSERT_LT(s, t.servers);
      ASSERT_GE(nic, 0);
      ASSERT_LT(nic, t.degree);
      EXPECT_TRUE(nics.emplace(s, nic).second) << "NIC " << nic << " of server " << s << " twice";
      ++used[static_cast<std::size_t>(s)];
    }
  }
  for (const int u : used)
    EXPECT_LE(u, t.degree);
  EXPECT_EQ(t.unused_nics, t.servers * t.degree - 2 * static_cast<int>(t.links.size()));
}

// Connected, by a search independent of the planner's union-find.
bool reaches_all(const TopoOptTopology& t) {
  std::vector<bool> seen(static_cast<std::size_t>(t.servers), false);
  std::vector<int> stack{0};
  seen[0] = true;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (const PanelLink& l : t.links) {
      for (const int w : {l.server_a == v ? l.server_b : -1, l.server_b == v ? l.server_a : -1}) {
        if (w >= 0 && !seen[static_cast<std::size_t>(w)]) {
          seen[static_cast<std::size_t>(w)] = true;
          stack.push_back(w);
        }
      }
    }
  }
  return std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
}

int links_between(const TopoOptTopology& t, int a, int b) {
  return static_cast<int>(std::count_if(t.links.begin(), t.links.end(), [&](const PanelLink& l) {
    return (l.server_a == a && l.server_b == b) || (l.server_a == b && l.server_b == a);
  }));
}

TEST(TopoOpt, OneDataParallelGroupWithDegreeTwoIsARing) {
  JobDemand d = empty_demand(4);
  add_ring(d, {0, 1, 2, 3}, 600);
  const TopoOptTopology t = plan_topoopt(d, 4, 2);
  expect_valid(t);
  EXPECT_EQ(t.ring_degree, 2);
  ASSERT_EQ(t.rings.size(), 1u);
  EXPECT_EQ(t.rings[0].strides, (std::vector<int>{1}));
  EXPECT_EQ(t.rings[0].diameter, 2);
  ASSERT_EQ(t.links.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(links_between(t, i, (i + 1) % 4), 1) << i;
    EXPECT_EQ(t.links[static_cast<std::size_t>(i)].purpose, LinkPurpose::Ring);
  }
  EXPECT_TRUE(t.connected);
  EXPECT_EQ(t.unused_nics, 0);
  // NICs are numbered in link order: server 0's first link (0-1) has its NIC 0, its second
  // (3-0, the ring's last) NIC 1; server 3 reached NIC 1 there too (after 2-3).
  EXPECT_EQ(t.links_of(0), (std::vector<int>{0, 3}));
  EXPECT_EQ(t.links[0].nic_a, 0);
  EXPECT_EQ(t.links[3].server_a, 3);
  EXPECT_EQ(t.links[3].nic_a, 1);
  EXPECT_EQ(t.links[3].server_b, 0);
  EXPECT_EQ(t.links[3].nic_b, 1);
  EXPECT_EQ(t.links[3].stride, 1);
  EXPECT_STREQ(to_string(t.links[3].purpose), "ring");
}

TEST(TopoOpt, MatchingConsidersOnlyEachServersHeaviestPairs) {
  // Over every pair the best matching is 0-1 + 2-3 (20 + 17 = 37 > 18 + 18). With 1 candidate
  // per server, 2-3 is nobody's heaviest pair (2: 0-2 at 18, 3: 1-3 at 18), so the candidates
  // are {0-1, 0-2, 1-3} and the best of those is 0-2 + 1-3 (36).
  JobDemand d = empty_demand(4);
  d.pairs.set(0, 1, Bytes(20));
  d.pairs.set(0, 2, Bytes(18));
  d.pairs.set(1, 3, Bytes(18));
  d.pairs.set(2, 3, Bytes(17));
  const TopoOptTopology all = plan_topoopt(d, 4, 1, TopoOptOptions{0, true});
  EXPECT_EQ(links_between(all, 0, 1), 1);
  EXPECT_EQ(links_between(all, 2, 3), 1);
  const TopoOptTopology sparse = plan_topoopt(d, 4, 1, TopoOptOptions{1, true});
  EXPECT_EQ(links_between(sparse, 0, 2), 1);
  EXPECT_EQ(links_between(sparse, 1, 3), 1);
}

TEST(TopoOpt, RingFollowsTheGroupsServers) {
  // A DP group over every other server of 8; 4 NICs: two rings (strides 1 twice: 4 members
  // have one distinct ring).
  JobDemand d = empty_demand(8);
  add_ring(d, {1, 3, 5, 7}, 100);
  add_ring(d, {0, 2, 4, 6}, 100);
  const TopoOptTopology t = plan_topoopt(d, 8, 4);
  expect_valid(t);
  ASSERT_EQ(t.rings.size(), 2u);
  for (const RingPlan& r : t.rings) {
    EXPECT_EQ(r.strides, (std::vector<int>{1, 1}));
    for (std::size_t i = 0; i < r.servers.size(); ++i) {
      EXPECT_GE(links_between(t, r.servers[i], r.servers[(i + 1) % r.servers.size()]), 1);
    }
  }
  // Both groups take all 4 NICs: two components without free NICs, joined by rewiring one
  // parallel ring link of each into two links across.
  EXPECT_TRUE(t.connected);
  EXPECT_TRUE(reaches_all(t));
  const auto count = [&](LinkPurpose p) {
    return std::count_if(t.links.begin(), t.links.end(),
                         [&](const PanelLink& l) { return l.purpose == p; });
  };
  EXPECT_EQ(count(LinkPurpose::Ring), 14);
  EXPECT_EQ(count(LinkPurpose::Connectivity), 2);
  EXPECT_EQ(t.unused_nics, 0);
}

TEST(TopoOpt, DegreeSplitFollowsTheBytes) {
  // Ring bytes 3x the pair bytes: 6 of 8 NICs.
  JobDemand d = empty_demand(8);
  add_ring(d, {0, 1, 2, 3, 4, 5, 6, 7}, 300);
  d.pairs.set(0, 4, Bytes(100));
  EXPECT_EQ(plan_topoopt(d, 8, 8).ring_degree, 6);
  // 1 : 1 of 8: 4.
  d.pairs.set(0, 4, Bytes(300));
  EXPECT_EQ(plan_topoopt(d, 8, 8).ring_degree, 4);
  // Exact 8 x 1/4 = 2 even already; 8 x 3/8 = 3 is odd for groups needing 2 NICs per ring, and
  // 3 lies as close to 2 as to 4: halves go up.
  d.pairs.set(0, 4, Bytes(900));
  EXPECT_EQ(plan_topoopt(d, 8, 8).ring_degree, 2);
  d.pairs.set(0, 4, Bytes(500));
  EXPECT_EQ(plan_topoopt(d, 8, 8).ring_degree, 4);
  // Tiny ring traffic still gets a ring when the degree allows.
  d.pairs.set(0, 4, Bytes(1'000'000'000));
  EXPECT_EQ(plan_topoopt(d, 8, 8).ring_degree, 2);
  // Degree 1 with both kinds: the nearest count, 0. No pair demand: every NIC to rings; no ring
  // demand: none.
  EXPECT_EQ(plan_topoopt(d, 8, 1).ring_degree, 0);
  JobDemand pairs_only = empty_demand(8);
  pairs_only.pairs.set(0, 1, Bytes(10));
  EXPECT_EQ(plan_topoopt(pairs_only, 8, 4).ring_degree, 0);
  JobDemand rings_only = empty_demand(8);
  add_ring(rings_only, {0, 1, 2, 3, 4, 5, 6, 7}, 10);
  EXPECT_EQ(plan_topoopt(rings_only, 8, 5).ring_degree, 5);
}

TEST(TopoOpt, TwoServerGroupsUseOneNicPerRing) {
  // With no pair demand every NIC goes to the ring group of 2: three parallel links.
  JobDemand d = empty_demand(2);
  add_ring(d, {0, 1}, 50);
  const TopoOptTopology t = plan_topoopt(d, 2, 3);
  expect_valid(t);
  ASSERT_EQ(t.rings.size(), 1u);
  EXPECT_EQ(t.rings[0].strides, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(links_between(t, 0, 1), 3);
  // And an odd split is kept: the group needs 1 NIC per ring. 3 x 1/3 = 1.
  d.pairs.set(0, 1, Bytes(100));
  EXPECT_EQ(plan_topoopt(d, 2, 3).ring_degree, 1);
}

TEST(TopoOpt, OverlappingGroupsShareTheRingNics) {
  // A over servers 0-7, B over 0-3, 4 NICs all for rings: A's ring and B's ring fill servers
  // 0-3; servers 4-7 keep 2 NICs for connectivity and leftovers.
  JobDemand d = empty_demand(8);
  add_ring(d, {0, 1, 2, 3}, 50);
  add_ring(d, {0, 1, 2, 3, 4, 5, 6, 7}, 100);
  const TopoOptTopology t = plan_topoopt(d, 8, 4);
  expect_valid(t);
  ASSERT_EQ(t.rings.size(), 2u);
  EXPECT_EQ(t.rings[0].demand, 1);  // heaviest first
  EXPECT_EQ(t.rings[0].strides, (std::vector<int>{1}));
  EXPECT_EQ(t.rings[1].demand, 0);
  EXPECT_EQ(t.rings[1].strides, (std::vector<int>{1}));
  const auto ring_links = std::count_if(t.links.begin(), t.links.end(), [](const PanelLink& l) {
    return l.purpose == LinkPurpose::Ring;
  });
  EXPECT_EQ(ring_links, 8 + 4);
  EXPECT_TRUE(t.connected);
}

TEST(TopoOpt, MatchingIsMaximumWeightNotGreedy) {
  // Greedy would take 0-2 (15) first and then only 1-3 (1): 16. The best matching is 0-1 + 2-3
  // (20).
  JobDemand d = empty_demand(4);
  d.pairs.set(0, 1, Bytes(10));
  d.pairs.set(2, 3, Bytes(10));
  d.pairs.set(0, 2, Bytes(15));
  d.pairs.set(1, 3, Bytes(1));
  const TopoOptTopology one = plan_topoopt(d, 4, 1);
  expect_valid(one);
  EXPECT_EQ(one.matching_rounds, 1);
  EXPECT_EQ(links_between(one, 0, 1), 1);
  EXPECT_EQ(links_between(one, 2, 3), 1);
  EXPECT_FALSE(one.connected);  // degree 1: two links cannot join 4 servers
  EXPECT_FALSE(reaches_all(one));

  // Second round: 0-1 and 2-3 fall to 5 each, so 0-2 (15) + 1-3 (1) = 16 beats 10.
  const TopoOptTopology two = plan_topoopt(d, 4, 2);
  expect_valid(two);
  EXPECT_EQ(two.matching_rounds, 2);
  EXPECT_EQ(links_between(two, 0, 1), 1);
  EXPECT_EQ(links_between(two, 2, 3), 1);
  EXPECT_EQ(links_between(two, 0, 2), 1);
  EXPECT_EQ(links_between(two, 1, 3), 1);
  EXPECT_TRUE(two.connected);
  for (const PanelLink& l : two.links)
    EXPECT_EQ(l.purpose, LinkPurpose::Matching);
}

TEST(TopoOpt, HeavyPairGetsParallelLinks) {
  // 0-1 carries 100, 2-3 carries 30, with 3 NICs: 0-1 at 100, 50, 33 and 2-3 at 30, 15, 10 all
  // get a link each round; nothing else has demand.
  JobDemand d = empty_demand(4);
  d.pairs.set(0, 1, Bytes(100));
  d.pairs.set(2, 3, Bytes(30));
  d.pairs.set(1, 2, Bytes(40));
  const TopoOptTopology t = plan_topoopt(d, 4, 3);
  expect_valid(t);
  // Round 1: 0-1 + 2-3 (130) vs 1-2 (40). Round 2: 0-1 (50) + 2-3 (15) = 65 vs 1-2 (40).
  // Round 3: 0-1 (33) + 2-3 (10) = 43 vs 1-2 (40).
  EXPECT_EQ(t.matching_rounds, 3);
  // Two components without free NICs: the latest parallel link of each is given up and their
  // ends crossed the way that serves demand: 1-2 (40) and 0-3 rather than 0-2 and 1-3.
  EXPECT_EQ(links_between(t, 0, 1), 2);
  EXPECT_EQ(links_between(t, 2, 3), 2);
  EXPECT_EQ(links_between(t, 1, 2), 1);
  EXPECT_EQ(links_between(t, 0, 3), 1);
  EXPECT_TRUE(t.connected);
  EXPECT_TRUE(reaches_all(t));
  expect_valid(t);
}

TEST(TopoOpt, DisconnectedDemandIsJoinedByRewiring) {
  JobDemand d = empty_demand(4);
  d.pairs.set(0, 1, Bytes(10));
  d.pairs.set(2, 3, Bytes(10));
  const TopoOptTopology t = plan_topoopt(d, 4, 2);
  expect_valid(t);
  EXPECT_TRUE(t.connected);
  EXPECT_TRUE(reaches_all(t));
  EXPECT_EQ(t.unused_nics, 0);
  // The demand pairs keep a direct link each.
  EXPECT_GE(links_between(t, 0, 1), 1);
  EXPECT_GE(links_between(t, 2, 3), 1);
  EXPECT_EQ(
      std::count_if(t.links.begin(), t.links.end(),
                    [](const PanelLink& l) { return l.purpose == LinkPurpose::Connectivity; }),
      2);
}

TEST(TopoOpt, NoDemandStillConnectsAndUsesNics) {
  const TopoOptTopology t = plan_topoopt(empty_demand(5), 5, 2);
  expect_valid(t);
  EXPECT_TRUE(t.connected);
  EXPECT_TRUE(reaches_all(t));
  EXPECT_EQ(t.unused_nics, 0);  // 5 servers x 2 NICs: a 5-cycle
}

TEST(TopoOpt, ServersBeyondTheDemandAreConnected) {
  JobDemand d = empty_demand(2);
  d.pairs.set(0, 1, Bytes(5));
  const TopoOptTopology t = plan_topoopt(d, 6, 3);
  expect_valid(t);
  EXPECT_TRUE(t.connected);
  EXPECT_TRUE(reaches_all(t));
}

TEST(TopoOpt, OneServerHasNoLinks) {
  const TopoOptTopology t = plan_topoopt(empty_demand(1), 1, 4);
  EXPECT_TRUE(t.links.empty());
  EXPECT_TRUE(t.connected);
  EXPECT_EQ(t.unused_nics, 4);
}

// A MoE-like job: 16 servers in 4 regions of 4 with all-to-all inside a region, pipeline
// transfers between neighbouring regions and DP rings over the same position of every region.
JobDemand moe_like(int regions, int region_servers) {
  const int n = regions * region_servers;
  JobDemand d = empty_demand(n);
  for (int r = 0; r < regions; ++r) {
    for (int i = 0; i < region_servers; ++i) {
      for (int j = i + 1; j < region_servers; ++j) {
        d.pairs.set(r * region_servers + i, r * region_servers + j, Bytes(1000 + 10 * i + j));
      }
      if (r + 1 < regions) {
        d.pairs.set(r * region_servers + i, (r + 1) * region_servers + i, Bytes(300));
      }
    }
  }
  for (int i = 0; i < region_servers; ++i) {
    std::vector<int> group;
    for (int r = 0; r < regions; ++r)
      group.push_back(r * region_servers + i);
    add_ring(d, group, 2000 + i);
  }
  return d;
}

TEST(TopoOpt, MoeLikeJobIsValidConnectedAndDeterministic) {
  const JobDemand d = moe_like(4, 4);
  const TopoOptTopology a = plan_topoopt(d, 16, 6);
  expect_valid(a);
  EXPECT_TRUE(a.connected);
  EXPECT_TRUE(reaches_all(a));
  EXPECT_EQ(a.unused_nics, 0);
  EXPECT_EQ(a.rings.size(), 4u);
  for (const RingPlan& r : a.rings) {
    for (std::size_t i = 0; i < r.servers.size(); ++i) {
      EXPECT_GE(links_between(a, r.servers[i], r.servers[(i + 1) % r.servers.size()]), 1);
    }
  }
  const TopoOptTopology b = plan_topoopt(d, 16, 6);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(a.links[i].server_a, b.links[i].server_a);
    EXPECT_EQ(a.links[i].nic_a, b.links[i].nic_a);
    EXPECT_EQ(a.links[i].server_b, b.links[i].server_b);
    EXPECT_EQ(a.links[i].nic_b, b.links[i].nic_b);
    EXPECT_EQ(a.links[i].purpose, b.links[i].purpose);
  }
}

TEST(TopoOpt, LargerJobsStayValid) {
  for (const int degree : {2, 3, 8}) {
    const JobDemand d = moe_like(16, 8);  // 128 servers
    const TopoOptTopology t = plan_topoopt(d, 128, degree);
    expect_valid(t);
    EXPECT_TRUE(t.connected) << degree;
    EXPECT_TRUE(reaches_all(t)) << degree;
    EXPECT_LE(t.unused_nics, 1) << degree;
  }
}

TEST(TopoOpt, BadInputIsAnError) {
  JobDemand d = empty_demand(4);
  EXPECT_THROW(plan_topoopt(d, 4, 0), Error);
  EXPECT_THROW(plan_topoopt(d, 0, 2), Error);
  EXPECT_THROW(plan_topoopt(d, 3, 2), Error);  // the demand spans more servers
  EXPECT_THROW(plan_topoopt(d, 1 << 20, 128), Error);
  TopoOptOptions options;
  options.matching_candidates_per_server = -1;
  EXPECT_THROW(plan_topoopt(d, 4, 2, options), Error);

  JobDemand wrong_pairs = empty_demand(4);
  wrong_pairs.pairs = PairDemand(3);
  EXPECT_THROW(plan_topoopt(wrong_pairs, 4, 2), Error);

  for (const std::vector<int>& servers :
       {std::vector<int>{0}, std::vector<int>{1, 0}, std::vector<int>{0, 0, 1},
        std::vector<int>{0, 4}, std::vector<int>{-1, 2}}) {
    JobDemand bad = empty_demand(4);
    add_ring(bad, servers, 10);
    EXPECT_THROW(plan_topoopt(bad, 4, 2), Error);
  }
  JobDemand negative = empty_demand(4);
  add_ring(negative, {0, 1, 2}, -1);
  EXPECT_THROW(plan_topoopt(negative, 4, 2), Error);
  try {
    plan_topoopt(d, 4, 0);
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "degree");
  }
}

// --- TotientPerms ---

TEST(TotientPerms, CoprimeStridesUpToHalf) {
  EXPECT_EQ(detail::coprime_strides(2), (std::vector<int>{1}));
  EXPECT_EQ(detail::coprime_strides(4), (std::vector<int>{1}));
  EXPECT_EQ(detail::coprime_strides(8), (std::vector<int>{1, 3}));
  EXPECT_EQ(detail::coprime_strides(9), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(detail::coprime_strides(12), (std::vector<int>{1, 5}));
  EXPECT_EQ(detail::coprime_strides(13).size(), 6u);  // phi(13) / 2
}

TEST(TotientPerms, CirculantScoreOfARing) {
  // C_8(1): distances 0,1,1,2,2,3,3,4.
  const auto ring = detail::circulant_score(8, {1});
  EXPECT_EQ(ring.diameter, 4);
  EXPECT_EQ(ring.total_distance, 16);
  // C_8(1, 3): 1,3,5(=-3),7(=-1) in one hop, 2,4,6 in two.
  const auto chord = detail::circulant_score(8, {1, 3});
  EXPECT_EQ(chord.diameter, 2);
  EXPECT_EQ(chord.total_distance, 4 + 3 * 2);
  EXPECT_EQ(detail::circulant_score(8, {2}).diameter, -1);  // not a permutation cycle
}

TEST(TotientPerms, SecondStrideIsTheBestForItsGroup) {
  // With stride 1 fixed, the search tries every coprime second stride: its result must match
  // an exhaustive scan.
  for (const int m : {7, 16, 30, 64, 101}) {
    detail::CirculantScore best{m, 0};
    best.total_distance = INT64_MAX;
    for (const int p : detail::coprime_strides(m)) {
      if (p == 1) continue;
      best = std::min(best, detail::circulant_score(m, {1, p}));
    }
    const std::vector<int> strides = detail::ring_strides(m, 2, true);
    ASSERT_EQ(strides.size(), 2u);
    EXPECT_EQ(strides[0], 1);
    EXPECT_EQ(detail::circulant_score(m, strides), best) << m;
  }
}

TEST(TotientPerms, StridesAreDistinctCoprimeAndBeatTheRing) {
  for (const int m : {16, 64, 128, 1000}) {
    for (const int rings : {2, 3, 4}) {
      const std::vector<int> strides = detail::ring_strides(m, rings, true);
      ASSERT_EQ(static_cast<int>(strides.size()), rings);
      EXPECT_EQ(strides[0], 1);
      std::set<int> distinct(strides.begin(), strides.end());
      EXPECT_EQ(distinct.size(), strides.size());
      for (const int p : strides) {
        EXPECT_EQ(std::gcd(p, m), 1);
        EXPECT_LE(p, m / 2);
      }
      const auto searched = detail::circulant_score(m, strides);
      const auto geometric = detail::circulant_score(m, detail::ring_strides(m, rings, false));
      EXPECT_LE(searched, geometric);
      EXPECT_LT(searched.diameter, m / 2);  // better than the plain ring
    }
  }
  // Diameter of 3 distinct strides over 1000 members: far below the ring's 500.
  EXPECT_LE(detail::circulant_score(1000, detail::ring_strides(1000, 3, true)).diameter, 12);
}

TEST(TotientPerms, MoreRingsThanStridesRepeat) {
  EXPECT_EQ(detail::ring_strides(4, 3, true), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(detail::ring_strides(8, 3, true), (std::vector<int>{1, 3, 1}));
  EXPECT_TRUE(detail::ring_strides(8, 0, true).empty());
}

}  // namespace
}  // namespace mfabric::control
