// Building a fabric: FabricSpec text -> Topology, by the fabric kind the spec names
// (fabric/fabric_kinds.h: fat-tree, rail-optimized, rail-only, topoopt, mfabric, nvl72; `mfabric
// fabrics` lists them with their parameters). Each kind validates its parameters and throws
// mfabric::Error naming the parameter and what it expects.
#pragma once

#include <string>
#include <vector>

#include "core/spec.h"
#include "fabric/fabric_kinds.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

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
