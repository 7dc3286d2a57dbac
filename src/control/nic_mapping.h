// Step 4 of Algorithm 1: circuits between servers -> concrete OCS NICs at both ends
// (docs/control-plane.md). The OCS NICs of a server are its LAST alpha NICs (local indices
// nics - alpha .. nics - 1, as fabric::build_mfabric cables them); NIC j sits on NUMA node
// floor(j * numa / nics) (fabric/topology.h).
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "control/planner.h"
#include "fabric/ocs_params.h"

namespace mfabric::control {

struct ServerNics {
  int nics = 8;   // NICs per server
  int alpha = 6;  // of them on the OCS: the last alpha
  int numa = 2;   // NUMA nodes the NICs are split over

  int first_ocs_nic() const { return nics - alpha; }
  int numa_of(int nic) const { return nic * numa / nics; }
  // mfabric::Error naming the field unless 1 <= alpha <= nics - 1 and 1 <= numa <= nics.
  void validate() const;
};

// One circuit: (server, nic) joined to (peer_server, peer_nic); servers region-local, NICs local
// indices in their server; server < peer_server.
struct PortCircuit {
  int server = 0;
  int nic = 0;
  int peer_server = 0;
  int peer_nic = 0;
  auto operator<=>(const PortCircuit&) const = default;
};

// Every circuit of the plan on its own pair of OCS NICs; each NIC used at most once. Parallel
// circuits of a pair are spread over NUMA nodes at both ends where free NICs allow: pairs with
// more circuits are placed first (then in (i, j) order), and each circuit takes, at each end,
// the NUMA node holding the fewest of its pair's circuits so far (ties: the node with more free
// OCS NICs, then the lower node), and there the free OCS NIC with the lowest index. Output in
// placement order.
//
// `unusable` holds (region-local server, local NIC index) pairs of OCS NICs that must not be
// used (failed, or held by a circuit outside the plan, e.g. a pinned relay circuit): they are
// never assigned, as if taken from the start, and count as taken in the NUMA tie-break.
//
// mfabric::Error when the plan gives a server more circuits than its usable OCS NICs (alpha
// less its unusable ones), or when an unusable entry is not an OCS NIC of a server of the plan.
std::vector<PortCircuit> map_to_nics(const CircuitPlan& plan, const ServerNics& nics,
                                     const std::set<std::pair<int, int>>& unusable = {});

}  // namespace mfabric::control
