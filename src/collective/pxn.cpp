// PXN all-to-all(v), NCCL's "PCI x NVLink" path for rail-optimized fabrics (docs/collectives.md,
// "pxn"): bytes for a GPU on another server first move over the NVSwitch to the sending
// server's GPU on the destination's rail (the same local index), which sends them over its own
// NIC: every inter-server byte stays on one rail and never crosses a spine. Two steps: the
// NVSwitch moves, then the network sends with the server-local share alongside. A pair whose
// rail GPU cannot send (failed, or without an electrical NIC) goes directly.

#include <array>
#include <cstddef>

#include "collective/lowering_impl.h"
#include "collective/step_bytes.h"

namespace mfabric::collective::detail {

Plan PxnLowering::lower(const CollectiveRequest& request, const fabric::Topology& topology) const {
  const AllToAllBytes bytes_of = all_to_all_bytes(request, topology, name());
  const int n = static_cast<int>(request.members.size());

  StepBytes nvswitch, network;
  for (int i = 0; i < n; ++i) {
    const fabric::NodeId src = request.members[static_cast<std::size_t>(i)];
    const fabric::Node& from = topology.node(src);
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const std::int64_t bytes = bytes_of.at(i, j);
      if (bytes <= 0) continue;
      const fabric::NodeId dst = request.members[static_cast<std::size_t>(j)];
      const fabric::Node& to = topology.node(dst);
      if (from.server == to.server) {
        add_bytes(network, src, dst, bytes);  // NVSwitch, alongside the network step
        continue;
      }
      const fabric::NodeId rail = topology.gpu(from.server, to.index);
      if (rail == src || !has_eps_nic(topology, request.circuits, rail)) {
        add_bytes(network, src, dst, bytes);
        continue;
      }
      add_bytes(nvswitch, src, rail, bytes);
      add_bytes(network, rail, dst, bytes);
    }
  }
  return plan_of(std::array<const StepBytes*, 2>{&nvswitch, &network}, request.flow_hash);
}

}  // namespace mfabric::collective::detail
