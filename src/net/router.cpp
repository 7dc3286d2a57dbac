#include "net/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/error.h"
#include "core/rng.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::LinkKind;
using fabric::Node;
using fabric::NodeId;
using fabric::NodeKind;
using fabric::Topology;

Router::Router(const Topology& topology)
    : own_(std::make_unique<LinkTable>(topology)), l_(own_.get()), t_(&topology) {
  sync();
}

Router::Router(const LinkTable& links) : l_(&links), t_(&links.topology()) {
  sync();
}

void Router::sync() {
  const Topology& t = *t_;
  const std::size_t n = t.nodes().size();
  const std::size_t m = l_->size();
  if (n == nodes_seen_ && m == links_seen_) return;
  if (links_seen_ > 0 && l_->circuit_capacity() > 0) {
    throw std::logic_error("Router::sync: the topology grew under circuit slots");
  }
  up_.resize(m);
  // Circuits (NIC-NIC links) are looked at per query; only new nodes, NvLink or switch-switch
  // links change the structures below.
  bool rebuild = n != nodes_seen_;
  for (std::size_t l = links_seen_; l < m; ++l) {
    const fabric::Link& k = l_->link(static_cast<LinkId>(l));
    up_[l] = k.rate.bps() > 0 ? 1 : 0;
    if (k.a == fabric::kNoNode) continue;  // a free circuit slot
    rebuild = rebuild || k.kind == LinkKind::NvLink || k.kind == LinkKind::Pcie ||
              (t.node(k.a).kind == NodeKind::Switch && t.node(k.b).kind == NodeKind::Switch);
  }
  nodes_seen_ = n;
  links_seen_ = m;
  if (!rebuild) return;

  gpu_nvlink_.assign(n, kNoLink);
  gpu_pcie_.assign(n, kNoLink);
  gpu_pcie_nic_.assign(n, fabric::kNoNode);
  gpu_pcie_many_.assign(n, 0);
  switch_index_.assign(n, -1);
  std::int32_t switches = 0;
  has_ocs_nics_ = false;
  for (std::size_t v = 0; v < n; ++v) {
    const Node& node = t.nodes()[v];
    if (node.kind == NodeKind::Switch) switch_index_[v] = switches++;
    if (node.kind == NodeKind::Nic && node.role == fabric::NicRole::Ocs) has_ocs_nics_ = true;
    if (node.kind == NodeKind::Gpu) {
      for (LinkId l : t.links_of(static_cast<NodeId>(v))) {
        if (t.link(l).kind == LinkKind::NvLink) gpu_nvlink_[v] = l;
        if (t.link(l).kind != LinkKind::Pcie) continue;
        if (gpu_pcie_[v] != kNoLink) gpu_pcie_many_[v] = 1;
        gpu_pcie_[v] = l;
        gpu_pcie_nic_[v] = t.other_end(l, static_cast<NodeId>(v));
      }
    }
  }
  // Switch-switch adjacency: only these links are transit; OCS and patch panels never are.
  switch_row_.assign(static_cast<std::size_t>(switches) + 1, 0);
  switch_edges_.clear();
  for (std::size_t v = 0; v < n; ++v) {
    const std::int32_t i = switch_index_[v];
    if (i < 0) continue;
    for (LinkId l : t.links_of(static_cast<NodeId>(v))) {
      const NodeId w = t.other_end(l, static_cast<NodeId>(v));
      const std::int32_t j = switch_index_[static_cast<std::size_t>(w)];
      if (j >= 0 && w != static_cast<NodeId>(v)) switch_edges_.push_back({l, j});
    }
    switch_row_[static_cast<std::size_t>(i) + 1] = static_cast<std::int32_t>(switch_edges_.size());
  }
  for (auto& mode : tables_) {
    mode.assign(static_cast<std::size_t>(switches), {});
  }
  forwarding_ = std::make_unique<CircuitForwarding>(*l_, up_);
  if (!forwarding_->enabled()) forwarding_.reset();
}

