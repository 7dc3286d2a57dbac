// Fabric builders: FabricSpec text -> Topology. A new fabric is a new builder registered in
// fabric_kinds(); nothing else changes.
//
//   fat-tree        every NIC is a host of a 1-, 2- or 3-tier Clos; params radix (64),
//                   oversubscription (1, leaf down:up ratio, e.g. 3 for 3:1)
//   rail-optimized  NIC i of every server on rail i's leaves; spines join the rails; params radix,
//                   oversubscription
//   rail-only       one Clos per rail, no spine joins rails; param radix
//   topoopt         every NIC on one optical patch panel; circuit degree = NICs per server
//   mfabric         alpha NICs per server on a regional OCS, the rest on an EPS fat-tree; params
//                   alpha (6), region (servers per region, 8), radix (64), oversubscription (1),
//                   ocs_ports (ports per OCS device, 576), reconfiguration (25ms)
//
// Every builder validates its parameters and throws mfabric::Error naming the parameter and
// what it expects.
#pragma once

#include <string>
#include <vector>

#include "core/spec.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

// mFabric's servers per region when the spec names none (and the cluster has as many).
inline constexpr int kDefaultMfabricRegion = 8;

struct FabricParam {
  std::string name;
  std::string default_value;
  std::string meaning;  // with units
};

struct FabricKind {
  std::string name;
  std::string summary;
  std::vector<FabricParam> params;
};

// All known fabric kinds, in the order tables list them.
const std::vector<FabricKind>& fabric_kinds();
const FabricKind* find_fabric_kind(const std::string& name);

// The fabrics `mfabric cost` compares by default (the paper's baselines plus mFabric).
std::vector<std::string> default_comparison_fabrics();

// Builds the fabric named by `spec` on `cluster`. Throws mfabric::Error for an unknown kind
// (listing the known ones), an unknown parameter, or an invalid value.
// A topology whose estimated memory (estimate_topology_bytes) is above `max_memory` is refused
// before anything is built.
Topology build_fabric(Spec spec, const ClusterSpec& cluster,
                      std::int64_t max_memory = kDefaultMaxTopologyMemory);
Topology build_fabric(const std::string& spec_text, const ClusterSpec& cluster,
                      std::int64_t max_memory = kDefaultMaxTopologyMemory);

}  // namespace mfabric::fabric
