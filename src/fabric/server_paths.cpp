#include "fabric/server_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <queue>

#include "core/error.h"

namespace mfabric::fabric {

namespace {

// Partial paths a search may expand for one pair before it settles for the paths found so far
// (reached only on graphs with very many near-shortest paths and few exact ones).
constexpr std::size_t kMaxStatesPerPair = 200'000;

// One partial path: the server it ends at, the link it arrived by and the partial path before.
struct State {
  std::int32_t server;
  std::int32_t link;
  std::int32_t parent;
  std::int32_t length;
};

struct Queued {
  std::int32_t bound;   // length + hops still needed at best
  std::int32_t length;  // deeper first among equal bounds: paths complete sooner
  std::uint32_t state;  // then first pushed
  bool operator>(const Queued& o) const {
    if (bound != o.bound) return bound > o.bound;
    if (length != o.length) return length < o.length;
    return state > o.state;
  }
};

}  // namespace

struct ForwardingPaths::PairPaths {
  std::vector<std::int32_t> hops;
  std::vector<std::uint32_t> begin{0};  // hops of path q: [begin[q], begin[q + 1])
};

ForwardingPaths::~ForwardingPaths() = default;
ForwardingPaths::ForwardingPaths(ForwardingPaths&&) noexcept = default;
ForwardingPaths& ForwardingPaths::operator=(ForwardingPaths&&) noexcept = default;

ForwardingPaths::ForwardingPaths(int servers, std::span<const ServerLink> links,
                                 const ForwardingOptions& options)
    : servers_(servers), options_(options), links_(links.begin(), links.end()) {
  if (servers < 1 || servers > (1 << 15)) {
    throw Error("", "servers", fmt::format("expected 1 to 32768 servers, got {}", servers));
  }
  if (options.k < 1) {
    throw Error("", "k", fmt::format("expected at least 1 path per pair, got {}", options.k));
  }
  if (options.max_extra_hops < 0) {
    throw Error("", "max_extra_hops",
                fmt::format("expected 0 or more extra hops, got {}", options.max_extra_hops));
  }
  if (links.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max() / 2)) {
    throw Error("", "links", "too many links");
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    const ServerLink& l = links[i];
    if (l.a < 0 || l.b < 0 || l.a >= servers || l.b >= servers || l.a == l.b) {
      throw Error(
          "", fmt::format("links[{}]", i),
          fmt::format("expected two different servers below {}, got ({}, {})", servers, l.a, l.b));
    }
  }
  const auto n = static_cast<std::size_t>(servers);
  // Adjacency in compressed rows, each server's links in link order.
  adjacency_begin_.assign(n + 1, 0);
  for (const ServerLink& l : links) {
    ++adjacency_begin_[static_cast<std::size_t>(l.a) + 1];
    ++adjacency_begin_[static_cast<std::size_t>(l.b) + 1];
  }
  for (std::size_t s = 0; s < n; ++s)
    adjacency_begin_[s + 1] += adjacency_begin_[s];
  adjacency_.resize(adjacency_begin_.back());
  std::vector<std::uint32_t> fill(adjacency_begin_.begin(), adjacency_begin_.end() - 1);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    adjacency_[fill[static_cast<std::size_t>(links[i].a)]++] = {links[i].b, id};
    adjacency_[fill[static_cast<std::size_t>(links[i].b)]++] = {links[i].a, id};
  }

  // All-pairs hop counts by one BFS per server: the exact distance to the destination is the
  // path search's bound on the hops a partial path still needs.
  distance_.assign(n * n, -1);
  std::vector<std::int32_t> queue(n);
  for (std::size_t src = 0; src < n; ++src) {
    std::int32_t* dist = &distance_[src * n];
    std::size_t head = 0;
    std::size_t tail = 0;
    dist[src] = 0;
    queue[tail++] = static_cast<std::int32_t>(src);
    while (head < tail) {
      const auto v = static_cast<std::size_t>(queue[head++]);
      for (std::uint32_t e = adjacency_begin_[v]; e < adjacency_begin_[v + 1]; ++e) {
        const auto w = static_cast<std::size_t>(adjacency_[e].first);
        if (dist[w] >= 0) continue;
        dist[w] = dist[v] + 1;
        queue[tail++] = static_cast<std::int32_t>(w);
      }
    }
  }
  cache_.resize(n * n);
}

