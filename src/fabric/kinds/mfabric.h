// mFabric: alpha NICs per server on a regional optical circuit switch (OCS) whose circuits each
// region's controller re-plans during training (sim's "mfabric" controller), the other NICs on an
// EPS fat-tree. Parameters: alpha, region, radix, oversubscription, ocs_ports, reconfiguration,
// planner, policy, switching, eps_link, ocs_link, ocs_optics (`mfabric fabrics` lists them; their
// typed form is fabric/ocs_params.h).
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

// Servers per region when the spec names none (and the cluster has as many): the one place this
// default is set; everything else reads it from the kind's traits (default_region).
inline constexpr int kDefaultMfabricRegion = 8;

FabricKind mfabric_kind();

}  // namespace mfabric::fabric::kinds