void Router::set_link_up(LinkId link, bool up) {
  // Called after every connect and before every disconnect: the circuit graph is rebuilt
  // before the next forwarded route.
  if (forwarding_ != nullptr && l_->is_circuit(link)) forwarding_->invalidate();
  auto& state = up_[static_cast<std::size_t>(link)];
  const std::uint8_t v = up ? 1 : 0;
  if (state == v) return;
  state = v;
  const fabric::Link& k = l_->link(link);
  if (k.a == fabric::kNoNode) return;  // a free circuit slot
  // Only switch-switch links are in the distance tables; NIC links are looked at per query.
  if (switch_index_[static_cast<std::size_t>(k.a)] >= 0 &&
      switch_index_[static_cast<std::size_t>(k.b)] >= 0) {
    for (auto& tab : tables_[0]) {
      tab.clear();
    }
  }
}

std::size_t Router::cached_tables() const {
  std::size_t c = 0;
  for (const auto& mode : tables_) {
    for (const auto& tab : mode) {
      c += tab.empty() ? 0 : 1;
    }
  }
  return c;
}

const std::vector<std::uint16_t>& Router::table(std::int32_t dest, bool allow_down) {
  auto& tab = tables_[allow_down ? 1 : 0][static_cast<std::size_t>(dest)];
  if (!tab.empty()) return tab;
  // Breadth-first search from the destination; links are full duplex, so distances to it equal
  // distances from it.
  tab.assign(switch_row_.size() - 1, kUnreachable);
  tab[static_cast<std::size_t>(dest)] = 0;
  bfs_queue_.clear();
  bfs_queue_.push_back(dest);
  for (std::size_t head = 0; head < bfs_queue_.size(); ++head) {
    const std::int32_t x = bfs_queue_[head];
    const auto next = static_cast<std::uint16_t>(tab[static_cast<std::size_t>(x)] + 1);
    for (std::int32_t e = switch_row_[static_cast<std::size_t>(x)];
         e < switch_row_[static_cast<std::size_t>(x) + 1]; ++e) {
      const SwitchEdge& edge = switch_edges_[static_cast<std::size_t>(e)];
      auto& d = tab[static_cast<std::size_t>(edge.neighbor)];
      if (d != kUnreachable || !usable(edge.link, allow_down)) continue;
      d = next;
      bfs_queue_.push_back(edge.neighbor);
    }
  }
  return tab;
}

LinkId Router::pcie_link(NodeId gpu, NodeId nic) const {
  const auto g = static_cast<std::size_t>(gpu);
  if (g < gpu_pcie_many_.size() && gpu_pcie_many_[g] == 0) {
    return gpu_pcie_nic_[g] == nic ? gpu_pcie_[g] : kNoLink;
  }
  for (LinkId l : l_->links_of(nic)) {
    const fabric::Link& k = l_->link(l);
    if (k.kind == LinkKind::Pcie && (k.a == gpu || k.b == gpu)) return l;
  }
  return kNoLink;
}

NodeId Router::access_gpu(NodeId gpu, NodeId nic, std::uint64_t key, bool allow_down) const {
  const LinkId own = pcie_link(gpu, nic);
  if (own != kNoLink) return usable(own, allow_down) ? gpu : fabric::kNoNode;
  const LinkId nv = nvlink_of(gpu);
  if (nv == kNoLink || !usable(nv, allow_down)) return fabric::kNoNode;
  // The proxy: a GPU of the NIC's server on the NIC's PCIe link (several when GPUs outnumber
  // NICs; the flow hash picks one so that flows spread over them).
  std::size_t owners = 0;
  for (LinkId l : l_->links_of(nic)) {
    const fabric::Link& k = l_->link(l);
    if (k.kind != LinkKind::Pcie || !usable(l, allow_down)) continue;
    const NodeId p = l_->other_end(l, nic);
    const LinkId pnv = nvlink_of(p);
    if (pnv != kNoLink && usable(pnv, allow_down)) ++owners;
  }
  if (owners == 0) return fabric::kNoNode;
  std::size_t want = ecmp_pick(key, EcmpSalt::kProxyGpu, owners);
  for (LinkId l : l_->links_of(nic)) {
    const fabric::Link& k = l_->link(l);
    if (k.kind != LinkKind::Pcie || !usable(l, allow_down)) continue;
    const NodeId p = l_->other_end(l, nic);
    const LinkId pnv = nvlink_of(p);
    if (pnv == kNoLink || !usable(pnv, allow_down)) continue;
    if (want-- == 0) return p;
  }
  return fabric::kNoNode;
}

