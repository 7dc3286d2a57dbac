// NVL72-style NVLink domains: each server is one domain (gpus_per_server GPUs on its NVSwitch)
// with one scale-out NIC per GPU on a fat-tree, as GB200 NVL72. Parameters radix,
// oversubscription and domain (GPUs per NVLink domain, 72); the spare GPUs' scale-out ports of
// each domain are charged in the cost.
#pragma once

#include "fabric/fabric_kind.h"

namespace mfabric::fabric::kinds {

// GB200 NVL72: 72 GPUs per NVLink domain.
inline constexpr int kDefaultNvlDomain = 72;

FabricKind nvl72_kind();

}  // namespace mfabric::fabric::kinds
