// The fat-tree: every NIC is a host of a 1-, 2- or 3-tier Clos (leaf / spine / core) of
// electrical switches. Parameters radix (64) and oversubscription (1; 3 for 3:1).
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

FabricKind fat_tree_kind();

}  // namespace mfabric::fabric::kinds