int Router::nic_distance(NodeId a, NodeId b, bool allow_down) {
  int best = kInfinity;
  for (LinkId la : l_->links_of(a)) {
    const fabric::Link& k = l_->link(la);
    if (k.kind != LinkKind::Cable || !usable(la, allow_down)) continue;
    const NodeId sa = l_->other_end(la, a);
    if (sa == b) return 1;  // a direct NIC-NIC circuit
    const std::int32_t ia = switch_index_[static_cast<std::size_t>(sa)];
    if (ia < 0) continue;  // an OCS or patch-panel port: not a way into the network
    for (LinkId lb : l_->links_of(b)) {
      const fabric::Link& kb = l_->link(lb);
      if (kb.kind != LinkKind::Cable || !usable(lb, allow_down)) continue;
      const std::int32_t ib = switch_index_[static_cast<std::size_t>(l_->other_end(lb, b))];
      if (ib < 0) continue;
      const std::uint16_t d = table(ib, allow_down)[static_cast<std::size_t>(ia)];
      if (d != kUnreachable) best = std::min(best, static_cast<int>(d) + 2);
    }
  }
  return best;
}

void Router::add(LinkId l, NodeId from, Route& out) const {
  out.channels.push_back(channel_of(*l_, l, from));
  out.latency += l_->link(l).latency;
}

void Router::append_network(NodeId a, NodeId b, std::uint64_t key, bool allow_down, Route& out) {
  // A direct circuit is the shortest path there is.
  choices_.clear();
  for (LinkId la : l_->links_of(a)) {
    const fabric::Link& k = l_->link(la);
    if (k.kind == LinkKind::Cable && usable(la, allow_down) && l_->other_end(la, a) == b) {
      choices_.push_back(la);
    }
  }
  if (!choices_.empty()) {
    add(choices_[ecmp_pick(key, EcmpSalt::kSwitchHop, choices_.size())], a, out);
    return;
  }
  // Otherwise through switches: first the (NIC a uplink, NIC b downlink) pair of least distance.
  struct Ends {
    LinkId la, lb;
    std::int32_t sa, sb;
  };
  Ends ends[16];
  std::size_t count = 0;
  int best = kInfinity;
  for (LinkId la : l_->links_of(a)) {
    if (l_->link(la).kind != LinkKind::Cable || !usable(la, allow_down)) continue;
    const std::int32_t sa = switch_index_[static_cast<std::size_t>(l_->other_end(la, a))];
    if (sa < 0) continue;
    for (LinkId lb : l_->links_of(b)) {
      if (l_->link(lb).kind != LinkKind::Cable || !usable(lb, allow_down)) continue;
      const std::int32_t sb = switch_index_[static_cast<std::size_t>(l_->other_end(lb, b))];
      if (sb < 0) continue;
      const std::uint16_t d = table(sb, allow_down)[static_cast<std::size_t>(sa)];
      if (d == kUnreachable || d > best) continue;
      if (d < best) count = 0;
      best = d;
      if (count < std::size(ends)) ends[count++] = {la, lb, sa, sb};
    }
  }
  const Ends e = ends[ecmp_pick(key, EcmpSalt::kSwitchHop, count)];
  add(e.la, a, out);
  const auto& tab = table(e.sb, allow_down);
  std::int32_t x = e.sa;
  NodeId x_node = l_->other_end(e.la, a);
  for (int hop = 1; x != e.sb; ++hop) {
    const std::uint16_t want = static_cast<std::uint16_t>(tab[static_cast<std::size_t>(x)] - 1);
    const std::int32_t first = switch_row_[static_cast<std::size_t>(x)];
    const std::int32_t last = switch_row_[static_cast<std::size_t>(x) + 1];
    std::size_t options = 0;
    for (std::int32_t i = first; i < last; ++i) {
      const SwitchEdge& edge = switch_edges_[static_cast<std::size_t>(i)];
      if (tab[static_cast<std::size_t>(edge.neighbor)] == want && usable(edge.link, allow_down)) {
        ++options;
      }
    }
    std::size_t take = ecmp_pick(key, EcmpSalt::kSwitchHop + hop, options);
    for (std::int32_t i = first; i < last; ++i) {
      const SwitchEdge& edge = switch_edges_[static_cast<std::size_t>(i)];
      if (tab[static_cast<std::size_t>(edge.neighbor)] != want || !usable(edge.link, allow_down)) {
        continue;
      }
      if (take-- == 0) {
        add(edge.link, x_node, out);
        x = edge.neighbor;
        x_node = l_->other_end(edge.link, x_node);
        break;
      }
    }
  }
  add(e.lb, x_node, out);
}

