// Host-based forwarding between servers linked by circuits (TopoOpt's patch panel,
// docs/topoopt.md): servers without a direct link reach each other through intermediate servers,
// over k shortest paths. control::forwarding_paths builds them for a TopoOpt plan.
//
// For every ordered pair of servers, up to k loopless paths of the fewest hops, shortest first,
// each path a list of link indices (into the links the routes were built from) from the source
// to the destination. Parallel links are distinct links, so two cables between the same servers
// give two paths. Paths longer than the shortest by more than `max_extra_hops` are not used (a
// detour costs bandwidth at every server it crosses), so a pair may get fewer than k paths.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace mfabric::fabric {

struct ForwardingOptions {
  int k = 4;               // paths per pair, at least 1
  int max_extra_hops = 2;  // 0: equal-cost shortest paths only
};

// A link between two servers; only the ends matter for routing.
struct ServerLink {
  int a = -1;
  int b = -1;
};

class ForwardingPaths {
 public:
  // Builds the adjacency and the all-pairs hop counts (one BFS per server); the paths of a pair
  // are searched on its first request and kept (a simulation asks for few of the n^2 pairs).
  ForwardingPaths(int servers, std::span<const ServerLink> links,
                  const ForwardingOptions& options = {});
  ~ForwardingPaths();
  ForwardingPaths(ForwardingPaths&&) noexcept;
  ForwardingPaths& operator=(ForwardingPaths&&) noexcept;

  int servers() const { return servers_; }
  // Hops on a shortest path; 0 for src == dst, -1 if dst cannot be reached.
  int distance(int src, int dst) const;
  int path_count(int src, int dst) const;
  // Path `index` (0 = a shortest one) as link indices in order from src to dst. The span stays
  // valid as long as this object.
  std::span<const std::int32_t> path(int src, int dst, int index) const;
  // All of them, shortest first; empty for src == dst or an unreachable dst.
  std::vector<std::span<const std::int32_t>> paths(int src, int dst) const;
  // The servers a path visits, src first and dst last.
  std::vector<int> path_servers(int src, int dst, int index) const;

  // Searches every pair now (timing, memory figures).
  void compute_all() const;
  // Bytes held: hop counts, adjacency and the paths searched so far.
  std::size_t memory_bytes() const;

  // Not thread-safe: the first request of a pair fills the cache.
 private:
  struct PairPaths;
  std::size_t pair(int src, int dst) const;
  const PairPaths& pair_paths(int src, int dst) const;

  int servers_ = 0;
  ForwardingOptions options_;
  std::vector<ServerLink> links_;
  std::vector<std::uint32_t> adjacency_begin_;                    // per server, into adjacency_
  std::vector<std::pair<std::int32_t, std::int32_t>> adjacency_;  // (neighbour, link)
  std::vector<std::int32_t> distance_;                            // servers x servers
  mutable std::vector<std::unique_ptr<PairPaths>> cache_;         // servers x servers
  mutable std::size_t cached_bytes_ = 0;
};

}  // namespace mfabric::fabric
