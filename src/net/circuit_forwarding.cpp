#include "net/circuit_forwarding.h"

#include <algorithm>
#include <span>

#include "net/ecmp.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NodeId;

CircuitForwarding::CircuitForwarding(const LinkTable& links, const std::vector<std::uint8_t>& up,
                                     const fabric::ForwardingOptions& options)
    : links_(links), up_(up), options_(options) {
  const fabric::Topology& t = links.topology();
  const fabric::ClusterSpec& c = t.cluster();
  circuits_only_.assign(static_cast<std::size_t>(c.servers), 0);
  for (int s = 0; s < c.servers; ++s) {
    bool all = c.nics_per_server > 0;
    for (int j = 0; j < c.nics_per_server; ++j) {
      const bool panel = t.node(t.nic(s, j)).role == fabric::NicRole::PatchPanel;
      enabled_ = enabled_ || panel;
      all = all && panel;
    }
    circuits_only_[static_cast<std::size_t>(s)] = all ? 1 : 0;
  }
}

void CircuitForwarding::invalidate() {
  stale_[0] = stale_[1] = true;
}

CircuitForwarding::Graph& CircuitForwarding::graph(bool allow_down) {
  const int mode = allow_down ? 1 : 0;
  if (stale_[mode]) {
    build(graphs_[mode], allow_down);
    stale_[mode] = false;
  }
  return graphs_[mode];
}

void CircuitForwarding::build(Graph& g, bool allow_down) {
  ++rebuilds_;
  const fabric::Topology& t = links_.topology();
  // Circuits between patch-panel NICs, by (server pair, link id).
  struct Entry {
    int a, b;
    LinkId link;
  };
  std::vector<Entry> entries;
  const auto first = static_cast<LinkId>(t.links().size());
  for (auto l = first; static_cast<std::size_t>(l) < links_.size(); ++l) {
    if (!links_.connected(l)) continue;
    if (!allow_down && up_[static_cast<std::size_t>(l)] == 0) continue;
    const fabric::Link& k = links_.link(l);
    if (t.node(k.a).role != fabric::NicRole::PatchPanel ||
        t.node(k.b).role != fabric::NicRole::PatchPanel) {
      continue;
    }
    const int sa = t.node(k.a).server;
    const int sb = t.node(k.b).server;
    entries.push_back({std::min(sa, sb), std::max(sa, sb), l});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    if (x.a != y.a) return x.a < y.a;
    if (x.b != y.b) return x.b < y.b;
    return x.link < y.link;
  });
  g.pairs.clear();
  g.circuit_begin.clear();
  g.circuits.clear();
  for (const Entry& e : entries) {
    if (g.pairs.empty() || g.pairs.back().a != e.a || g.pairs.back().b != e.b) {
      g.pairs.push_back({e.a, e.b});
      g.circuit_begin.push_back(static_cast<std::int32_t>(g.circuits.size()));
    }
    g.circuits.push_back(e.link);
  }
  g.circuit_begin.push_back(static_cast<std::int32_t>(g.circuits.size()));
  g.paths.reset();
  if (!g.pairs.empty()) {
    g.paths.emplace(t.cluster().servers, std::span<const fabric::ServerLink>(g.pairs), options_);
  }
}

int CircuitForwarding::distance(int a, int b, bool allow_down) {
  if (a == b) return 0;
  const Graph& g = graph(allow_down);
  return g.paths ? g.paths->distance(a, b) : -1;
}

NodeId CircuitForwarding::end_at(LinkId circuit, int server) const {
  const fabric::Link& k = links_.link(circuit);
  return links_.topology().node(k.a).server == server ? k.a : k.b;
}

bool CircuitForwarding::own_nic(NodeId gpu, NodeId nic) const {
  const fabric::Topology& t = links_.topology();
  for (LinkId l : t.links_of(nic)) {
    if (t.link(l).kind == fabric::LinkKind::Pcie && t.other_end(l, nic) == gpu) return true;
  }
  return false;
}

bool CircuitForwarding::choose(int a, int b, NodeId src_gpu, NodeId dst_gpu, std::uint64_t key,
                               bool allow_down, std::vector<LinkId>& circuits) {
  circuits.clear();
  if (a == b) return false;
  const Graph& g = graph(allow_down);
  if (!g.paths) return false;
  const int count = g.paths->path_count(a, b);
  if (count == 0) return false;
  const std::span<const std::int32_t> path = g.paths->path(
      a, b,
      static_cast<int>(ecmp_pick(key, EcmpSalt::kForwardPath, static_cast<std::size_t>(count))));
  int at = a;
  for (std::size_t h = 0; h < path.size(); ++h) {
    const auto p = static_cast<std::size_t>(path[h]);
    const int next = g.pairs[p].a == at ? g.pairs[p].b : g.pairs[p].a;
    const auto begin = g.circuits.begin() + g.circuit_begin[p];
    const auto end = g.circuits.begin() + g.circuit_begin[p + 1];
    candidates_.assign(begin, end);
    // At the ends, a circuit on the GPU's own NIC saves a proxy (NVSwitch) crossing.
    const auto prefer = [&](NodeId gpu, int server) {
      if (candidates_.size() <= 1) return;
      const auto own = [&](LinkId c) { return own_nic(gpu, end_at(c, server)); };
      if (std::none_of(candidates_.begin(), candidates_.end(), own)) return;
      candidates_.erase(
          std::remove_if(candidates_.begin(), candidates_.end(), [&](LinkId c) { return !own(c); }),
          candidates_.end());
    };
    if (h == 0) prefer(src_gpu, a);
    if (h + 1 == path.size()) prefer(dst_gpu, b);
    circuits.push_back(candidates_[ecmp_pick(key, EcmpSalt::kForwardCircuit + static_cast<int>(h),
                                             candidates_.size())]);
    at = next;
  }
  return true;
}

}  // namespace mfabric::net