bool Router::find(NodeId src, NodeId dst, std::uint64_t flow_hash, Route& out, bool allow_down) {
  const Topology& t = *t_;
  const auto n_nodes = static_cast<NodeId>(t.nodes().size());
  for (NodeId v : {src, dst}) {
    if (v < 0 || v >= n_nodes || t.node(v).kind != NodeKind::Gpu) {
      throw Error("", "transfer",
                  fmt::format("a transfer goes between GPUs; node {} is {}", v,
                              v < 0 || v >= n_nodes ? "not in the topology" : t.name(v)));
    }
  }
  return build_route(src, dst, mix_hash(flow_hash), out, allow_down);
}

bool Router::append_direct(NodeId src, NodeId dst, std::uint64_t key, bool allow_down, Route& out) {
  const Topology& t = *t_;
  const int s_src = t.node(src).server;
  const int s_dst = t.node(dst).server;
  const int n = t.cluster().nics_per_server;
  // Each NIC of each side with the GPU that would use it (kNoNode: unusable). At first only
  // the GPUs' own NICs: the search for proxies (the costly part) is needed only when no pair of
  // own NICs is joined, since fewer proxies always win.
  src_via_.resize(static_cast<std::size_t>(n));
  dst_via_.resize(static_cast<std::size_t>(n));
  const auto own_only = [&](NodeId gpu, NodeId nic) {
    const LinkId own = pcie_link(gpu, nic);
    return own != kNoLink && usable(own, allow_down) ? gpu : fabric::kNoNode;
  };
  // A GPU with one PCIe link reaches the network through that NIC alone: its slot is found
  // without asking every NIC of the server (every route between servers passes here).
  const auto own_slot = [&](NodeId gpu, int server, std::vector<NodeId>& via) {
    const auto g = static_cast<std::size_t>(gpu);
    if (gpu_pcie_many_[g] != 0) return false;
    const NodeId nic = gpu_pcie_nic_[g];
    std::fill(via.begin(), via.end(), fabric::kNoNode);
    if (nic == fabric::kNoNode) return true;
    const int local = t.node(nic).index;
    if (local < 0 || local >= n || t.nic(server, local) != nic) return false;
    if (usable(gpu_pcie_[g], allow_down)) via[static_cast<std::size_t>(local)] = gpu;
    return true;
  };
  if (!own_slot(src, s_src, src_via_)) {
    for (int j = 0; j < n; ++j)
      src_via_[j] = own_only(src, t.nic(s_src, j));
  }
  if (!own_slot(dst, s_dst, dst_via_)) {
    for (int k = 0; k < n; ++k)
      dst_via_[k] = own_only(dst, t.nic(s_dst, k));
  }
  const auto& src_via = src_via_;
  const auto& dst_via = dst_via_;
  // Fewest proxies first (a GPU's own NIC is always preferred), then the shortest network
  // path; ties broken by the flow hash.
  int best = kInfinity;
  for (int proxies = 0; proxies <= 2 && candidates_.empty(); ++proxies) {
    if (proxies == 1) {
      for (int j = 0; j < n; ++j) {
        src_via_[j] = access_gpu(src, t.nic(s_src, j), key, allow_down);
        dst_via_[j] = access_gpu(dst, t.nic(s_dst, j), key, allow_down);
      }
    }
    candidates_.clear();
    best = kInfinity;
    for (int j = 0; j < n; ++j) {
      if (src_via[j] == fabric::kNoNode) continue;
      const int pa = src_via[j] != src ? 1 : 0;
      for (int k = 0; k < n; ++k) {
        if (dst_via[k] == fabric::kNoNode) continue;
        if (pa + (dst_via[k] != dst ? 1 : 0) != proxies) continue;
        const NodeId a = t.nic(s_src, j);
        const NodeId b = t.nic(s_dst, k);
        const int d = nic_distance(a, b, allow_down);
        if (d == kInfinity || d > best) continue;
        if (d < best) candidates_.clear();
        best = d;
        candidates_.push_back({a, b, src_via[j], dst_via[k]});
      }
    }
    if (!candidates_.empty()) out.cost = {proxies, best};
  }
  if (candidates_.empty()) return false;
  const Candidate c = candidates_[ecmp_pick(key, EcmpSalt::kNicPair, candidates_.size())];
  candidates_.clear();

  if (c.src_gpu != src) {
    add(nvlink_of(src), src, out);
    add(nvlink_of(c.src_gpu), t.nvswitch(s_src), out);
  }
  add(pcie_link(c.src_gpu, c.a), c.src_gpu, out);
  append_network(c.a, c.b, key, allow_down, out);
  add(pcie_link(c.dst_gpu, c.b), c.b, out);
  if (c.dst_gpu != dst) {
    add(nvlink_of(c.dst_gpu), c.dst_gpu, out);
    add(nvlink_of(dst), t.nvswitch(s_dst), out);
  }
  return true;
}

