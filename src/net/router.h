// Routing of GPU-to-GPU transfers over a Topology (rules in docs/network.md).
//
// A route is a list of directed channels: each fabric Link l is two channels, 2l for a->b and
// 2l+1 for b->a. Inside a server a transfer goes GPU -> NVSwitch -> GPU over the two GPUs'
// NvLink links (so the NVSwitch is a per-GPU egress and ingress port). Between servers it goes
// GPU -> PCIe -> NIC -> network -> NIC -> PCIe -> GPU, detouring through a proxy GPU of the same
// server (over the NVSwitch) at either end when the GPU's own NIC cannot reach the other side.
// The network part is a shortest path over Switch nodes (or a direct NIC-NIC circuit), with
// equal-cost choices made by a hash of the transfer's flow_hash and the hop number (ECMP).
// OCS and patch-panel nodes are never transit: an optical circuit is a direct NIC-NIC link.
// Servers whose NICs are all on a patch panel (TopoOpt) reach a server they have no circuit to
// through intermediate servers (host-based forwarding, circuit_forwarding.h): over the k shortest
// server paths of the circuits up now, crossing each intermediate server in-NIC -> PCIe -> GPU
// [-> NVSwitch -> GPU] -> PCIe -> out-NIC.
// Last, only when none of the above finds a route over up links (failures: a server whose EPS
// NICs are down and that has no circuit to the other end), a transfer is relayed through a server
// joined to the cut-off end by an OCS circuit that is up: in-NIC -> PCIe -> GPU [-> NVSwitch ->
// GPU] -> PCIe -> out-NIC, as forwarding crosses a server (docs/network.md, "Relaying").
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "net/circuit_forwarding.h"
#include "net/ecmp.h"
#include "net/link_table.h"

