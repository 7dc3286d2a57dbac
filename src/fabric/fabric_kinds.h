// The fabric kinds by name: one registry (core/registry.h) whose entries are FabricKind
// plug-ins (fabric/fabric_kind.h), one line each in fabric_kinds.cpp. Everything that needs to
// know what a fabric is asks its kind here.
#pragma once

#include <optional>
#include <string_view>

#include "core/registry.h"
#include "core/spec.h"
#include "fabric/fabric_kind.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

using FabricKindRegistry = Registry<FabricKind>;

// Every fabric kind, in the order tables list them: fat-tree, rail-optimized, rail-only,
// topoopt, mfabric, nvl72. Mutable only so that a test (or a program embedding mfabric) can
// register a kind of its own before anything runs; read-only afterwards, from any thread.
FabricKindRegistry& fabric_kinds();

// The kind named `name`, or null.
const FabricKind* find_fabric_kind(std::string_view name);
// The kind a topology was built as, or null for one built by hand under a name no kind has
// (tests): callers then treat it as a fabric with default traits.
const FabricKind* kind_of(const Topology& topology);
// The topology's kind's traits, or the defaults (FabricTraits{}) for such a topology.
const FabricTraits& traits_of(const Topology& topology);

// Servers per region of a fabric spec whose kind has regions that hold one EP group each (its
// region parameter, or the kind's default capped at the cluster's servers); nullopt for any
// other kind. mfabric::Error naming the parameter for a value that is not a whole number.
std::optional<int> region_servers(const Spec& spec, int cluster_servers);
// `spec` with its region parameter set to `servers` when its kind has regions and the spec names
// none; otherwise `spec` unchanged. Sets `*changed` (if given) to whether it set one.
Spec with_region(Spec spec, int servers, bool* changed = nullptr);

}  // namespace mfabric::fabric