bool Router::append_forwarded(NodeId src, NodeId dst, std::uint64_t key, bool allow_down,
                              Route& out) {
  const Topology& t = *t_;
  const int s_src = t.node(src).server;
  const int s_dst = t.node(dst).server;
  if (forwarding_ == nullptr ||
      !forwarding_->choose(s_src, s_dst, src, dst, key, allow_down, hop_circuits_)) {
    return false;
  }
  const std::vector<LinkId>& circuits = hop_circuits_;
  const auto nic_at = [&](LinkId circuit, int server) {
    const fabric::Link& k = l_->link(circuit);
    return t.node(k.a).server == server ? k.a : k.b;
  };
  const NodeId first_nic = nic_at(circuits.front(), s_src);
  const NodeId last_nic = nic_at(circuits.back(), s_dst);
  const NodeId src_gpu = access_gpu(src, first_nic, key, allow_down);
  const NodeId dst_gpu = access_gpu(dst, last_nic, key, allow_down);
  if (src_gpu == fabric::kNoNode || dst_gpu == fabric::kNoNode) return false;

  if (src_gpu != src) {
    add(nvlink_of(src), src, out);
    add(nvlink_of(src_gpu), t.nvswitch(s_src), out);
  }
  add(pcie_link(src_gpu, first_nic), src_gpu, out);
  NodeId nic = first_nic;
  for (std::size_t h = 0; h < circuits.size(); ++h) {
    add(circuits[h], nic, out);
    if (h + 1 == circuits.size()) break;
    // An intermediate server: in-NIC -> PCIe -> GPU [-> NVSwitch -> GPU] -> PCIe -> out-NIC.
    const NodeId in = l_->other_end(circuits[h], nic);
    const int server = t.node(in).server;
    nic = nic_at(circuits[h + 1], server);
    NodeId g_in = fabric::kNoNode;
    NodeId g_out = fabric::kNoNode;
    if (!forwarding_gpus(in, nic, key, static_cast<int>(h), allow_down, g_in, g_out)) {
      out.channels.clear();
      return false;
    }
    add(pcie_link(g_in, in), in, out);
    if (g_in != g_out) {
      add(nvlink_of(g_in), g_in, out);
      add(nvlink_of(g_out), t.nvswitch(server), out);
    }
    add(pcie_link(g_out, nic), g_out, out);
  }
  add(pcie_link(dst_gpu, last_nic), last_nic, out);
  if (dst_gpu != dst) {
    add(nvlink_of(dst_gpu), dst_gpu, out);
    add(nvlink_of(dst), t.nvswitch(s_dst), out);
  }
  out.cost = {(src_gpu != src ? 1 : 0) + (dst_gpu != dst ? 1 : 0),
              static_cast<int>(circuits.size())};
  return true;
}

bool Router::forwarding_gpus(NodeId in, NodeId out, std::uint64_t key, int hop, bool allow_down,
                             NodeId& g_in, NodeId& g_out) {
  // The GPUs on each NIC's PCIe (one each when a server has as many NICs as GPUs or more).
  const auto owners = [&](NodeId nic, bool need_nvlink, std::vector<NodeId>& into) {
    into.clear();
    for (LinkId l : l_->links_of(nic)) {
      if (l_->link(l).kind != LinkKind::Pcie || !usable(l, allow_down)) continue;
      const NodeId g = l_->other_end(l, nic);
      const LinkId nv = nvlink_of(g);
      if (need_nvlink && (nv == kNoLink || !usable(nv, allow_down))) continue;
      into.push_back(g);
    }
  };
  // A GPU on both NICs passes the data from one to the other without the NVSwitch.
  owners(in, false, in_owners_);
  owners(out, false, out_owners_);
  std::size_t common = 0;
  for (NodeId g : in_owners_) {
    if (std::find(out_owners_.begin(), out_owners_.end(), g) != out_owners_.end()) {
      in_owners_[common++] = g;
    }
  }
  if (common > 0) {
    g_in = g_out = in_owners_[ecmp_pick(key, EcmpSalt::kForwardInGpu + hop, common)];
    return true;
  }
  owners(in, true, in_owners_);
  owners(out, true, out_owners_);
  if (in_owners_.empty() || out_owners_.empty()) return false;
  g_in = in_owners_[ecmp_pick(key, EcmpSalt::kForwardInGpu + hop, in_owners_.size())];
  g_out = out_owners_[ecmp_pick(key, EcmpSalt::kForwardOutGpu + hop, out_owners_.size())];
  return true;
}

