// The pieces of the paper's cost formulas (docs/cost-model.md, "paper") that several fabric kinds
// share: the fat-tree's switch ports layer by layer, and fibres for transceivers. Each kind's own
// formula is in its unit (fabric/kinds/).
#pragma once

#include <cstdint>

#include "fabric/cost.h"

namespace mfabric::fabric {

// ceil(down_ports / oversubscription); mfabric::Error naming "oversubscription" for a ratio so
// small that the count leaves the range where doubles count exactly.
std::int64_t paper_uplinks(std::int64_t down_ports, double oversubscription);

// Switch ports of a fat-tree whose edge layer has `edge_down` host-facing ports: edge-up =
// ceil(edge-down / oversubscription), aggregation = 2 x edge-up, and (with a core layer) core =
// aggregation. This is the paper's per-layer count, not a port-exact Clos (docs/cost-model.md).
std::int64_t paper_fat_tree_switch_ports(std::int64_t edge_down, double oversubscription,
                                         bool core);

// Fibres for a set of transceivers: each fibre has one at both ends; an odd count rounds up.
std::int64_t paper_fibres_for(std::int64_t transceivers);

// The bill of a fat-tree (with a core layer) or of rails without one over `nics` NICs: its switch
// ports, a transceiver at every switch port and NIC, their fibres. mfabric::Error naming
// "oversubscription" unless it is a positive finite ratio.
BillOfMaterials paper_fat_tree_bill(std::int64_t nics, double oversubscription, bool core);

}  // namespace mfabric::fabric
