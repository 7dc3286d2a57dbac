// Which PCIe channels of the flow backend mirror a cable (docs/network.md, "Solver"): a NIC with
// one PCIe link and one cable to a switch or NIC, the PCIe no slower, carries on its PCIe
// exactly what its cable carries, so the solver leaves the PCIe channel out of every route and
// the cable stands for it (its statistics are the cable's). The pairs hold until a rate change
// makes the PCIe slower or a new link at the NIC gives it a second way out.
#pragma once

#include <cstddef>
#include <vector>

#include "fabric/topology.h"
#include "net/flow/flow_records.h"
#include "net/link_table.h"

namespace mfabric::net::flow {

class PcieMirror {
 public:
  // The channel tables grew to `channels` channels (new ones unpaired).
  void resize(std::size_t channels) {
    twin_.resize(channels, -1);
    mirror_.resize(channels, -1);
  }
  // Pairs every PCIe channel of the topology that mirrors its NIC's cable, by the channels'
  // capacities `chans` (once, when the tables are first made).
  void find(const fabric::Topology& topo, const std::vector<Chan>& chans);

  // The cable channel a mirrored PCIe channel stands in, or -1.
  ChannelId cable_of(ChannelId pcie) const { return twin_[static_cast<std::size_t>(pcie)]; }
  // The PCIe channel that mirrors a cable channel, or -1.
  ChannelId pcie_of(ChannelId cable) const { return mirror_[static_cast<std::size_t>(cable)]; }
  void pair(ChannelId pcie, ChannelId cable) {
    twin_[static_cast<std::size_t>(pcie)] = cable;
    mirror_[static_cast<std::size_t>(cable)] = pcie;
  }
  void unpair(ChannelId pcie, ChannelId cable) {
    twin_[static_cast<std::size_t>(pcie)] = -1;
    mirror_[static_cast<std::size_t>(cable)] = -1;
  }

  // A route's channels as routed, from the channels the solver keeps (`path`, `len` of them):
  // each mirrored PCIe channel put back next to its cable.
  std::vector<ChannelId> full_path(const ChannelId* path, std::int32_t len,
                                   const fabric::Topology& topo, const LinkTable& links) const;

 private:
  std::vector<ChannelId> twin_;    // mirrored PCIe channel -> the cable channel it mirrors
  std::vector<ChannelId> mirror_;  // cable channel -> its mirrored PCIe channel
};

// The node a channel leaves from.
inline fabric::NodeId from_node(const LinkTable& links, ChannelId c) {
  const fabric::Link& k = links.link(link_of_channel(c));
  return c % 2 == 0 ? k.a : k.b;
}

}  // namespace mfabric::net::flow
