// Presenting a Topology: counts by kind (text and JSON) and a Graphviz export.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/json_text.h"  // the JSON these functions return is printed with json_text()
#include "fabric/topology.h"

namespace mfabric::report {

// {"fabric", "kind", "params", "servers", "gpus", "tiers", "circuit_degree",
//  "reconfiguration_delay_s", "nodes": {...}, "nics_by_role": {...}, "switches_by_tier": {...},
//  "links": {...}, "regions": {"count", "servers_per_region", "ports_per_region", "ocs_devices"}}
nlohmann::json topology_json(const fabric::Topology& t);
std::string topology_text(const fabric::Topology& t);
// Graphviz: one cluster per server (GPUs, NVSwitch, NICs), switches ranked by tier, OCS and
// patch panels; cables coloured by NIC role.
std::string topology_dot(const fabric::Topology& t);

}  // namespace mfabric::report