void Router::relay_hops(int server, int other_end, std::vector<RelayHop>& into) const {
  const Topology& t = *t_;
  into.clear();
  for (int j = 0; j < t.cluster().nics_per_server; ++j) {
    const NodeId nic = t.nic(server, j);
    if (t.node(nic).role != fabric::NicRole::Ocs) continue;  // patch-panel circuits: forwarding
    const LinkId c = l_->circuit_at(nic);
    if (c < 0 || !usable(c, false)) continue;
    const NodeId relay_nic = l_->other_end(c, nic);
    if (t.node(relay_nic).server == other_end) continue;  // a direct circuit, not a relay
    for (LinkId l : l_->links_of(relay_nic)) {
      if (l_->link(l).kind != LinkKind::Pcie || !usable(l, false)) continue;
      into.push_back({nic, c, relay_nic, l_->other_end(l, relay_nic)});
    }
  }
}

bool Router::into_relay(NodeId src, const RelayHop& hop, std::uint64_t key, Route& r) const {
  const Topology& t = *t_;
  const NodeId src_gpu = access_gpu(src, hop.nic, key, false);
  if (src_gpu == fabric::kNoNode) return false;
  if (src_gpu != src) {
    add(nvlink_of(src), src, r);
    add(nvlink_of(src_gpu), t.nvswitch(t.node(src).server), r);
    ++r.cost.proxies;
  }
  add(pcie_link(src_gpu, hop.nic), src_gpu, r);
  add(hop.circuit, hop.nic, r);
  add(pcie_link(hop.relay_gpu, hop.relay_nic), hop.relay_nic, r);
  ++r.cost.proxies;  // the relay GPU
  ++r.cost.network_links;
  return true;
}

bool Router::out_of_relay(const RelayHop& hop, NodeId dst, std::uint64_t key, Route& r) const {
  const Topology& t = *t_;
  const NodeId dst_gpu = access_gpu(dst, hop.nic, key, false);
  if (dst_gpu == fabric::kNoNode) return false;
  add(pcie_link(hop.relay_gpu, hop.relay_nic), hop.relay_gpu, r);
  add(hop.circuit, hop.relay_nic, r);
  add(pcie_link(dst_gpu, hop.nic), hop.nic, r);
  ++r.cost.proxies;  // the relay GPU
  ++r.cost.network_links;
  if (dst_gpu != dst) {
    add(nvlink_of(dst_gpu), dst_gpu, r);
    add(nvlink_of(dst), t.nvswitch(t.node(dst).server), r);
    ++r.cost.proxies;
  }
  return true;
}

bool Router::relay_leg(NodeId from, NodeId to, std::uint64_t key, Route& r) {
  Route& leg = relay_leg_;
  leg.channels.clear();
  leg.latency = Time::zero();
  leg.cost = {};
  if (!append_direct(from, to, key, false, leg)) return false;
  r.channels.insert(r.channels.end(), leg.channels.begin(), leg.channels.end());
  r.latency += leg.latency;
  // The leg's proxies include the relay server's GPU on its way out (or in), if another one.
  r.cost.proxies += leg.cost.proxies;
  r.cost.network_links += leg.cost.network_links;
  return true;
}

void Router::offer_relayed(const Route& r) {
  if (relay_count_ > 0) {
    const RouteCost best = relay_best_.front().cost;
    if (best < r.cost) return;
    if (r.cost < best) relay_count_ = 0;
  }
  for (std::size_t i = 0; i < relay_count_; ++i) {
    if (relay_best_[i].channels == r.channels) return;  // the same route found twice
  }
  if (relay_best_.size() <= relay_count_) relay_best_.emplace_back();
  Route& kept = relay_best_[relay_count_++];
  kept.channels.assign(r.channels.begin(), r.channels.end());
  kept.latency = r.latency;
  kept.cost = r.cost;
}

