// Host-based forwarding over patch-panel circuits (TopoOpt, docs/network.md "Forwarding over
// circuits"): servers whose NICs all sit on a patch panel reach a server they have no circuit to
// through intermediate servers, over the k shortest server paths of the circuits up now.
//
// This object is the server level of it: the graph of circuits between patch-panel NICs, the
// k shortest paths of each server pair (fabric::ForwardingPaths, searched on a pair's first
// request and kept), and the choice of one path and one circuit per hop for a flow hash. The
// Router turns the circuits it returns into channels (PCIe, NvLink, NVSwitch inside the servers
// crossed). Circuits between OCS NICs (mFabric) are never in the graph: nothing changes there.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fabric/server_paths.h"
#include "fabric/topology.h"
#include "net/link_table.h"

namespace mfabric::net {

class CircuitForwarding {
 public:
  // `up` is the router's per-link state (1 = up), read when the graph of up circuits is built;
  // both must outlive this object.
  CircuitForwarding(const LinkTable& links, const std::vector<std::uint8_t>& up,
                    const fabric::ForwardingOptions& options = {});

  // Some NIC of the fabric is on a patch panel (otherwise no method below finds anything).
  bool enabled() const { return enabled_; }
  // Every NIC of the server is on a patch panel: it reaches other servers over circuits only.
  bool circuits_only(int server) const {
    return circuits_only_[static_cast<std::size_t>(server)] != 0;
  }
  // Circuits were connected, disconnected or changed state: the graphs are rebuilt on next use.
  void invalidate();

  // Hops between two servers over patch-panel circuits (up ones, or with allow_down all
  // connected ones); -1 if unreachable, 0 for a == b.
  int distance(int a, int b, bool allow_down);

  // The circuits a flow from server `a` to server `b` crosses, in order, or false if no path of
  // circuits joins them. The path is one of the pair's k shortest, picked by `key`; at each hop,
  // one of the parallel circuits between the two servers, picked by `key` too, except that at
  // the first and last hop a circuit at `src_gpu`'s (resp. `dst_gpu`'s) own NIC is preferred
  // when there is one (as the Router prefers a GPU's own NIC).
  bool choose(int a, int b, fabric::NodeId src_gpu, fabric::NodeId dst_gpu, std::uint64_t key,
              bool allow_down, std::vector<fabric::LinkId>& circuits);

  // Graph rebuilds so far (tests: rebuilt lazily, once per change).
  int rebuilds() const { return rebuilds_; }

 private:
  // One mode's graph: server pairs joined by at least one circuit, their circuits, the paths.
  struct Graph {
    std::vector<fabric::ServerLink> pairs;
    std::vector<std::int32_t> circuit_begin;  // pair p's circuits: [begin[p], begin[p + 1])
    std::vector<fabric::LinkId> circuits;     // by pair, ascending link id
    std::optional<fabric::ForwardingPaths> paths;
  };
  Graph& graph(bool allow_down);
  void build(Graph& g, bool allow_down);
  // The NIC of `circuit` on `server`'s side.
  fabric::NodeId end_at(fabric::LinkId circuit, int server) const;
  bool own_nic(fabric::NodeId gpu, fabric::NodeId nic) const;

  const LinkTable& links_;
  const std::vector<std::uint8_t>& up_;
  fabric::ForwardingOptions options_;
  bool enabled_ = false;
  std::vector<std::uint8_t> circuits_only_;  // per server
  Graph graphs_[2];                          // [0] up circuits, [1] all connected circuits
  bool stale_[2] = {true, true};
  int rebuilds_ = 0;
  std::vector<fabric::LinkId> candidates_;  // scratch
};

}  // namespace mfabric::net
