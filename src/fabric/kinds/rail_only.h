// Rail-only: one non-blocking Clos per rail (NIC i of every server); no switch joins two rails.
// Parameter radix.
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

FabricKind rail_only_kind();

}  // namespace mfabric::fabric::kinds
