// TopoOpt's forwarding paths at scale: a plan's panel links searched by fabric::ForwardingPaths.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "control/topoopt.h"

namespace mfabric::control {
namespace {

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
  const fabric::ForwardingPaths routes = forwarding_paths(topology);
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

TEST(TopoOptForwarding, AllPairsAt128ServersAndEightNics) {
  plan_and_route(16, 8, true);
}

// 1024 servers take seconds at the tests' -O1: run with MFABRIC_TOPOOPT_SCALE=1 (and
// MFABRIC_TOPOOPT_ALL_PAIRS=1 to search every pair).
TEST(TopoOptForwarding, AllPairsAt1024Servers) {
  if (std::getenv("MFABRIC_TOPOOPT_SCALE") == nullptr) GTEST_SKIP() << "MFABRIC_TOPOOPT_SCALE";
  plan_and_route(128, 8, std::getenv("MFABRIC_TOPOOPT_ALL_PAIRS") != nullptr);
}

}  // namespace
}  // namespace mfabric::control
