#include "net/flow/pcie_mirror.h"

#include "net/router.h"

namespace mfabric::net::flow {

void PcieMirror::find(const fabric::Topology& topo, const std::vector<Chan>& chans) {
  const auto cap = [&](ChannelId c) { return chans[static_cast<std::size_t>(c)].cap; };
  for (std::size_t v = 0; v < topo.nodes().size(); ++v) {
    const auto nic = static_cast<fabric::NodeId>(v);
    if (topo.node(nic).kind != fabric::NodeKind::Nic) continue;
    fabric::LinkId pcie = kNoLink;
    fabric::LinkId cable = kNoLink;
    int pcies = 0;
    int cables = 0;
    for (fabric::LinkId l : topo.links_of(nic)) {
      const fabric::Link& k = topo.link(l);
      const fabric::NodeKind other = topo.node(topo.other_end(l, nic)).kind;
      if (k.kind == fabric::LinkKind::Pcie) {
        pcie = l;
        ++pcies;
      } else if (k.kind == fabric::LinkKind::Cable &&
                 (other == fabric::NodeKind::Switch || other == fabric::NodeKind::Nic)) {
        cable = l;
        ++cables;
      }
    }
    if (pcies != 1 || cables != 1) continue;
    if (cap(2 * pcie) < cap(2 * cable)) continue;
    const fabric::NodeId gpu = topo.other_end(pcie, nic);
    const fabric::NodeId sw = topo.other_end(cable, nic);
    pair(channel_of(topo, pcie, gpu), channel_of(topo, cable, nic));
    pair(channel_of(topo, pcie, nic), channel_of(topo, cable, sw));
  }
}

std::vector<ChannelId> PcieMirror::full_path(const ChannelId* path, std::int32_t len,
                                             const fabric::Topology& topo,
                                             const LinkTable& links) const {
  std::vector<ChannelId> out;
  for (std::int32_t i = 0; i < len; ++i) {
    const ChannelId m = pcie_of(path[i]);
    // The cable leaving a NIC (its channel from the NIC) follows the PCIe into the NIC.
    const bool out_of_nic =
        m >= 0 && topo.node(from_node(links, path[i])).kind == fabric::NodeKind::Nic;
    if (m >= 0 && out_of_nic) out.push_back(m);
    out.push_back(path[i]);
    if (m >= 0 && !out_of_nic) out.push_back(m);
  }
  return out;
}

}  // namespace mfabric::net::flow
