// Rail-optimized: NIC i of every server on rail i's leaves; spines (and cores) join the rails.
// Parameters radix and oversubscription. NCCL's PXN is its all-to-all by default.
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

FabricKind rail_optimized_kind();

}  // namespace mfabric::fabric::kinds