namespace mfabric::net {

using ChannelId = std::int32_t;
inline constexpr fabric::LinkId kNoLink = -1;

// The channel of `link` leaving `from` (one of the link's ends).
inline ChannelId channel_of(const fabric::Topology& t, fabric::LinkId link, fabric::NodeId from) {
  return 2 * link + (t.link(link).a == from ? 0 : 1);
}
inline ChannelId channel_of(const LinkTable& t, fabric::LinkId link, fabric::NodeId from) {
  return 2 * link + (t.link(link).a == from ? 0 : 1);
}
inline fabric::LinkId link_of_channel(ChannelId c) {
  return c / 2;
}

// Ordered lexicographically: fewer proxy GPUs first, then fewer network links. Two routes of
// equal cost are interchangeable for ECMP (and for re-routing around a failed link). A relayed
// route counts the GPUs it crosses in relay servers as proxies, and its circuits and cables as
// network links.
struct RouteCost {
  int proxies = 0;
  int network_links = 0;
  auto operator<=>(const RouteCost&) const = default;
};

struct Route {
  std::vector<ChannelId> channels;
  Time latency;  // sum of the links' latencies
  RouteCost cost;
  bool up = true;  // false: the route crosses a down link (only from route(..., allow_down))
};

class Router {
 public:
  // Routes over the topology's links only (no circuits).
  explicit Router(const fabric::Topology& topology);
  // Routes over the table's links, circuits included (the table must outlive the router). A
  // circuit slot is down until set_link_up(id, true) after LinkTable::connect, and must be set
  // down before LinkTable::disconnect.
  explicit Router(const LinkTable& links);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Re-reads the topology after nodes or links were appended to it (not allowed once the table
  // has circuit slots, whose ids follow the topology's links); new links are up if their rate
  // is positive.
  void sync();

  // A down link (rate 0) carries no new route.
  void set_link_up(fabric::LinkId link, bool up);
  bool link_up(fabric::LinkId link) const { return up_[static_cast<std::size_t>(link)] != 0; }

  // Fills `out` with the route of a transfer from GPU `src` to GPU `dst` over up links and
  // returns true, or returns false when there is none. Relay servers are tried only when no
  // other route is up. With allow_down, links that are down count as present (out.up tells
  // whether the route found crosses one) and no route is relayed. src == dst gives an empty
  // route. Throws mfabric::Error if src or dst is not a GPU.
  bool find(fabric::NodeId src, fabric::NodeId dst, std::uint64_t flow_hash, Route& out,
            bool allow_down = false);

  // find() over up links, else over all links (a stalled route); throws mfabric::Error naming
  // src and dst when there is no route at all.
  void route(fabric::NodeId src, fabric::NodeId dst, std::uint64_t flow_hash, Route& out);

  // Routes found through relay servers so far (failures only; for tests and diagnostics).
  std::int64_t relayed_routes() const { return relayed_routes_; }

  // Distance tables cached (one per destination switch and link-state mode), for tests and
  // memory accounting.
  std::size_t cached_tables() const;
  // The circuit graph for host-based forwarding; null when no NIC is on a patch panel.
  const CircuitForwarding* forwarding() const { return forwarding_.get(); }

 private:
  static constexpr std::uint16_t kUnreachable = 0xFFFF;
  static constexpr int kInfinity = 1 << 29;

  struct SwitchEdge {
    fabric::LinkId link;
    std::int32_t neighbor;  // switch index
  };

  bool usable(fabric::LinkId l, bool allow_down) const {
    return allow_down || up_[static_cast<std::size_t>(l)] != 0;
  }
  const std::vector<std::uint16_t>& table(std::int32_t dest_switch, bool allow_down);
  // Network links from NIC a to NIC b (kInfinity if unreachable).
  int nic_distance(fabric::NodeId a, fabric::NodeId b, bool allow_down);
  // Link between a GPU and a NIC (kNoLink if none).
  fabric::LinkId pcie_link(fabric::NodeId gpu, fabric::NodeId nic) const;
  fabric::LinkId nvlink_of(fabric::NodeId gpu) const {
    return gpu_nvlink_[static_cast<std::size_t>(gpu)];
  }
  // The GPU (own GPU, or a proxy) that sends through `nic` for `gpu`; kNoNode if the NIC has no
  // usable PCIe link or the proxy cannot be reached over the NVSwitch.
  fabric::NodeId access_gpu(fabric::NodeId gpu, fabric::NodeId nic, std::uint64_t key,
                            bool allow_down) const;
  void append_network(fabric::NodeId a, fabric::NodeId b, std::uint64_t key, bool allow_down,
                      Route& out);
  // A route between GPUs of different servers with one network path between a NIC of each
  // (switches or a direct circuit); false, `out` untouched, if there is none.
  bool append_direct(fabric::NodeId src, fabric::NodeId dst, std::uint64_t key, bool allow_down,
                     Route& out);
  // A route over patch-panel circuits through intermediate servers (CircuitForwarding); false
  // if no path of circuits joins the two servers.
  bool append_forwarded(fabric::NodeId src, fabric::NodeId dst, std::uint64_t key, bool allow_down,
                        Route& out);
  // The GPUs that carry a forwarded flow across a server from NIC `in` to NIC `out`: one GPU
  // on both NICs' PCIe if there is one, else one per NIC (then over the NVSwitch).
  bool forwarding_gpus(fabric::NodeId in, fabric::NodeId out, std::uint64_t key, int hop,
                       bool allow_down, fabric::NodeId& g_in, fabric::NodeId& g_out);
  // --- Relaying (failures only): through servers joined to a cut-off end by an OCS circuit ---
  // An OCS circuit up now from a NIC of one server to a NIC of a relay server, and a GPU of the
  // relay server on the relay NIC's PCIe (the GPU the data crosses the relay server through).
  struct RelayHop {
    fabric::NodeId nic;
    fabric::LinkId circuit;
    fabric::NodeId relay_nic;
    fabric::NodeId relay_gpu;
  };
  // The relay hops of `server`'s OCS NICs, to servers other than `other_end`, in NIC order.
  void relay_hops(int server, int other_end, std::vector<RelayHop>& into) const;
  // A route through one relay server next to either end, else through two (one next to each
  // end), over up links only; among the cheapest, the flow hash picks. False, `out` untouched,
  // if there is none.
  bool append_relayed(fabric::NodeId src, fabric::NodeId dst, std::uint64_t key, Route& out);
  // src [-> NVSwitch -> proxy] -> PCIe -> hop.nic -> circuit -> hop.relay_nic -> PCIe ->
  // hop.relay_gpu; false if src cannot reach hop.nic.
  bool into_relay(fabric::NodeId src, const RelayHop& hop, std::uint64_t key, Route& r) const;
  // hop.relay_gpu -> PCIe -> hop.relay_nic -> circuit -> hop.nic -> PCIe -> [proxy -> NVSwitch
  // ->] dst; false if hop.nic cannot reach dst.
  bool out_of_relay(const RelayHop& hop, fabric::NodeId dst, std::uint64_t key, Route& r) const;
  // The direct route between GPUs of two servers (append_direct) appended to `r`.
  bool relay_leg(fabric::NodeId from, fabric::NodeId to, std::uint64_t key, Route& r);
  // Keeps a candidate relayed route if it is among the cheapest so far (duplicates dropped).
  void offer_relayed(const Route& r);

  void add(fabric::LinkId l, fabric::NodeId from, Route& out) const;
  // find() after its checks; `key` is the mixed flow hash all choices derive from.
  bool build_route(fabric::NodeId src, fabric::NodeId dst, std::uint64_t key, Route& out,
                   bool allow_down);

  std::unique_ptr<LinkTable> own_;  // when constructed from a topology
  const LinkTable* l_;
  const fabric::Topology* t_;
  std::size_t nodes_seen_ = 0;
  std::size_t links_seen_ = 0;
  std::vector<std::uint8_t> up_;
  std::vector<fabric::LinkId> gpu_nvlink_;  // per node (kNoLink unless a GPU)
  // Per node: a GPU's PCIe link and the NIC at its other end when it has exactly one (every
  // built fabric's GPUs have), which pcie_link() answers without walking the NIC's links: it
  // runs for every route and the walk was 5% of a 1,024-server run. kNoLink and kNoNode
  // otherwise; gpu_pcie_many_ says a GPU has several.
  std::vector<fabric::LinkId> gpu_pcie_;
  std::vector<fabric::NodeId> gpu_pcie_nic_;
  std::vector<std::uint8_t> gpu_pcie_many_;
  std::vector<std::int32_t> switch_index_;  // per node (-1 unless a Switch)
  // Switch-switch adjacency in compressed rows, by switch index.
  std::vector<std::int32_t> switch_row_;
  std::vector<SwitchEdge> switch_edges_;
  // [mode][dest switch]: hop counts from every switch to the destination switch; empty until
  // first used. mode 0 = up links only, 1 = all links.
  std::vector<std::vector<std::uint16_t>> tables_[2];
  std::vector<std::int32_t> bfs_queue_;
  // Scratch for candidate NIC pairs.
  struct Candidate {
    fabric::NodeId a, b, src_gpu, dst_gpu;
  };
  std::vector<Candidate> candidates_;
  std::vector<fabric::NodeId> src_via_, dst_via_;

  std::vector<std::int32_t> choices_;

  // Host-based forwarding over patch-panel circuits; null when no NIC is on a patch panel.
  std::unique_ptr<CircuitForwarding> forwarding_;
  std::vector<fabric::LinkId> hop_circuits_;  // scratch
  std::vector<fabric::NodeId> in_owners_, out_owners_;

  // Relaying: whether any NIC is on an OCS (otherwise no route is ever relayed), and scratch.
  bool has_ocs_nics_ = false;
  std::int64_t relayed_routes_ = 0;
  std::vector<RelayHop> src_hops_, dst_hops_;
  Route relay_route_, relay_leg_;
  std::vector<Route> relay_best_;  // the cheapest candidates: [0, relay_count_)
  std::size_t relay_count_ = 0;
};

}  // namespace mfabric::net
