// mFabric's 5-step all-to-all (docs/collectives.md, "proxy"; mFabric paper section 4):
//   1. every GPU looks up, for each destination server, its server's proxy GPUs: those whose NIC
//      has a circuit to that server, else itself if it has an EPS NIC, else the GPUs with one
//      (failed GPUs and NICs are never proxies);
//   2. it gathers its bytes for that server onto the proxies over the NVSwitch, split evenly
//      when there are several;
//   3. proxies exchange over their circuit or the EPS, and
//   4. the server-local share moves over the NVSwitch at the same time;
//   5. the receiving proxies scatter the bytes to their destination GPUs over the NVSwitch.
// Steps 1-2, 3-4 and 5 are the plan's three steps. Proxies may be GPUs outside the group (the
// GPU of another EP group whose NIC holds the circuit). With neither a circuit nor EPS NICs on
// both servers, a pair's bytes go directly from GPU to GPU (the router finds the way).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "collective/lowering_impl.h"
#include "collective/step_bytes.h"

namespace mfabric::collective::detail {
namespace {

using fabric::NodeId;

// The GPU a NIC hangs off (its first PCIe link), or kNoNode.
NodeId gpu_of_nic(const fabric::Topology& t, NodeId nic) {
  for (fabric::LinkId l : t.links_of(nic)) {
    if (t.link(l).kind == fabric::LinkKind::Pcie) return t.other_end(l, nic);
  }
  return fabric::kNoNode;
}

// What the lowering needs to know of one server: its GPUs with an EPS NIC, and for each of its
// circuits the local GPU, the peer server and the peer GPU.
struct ServerPorts {
  std::vector<NodeId> eps_gpus;
  struct Circuit {
    NodeId gpu;
    int peer_server;
    NodeId peer_gpu;
  };
  std::vector<Circuit> circuits;
};

ServerPorts ports_of(const fabric::Topology& t, const CircuitView* view, int server) {
  ServerPorts p;
  for (int local = 0; local < t.cluster().gpus_per_server; ++local) {
    const NodeId gpu = t.gpu(server, local);
    if (view != nullptr && !view->usable(gpu)) continue;
    bool eps = false;
    for (fabric::LinkId l : t.links_of(gpu)) {
      if (t.link(l).kind != fabric::LinkKind::Pcie) continue;
      const NodeId nic = t.other_end(l, gpu);
      if (view != nullptr && !view->usable(nic)) continue;
      const fabric::NicRole role = t.node(nic).role;
      if (role == fabric::NicRole::Eps) eps = true;
      if (view == nullptr || role == fabric::NicRole::Eps || role == fabric::NicRole::None)
        continue;
      const NodeId peer = view->circuit_peer(nic);
      if (peer == fabric::kNoNode) continue;
      const NodeId peer_gpu = gpu_of_nic(t, peer);
      if (peer_gpu != fabric::kNoNode) p.circuits.push_back({gpu, t.node(peer).server, peer_gpu});
    }
    if (eps) p.eps_gpus.push_back(gpu);
  }
  return p;
}

}  // namespace

Plan ProxyLowering::lower(const CollectiveRequest& request,
                          const fabric::Topology& topology) const {
  const AllToAllBytes bytes_of = all_to_all_bytes(request, topology, name());

  // The channels between every ordered pair of the members' servers.
  const std::vector<std::vector<int>> by_server = members_by_server(request, topology);
  const std::size_t servers = by_server.size();
  std::vector<int> server_id(servers);
  std::vector<ServerPorts> ports(servers);
  for (std::size_t s = 0; s < servers; ++s) {
    server_id[s] = topology.node(request.members[static_cast<std::size_t>(by_server[s][0])]).server;
    ports[s] = ports_of(topology, request.circuits, server_id[s]);
  }
  auto circuits_between = [&](std::size_t s, std::size_t d) {
    std::vector<Channel> out;
    for (const ServerPorts::Circuit& c : ports[s].circuits) {
      if (c.peer_server == server_id[d]) out.push_back({c.gpu, c.peer_gpu});
    }
    return out;
  };
  // Without a circuit: a GPU with an EPS NIC sends (receives) itself, the others go through
  // their server's EPS GPUs; pairs in order so that several EPS NICs share the bytes.
  auto eps_between = [&](std::size_t s, std::size_t d, NodeId src, NodeId dst,
                         std::vector<Channel>& out) {
    out.clear();
    const auto& eps_s = ports[s].eps_gpus;
    const auto& eps_d = ports[d].eps_gpus;
    const bool src_eps = std::find(eps_s.begin(), eps_s.end(), src) != eps_s.end();
    const bool dst_eps = std::find(eps_d.begin(), eps_d.end(), dst) != eps_d.end();
    const std::span<const NodeId> a = src_eps ? std::span<const NodeId>(&src, 1) : eps_s;
    const std::span<const NodeId> b = dst_eps ? std::span<const NodeId>(&dst, 1) : eps_d;
    if (a.empty() || b.empty()) return;
    const std::size_t k = std::max(a.size(), b.size());
    for (std::size_t c = 0; c < k; ++c)
      out.push_back({a[c % a.size()], b[c % b.size()]});
  };

  StepBytes gather, exchange, scatter;
  std::vector<Channel> eps;  // scratch, one pair's EPS channels
  for (std::size_t s = 0; s < servers; ++s) {
    for (std::size_t d = 0; d < servers; ++d) {
      const std::vector<Channel> circuits =
          s == d ? std::vector<Channel>{} : circuits_between(s, d);
      for (int i : by_server[s]) {
        for (int j : by_server[d]) {
          if (i == j) continue;
          const std::int64_t bytes = bytes_of.at(i, j);
          if (bytes <= 0) continue;
          const NodeId src = request.members[static_cast<std::size_t>(i)];
          const NodeId dst = request.members[static_cast<std::size_t>(j)];
          if (s == d) {
            add_bytes(exchange, src, dst, bytes);  // server-local (step 4)
            continue;
          }
          if (circuits.empty()) eps_between(s, d, src, dst, eps);
          const std::vector<Channel>& channels = circuits.empty() ? eps : circuits;
          const auto k = static_cast<std::int64_t>(channels.size());
          if (k == 0) {
            add_bytes(exchange, src, dst, bytes);  // no proxy to use: the router finds the way
            continue;
          }
          relay_over(channels, src, dst, bytes, i, j, gather, exchange, scatter);
        }
      }
    }
  }

  return plan_of(std::array<const StepBytes*, 3>{&gather, &exchange, &scatter}, request.flow_hash);
}

}  // namespace mfabric::collective::detail
