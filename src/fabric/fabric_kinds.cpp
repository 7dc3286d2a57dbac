#include "fabric/fabric_kinds.h"

#include <algorithm>
#include <string>

#include "fabric/kinds/fat_tree.h"
#include "fabric/kinds/mfabric.h"
#include "fabric/kinds/nvl72.h"
#include "fabric/kinds/rail_only.h"
#include "fabric/kinds/rail_optimized.h"
#include "fabric/kinds/topoopt.h"

namespace mfabric::fabric {

FabricKindRegistry& fabric_kinds() {
  static FabricKindRegistry kinds(
      "fabric",
      {
          {"fat-tree",
           "every NIC is a host of a 1-, 2- or 3-tier Clos (leaf/spine/core) of electrical "
           "switches",
           kinds::fat_tree_kind()},
          {"rail-optimized",
           "NIC i of every server on rail i's leaves; spines (and cores) join the rails",
           kinds::rail_optimized_kind()},
          {"rail-only",
           "one non-blocking Clos per rail (NIC i of every server); no switch joins two rails",
           kinds::rail_only_kind()},
          {"topoopt",
           "every NIC on one optical patch panel; topology fixed before training; circuit degree "
           "= NICs per server",
           kinds::topoopt_kind()},
          {"mfabric",
           "alpha NICs per server on a regional optical circuit switch (OCS) reconfigured during "
           "training, the other NICs on an EPS fat-tree",
           kinds::mfabric_kind()},
          {"nvl72",
           "NVLink domains (each server is one domain: gpus_per_server GPUs on its NVSwitch) with "
           "one scale-out NIC per GPU on a fat-tree, as GB200 NVL72",
           kinds::nvl72_kind()},
      });
  return kinds;
}

const FabricKind* find_fabric_kind(std::string_view name) {
  const auto* entry = fabric_kinds().find(name);
  return entry ? &entry->factory : nullptr;
}

const FabricKind* kind_of(const Topology& topology) {
  return find_fabric_kind(topology.kind());
}

const FabricTraits& traits_of(const Topology& topology) {
  static const FabricTraits kDefaults;
  const FabricKind* kind = kind_of(topology);
  return kind ? kind->traits : kDefaults;
}

std::optional<int> region_servers(const Spec& spec, int cluster_servers) {
  const FabricKind* kind = find_fabric_kind(spec.name());
  if (!kind || kind->traits.region_param.empty()) return std::nullopt;
  Spec copy = spec;  // get_int marks the key read
  return copy.get_int(kind->traits.region_param,
                      std::min(kind->traits.default_region, cluster_servers));
}

Spec with_region(Spec spec, int servers, bool* changed) {
  if (changed) *changed = false;
  const FabricKind* kind = find_fabric_kind(spec.name());
  if (!kind || kind->traits.region_param.empty() || spec.has(kind->traits.region_param))
    return spec;
  auto params = spec.params();
  params[kind->traits.region_param] = std::to_string(servers);
  if (changed) *changed = true;
  return Spec(spec.name(), params);
}

}  // namespace mfabric::fabric