// The k shortest loopless paths of one pair by best-first search over partial paths, ordered by
// length + exact remaining distance (an admissible, consistent bound, so complete paths come out
// shortest first; an A*-style enumeration of simple paths). Partial paths that cannot finish
// within the shortest + max_extra_hops are cut, which bounds the work.
const ForwardingPaths::PairPaths& ForwardingPaths::pair_paths(int src, int dst) const {
  const std::size_t p = pair(src, dst);
  if (cache_[p]) return *cache_[p];
  auto result = std::make_unique<PairPaths>();
  const std::int32_t shortest = distance_[p];
  if (src != dst && shortest > 0) {
    const auto n = static_cast<std::size_t>(servers_);
    const std::int32_t* to_dst = &distance_[static_cast<std::size_t>(dst) * n];  // symmetric
    const std::int32_t limit = shortest + options_.max_extra_hops;
    std::vector<State> states{State{src, -1, -1, 0}};
    std::priority_queue<Queued, std::vector<Queued>, std::greater<>> open;
    open.push(Queued{shortest, 0, 0});
    int found = 0;
    while (!open.empty() && found < options_.k && states.size() < kMaxStatesPerPair) {
      const Queued top = open.top();
      open.pop();
      const State s = states[top.state];
      if (s.server == dst) {
        // Walk back to the source; store the hops in order.
        const std::size_t first = result->hops.size();
        for (auto at = static_cast<std::int32_t>(top.state);
             states[static_cast<std::size_t>(at)].link >= 0;
             at = states[static_cast<std::size_t>(at)].parent) {
          result->hops.push_back(states[static_cast<std::size_t>(at)].link);
        }
        std::reverse(result->hops.begin() + static_cast<std::ptrdiff_t>(first), result->hops.end());
        result->begin.push_back(static_cast<std::uint32_t>(result->hops.size()));
        ++found;
        continue;
      }
      const auto v = static_cast<std::size_t>(s.server);
      for (std::uint32_t e = adjacency_begin_[v]; e < adjacency_begin_[v + 1]; ++e) {
        const auto [w, link] = adjacency_[e];
        const std::int32_t remaining = to_dst[static_cast<std::size_t>(w)];
        if (remaining < 0 || s.length + 1 + remaining > limit) continue;
        bool loop = false;
        for (auto at = static_cast<std::int32_t>(top.state); at >= 0;
             at = states[static_cast<std::size_t>(at)].parent) {
          if (states[static_cast<std::size_t>(at)].server == w) {
            loop = true;
            break;
          }
        }
        if (loop) continue;
        const auto id = static_cast<std::uint32_t>(states.size());
        states.push_back(State{w, link, static_cast<std::int32_t>(top.state), s.length + 1});
        open.push(Queued{s.length + 1 + remaining, s.length + 1, id});
      }
    }
  }
  cached_bytes_ += sizeof(PairPaths) + result->hops.capacity() * sizeof(std::int32_t) +
                   result->begin.capacity() * sizeof(std::uint32_t);
  cache_[p] = std::move(result);
  return *cache_[p];
}

std::size_t ForwardingPaths::pair(int src, int dst) const {
  if (src < 0 || dst < 0 || src >= servers_ || dst >= servers_) {
    throw Error("", "server",
                fmt::format("expected servers below {}, got ({}, {})", servers_, src, dst));
  }
  return static_cast<std::size_t>(src) * static_cast<std::size_t>(servers_) +
         static_cast<std::size_t>(dst);
}

int ForwardingPaths::distance(int src, int dst) const {
  return distance_[pair(src, dst)];
}

int ForwardingPaths::path_count(int src, int dst) const {
  return static_cast<int>(pair_paths(src, dst).begin.size() - 1);
}

std::span<const std::int32_t> ForwardingPaths::path(int src, int dst, int index) const {
  const PairPaths& paths = pair_paths(src, dst);
  const int count = static_cast<int>(paths.begin.size() - 1);
  if (index < 0 || index >= count) {
    throw Error(
        "", "path",
        fmt::format("servers {} -> {} have {} paths, asked for path {}", src, dst, count, index));
  }
  const auto q = static_cast<std::size_t>(index);
  return std::span<const std::int32_t>(paths.hops.data() + paths.begin[q],
                                       paths.begin[q + 1] - paths.begin[q]);
}

std::vector<std::span<const std::int32_t>> ForwardingPaths::paths(int src, int dst) const {
  std::vector<std::span<const std::int32_t>> result;
  const int count = path_count(src, dst);
  result.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    result.push_back(path(src, dst, i));
  return result;
}

std::vector<int> ForwardingPaths::path_servers(int src, int dst, int index) const {
  std::vector<int> result{src};
  int at = src;
  for (const std::int32_t link : path(src, dst, index)) {
    const ServerLink& l = links_[static_cast<std::size_t>(link)];
    at = l.a == at ? l.b : l.a;
    result.push_back(at);
  }
  return result;
}

void ForwardingPaths::compute_all() const {
  for (int s = 0; s < servers_; ++s) {
    for (int t = 0; t < servers_; ++t)
      pair_paths(s, t);
  }
}

std::size_t ForwardingPaths::memory_bytes() const {
  return distance_.size() * sizeof(std::int32_t) +
         cache_.size() * sizeof(std::unique_ptr<PairPaths>) + cached_bytes_ +
         adjacency_.size() * sizeof(adjacency_[0]) +
         adjacency_begin_.size() * sizeof(std::uint32_t) + links_.size() * sizeof(ServerLink);
}

}  // namespace mfabric::fabric
