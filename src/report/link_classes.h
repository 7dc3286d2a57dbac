// The classes of a topology's links for utilisation over time (docs/telemetry.md): what a
// plot can show as one line each. A class is every link of one role: NVLink (GPU - NVSwitch),
// PCIe (GPU - NIC), NIC - first switch, switch - switch by the two tiers, and the fibres of
// optical NICs (to an OCS, to a patch panel), which carry the circuits (net/link_timeline.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/topology.h"

namespace mfabric::report {

struct LinkClass {
  std::string id;     // utilisation.csv's `class`: "nvlink", "pcie", "nic-leaf", "leaf-spine", ...
  std::string label;  // the figure's legend: "NVLink (GPU-NVSwitch)", ...
  std::int64_t links = 0;
  // Both directions of every link of the class, in bytes per second (the links' built rates).
  double capacity_bytes_per_s = 0;
};

struct LinkClasses {
  std::vector<LinkClass> classes;     // the classes the topology has, in a fixed order
  std::vector<std::int32_t> of_link;  // per topology link: its index in `classes`
};

// Every link of `t` in one class. The order: NVLink, PCIe, NIC uplinks, switch tiers from the
// bottom, OCS fibres, patch-panel fibres, then anything else ("other").
LinkClasses classify_links(const fabric::Topology& t);

}  // namespace mfabric::report
