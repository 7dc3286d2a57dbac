#include "net/circuits.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mfabric::net {

std::vector<bool> servers_of_nics(const fabric::Topology& topology,
                                  std::span<const fabric::NodeId> nics) {
  std::vector<bool> on(static_cast<std::size_t>(topology.cluster().servers), false);
  for (const fabric::NodeId nic : nics) {
    if (nic < 0 || static_cast<std::size_t>(nic) >= topology.nodes().size() ||
        topology.node(nic).kind != fabric::NodeKind::Nic) {
      throw Error("", "nic", fmt::format("node {} is not a NIC of the topology", nic));
    }
    on[static_cast<std::size_t>(topology.node(nic).server)] = true;
  }
  return on;
}

}  // namespace mfabric::net