bool Router::append_relayed(NodeId src, NodeId dst, std::uint64_t key, Route& out) {
  if (!has_ocs_nics_ || l_->circuits() == 0) return false;
  const Topology& t = *t_;
  const int s_src = t.node(src).server;
  const int s_dst = t.node(dst).server;
  relay_hops(s_src, s_dst, src_hops_);
  relay_hops(s_dst, s_src, dst_hops_);
  Route& r = relay_route_;
  const auto reset = [&r] {
    r.channels.clear();
    r.latency = Time::zero();
    r.cost = {};
  };
  relay_count_ = 0;
  // One relay server: joined by a circuit to the source's server, then to the destination's.
  for (const RelayHop& hop : src_hops_) {
    reset();
    if (into_relay(src, hop, key, r) && relay_leg(hop.relay_gpu, dst, key, r)) offer_relayed(r);
  }
  for (const RelayHop& hop : dst_hops_) {
    reset();
    if (relay_leg(src, hop.relay_gpu, key, r) && out_of_relay(hop, dst, key, r)) {
      offer_relayed(r);
    }
  }
  // Two, one next to each end, when both ends are cut off (a server with circuits to both ends
  // is a single relay, found above).
  if (relay_count_ == 0) {
    for (const RelayHop& in : src_hops_) {
      for (const RelayHop& to : dst_hops_) {
        if (t.node(in.relay_nic).server == t.node(to.relay_nic).server) continue;
        reset();
        if (into_relay(src, in, key, r) && relay_leg(in.relay_gpu, to.relay_gpu, key, r) &&
            out_of_relay(to, dst, key, r)) {
          offer_relayed(r);
        }
      }
    }
  }
  if (relay_count_ == 0) return false;
  const Route& chosen = relay_best_[ecmp_pick(key, EcmpSalt::kRelayRoute, relay_count_)];
  out.channels.assign(chosen.channels.begin(), chosen.channels.end());
  out.latency = chosen.latency;
  out.cost = chosen.cost;
  ++relayed_routes_;
  return true;
}

bool Router::build_route(NodeId src, NodeId dst, std::uint64_t key, Route& out, bool allow_down) {
  const Topology& t = *t_;
  out.channels.clear();
  out.latency = Time::zero();
  out.cost = {};
  out.up = true;
  if (src == dst) return true;  // nothing crosses the fabric

  const int s_src = t.node(src).server;
  const int s_dst = t.node(dst).server;
  if (s_src == s_dst) {
    const LinkId ls = nvlink_of(src);
    const LinkId ld = nvlink_of(dst);
    if (ls == kNoLink || ld == kNoLink || !usable(ls, allow_down) || !usable(ld, allow_down)) {
      return false;
    }
    add(ls, src, out);
    add(ld, t.nvswitch(s_src), out);
  } else if (forwarding_ != nullptr && forwarding_->circuits_only(s_src) &&
             forwarding_->circuits_only(s_dst) &&
             forwarding_->distance(s_src, s_dst, allow_down) != 1) {
    // Servers on a patch panel only, without a circuit between them: no direct route exists,
    // the search for one is skipped.
    if (!append_forwarded(src, dst, key, allow_down, out)) return false;
  } else if (!append_direct(src, dst, key, allow_down, out) &&
             !append_forwarded(src, dst, key, allow_down, out) &&
             (allow_down || !append_relayed(src, dst, key, out))) {
    // Relaying is the last resort, over up links only: a stalled route (allow_down) is the
    // route the transfer would take once its links are back.
    return false;
  }
  if (allow_down) {
    for (ChannelId ch : out.channels) {
      if (!link_up(link_of_channel(ch))) out.up = false;
    }
  }
  return true;
}

void Router::route(NodeId src, NodeId dst, std::uint64_t flow_hash, Route& out) {
  if (find(src, dst, flow_hash, out, false)) return;
  if (find(src, dst, flow_hash, out, true)) return;
  throw Error("", "transfer",
              fmt::format("no route from {} to {} in fabric '{}'", t_->name(src), t_->name(dst),
                          t_->spec()));
}

}  // namespace mfabric::net
