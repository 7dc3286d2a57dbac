// Hierarchical all-to-all(v) on an electrical fabric (docs/collectives.md, "hierarchical"): the
// proxy algorithm's three steps with every rail as a channel, as DeepEP's and NCCL PXN's
// two-level all-to-alls do. The bytes of each pair on different servers are split evenly over
// the local indices c whose GPUs can send on both servers: gathered over the NVSwitch onto GPU c
// of the sending server, sent to GPU c of the receiving server over rail c, scattered to the
// destination over its NVSwitch. A hot GPU's traffic so leaves through all of its server's NICs
// (as on mFabric's circuits), not its own NIC alone. The server-local share moves in the middle
// step. Pairs with no common rail go directly.
#include <array>
#include <cstddef>
#include <vector>

#include "collective/lowering_impl.h"
#include "collective/step_bytes.h"

namespace mfabric::collective::detail {

Plan hierarchical_all_to_all(const CollectiveRequest& request, const fabric::Topology& topology) {
  const AllToAllBytes bytes_of = all_to_all_bytes(request, topology, "hierarchical");
  const int n = static_cast<int>(request.members.size());
  const int per_server = topology.cluster().gpus_per_server;

  // Per member server, which local indices can send (computed once per server).
  std::vector<std::vector<char>> sends(static_cast<std::size_t>(topology.cluster().servers));
  const auto can_send = [&](int server) -> const std::vector<char>& {
    std::vector<char>& s = sends[static_cast<std::size_t>(server)];
    if (s.empty()) {
      s.resize(static_cast<std::size_t>(per_server));
      for (int c = 0; c < per_server; ++c) {
        s[static_cast<std::size_t>(c)] =
            has_eps_nic(topology, request.circuits, topology.gpu(server, c)) ? 1 : 0;
      }
    }
    return s;
  };

  StepBytes gather, exchange, scatter;
  std::vector<Channel> rails;  // scratch: one pair of servers' common rails, GPU c to GPU c
  for (int i = 0; i < n; ++i) {
    const fabric::NodeId src = request.members[static_cast<std::size_t>(i)];
    const int s = topology.node(src).server;
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const std::int64_t bytes = bytes_of.at(i, j);
      if (bytes <= 0) continue;
      const fabric::NodeId dst = request.members[static_cast<std::size_t>(j)];
      const int d = topology.node(dst).server;
      if (s == d) {
        add_bytes(exchange, src, dst, bytes);
        continue;
      }
      rails.clear();
      const std::vector<char>& from = can_send(s);
      const std::vector<char>& to = can_send(d);
      for (int c = 0; c < per_server; ++c) {
        if (from[static_cast<std::size_t>(c)] && to[static_cast<std::size_t>(c)])
          rails.push_back({topology.gpu(s, c), topology.gpu(d, c)});
      }
      if (rails.empty()) {
        add_bytes(exchange, src, dst, bytes);
        continue;
      }
      relay_over(rails, src, dst, bytes, i, j, gather, exchange, scatter);
    }
  }
  return plan_of(std::array<const StepBytes*, 3>{&gather, &exchange, &scatter}, request.flow_hash);
}

}  // namespace mfabric::collective::detail
