// TopoOpt: every NIC on one optical patch panel; the topology is planned from the job before
// training and fixed (sim's "topoopt" controller); circuit degree = NICs per server. No
// parameters.
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

FabricKind topoopt_kind();

}  // namespace mfabric::fabric::kinds
