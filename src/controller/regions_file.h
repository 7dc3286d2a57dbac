// The regions file of the region controller daemon (docs/runtime.md, "Region controller"): which
// regions share one OCS, and for each its servers, their NICs, where their OCS NICs land on the
// OCS and which planner plans it.
#pragma once

#include <string>
#include <vector>

#include "control/nic_mapping.h"
#include "control/ocs_commands.h"
#include "core/units.h"

namespace mfabric::controller {

struct RegionSpec {
  std::string name;
  int servers = 1;
  control::ServerNics nics;
  // The device port (numbered from 1, as TL1 numbers them) of server 0's first OCS NIC; server
  // s's k-th OCS NIC is on first_port + s * alpha + k.
  int first_port = 1;
  std::string planner = control::kDefaultPlanner;
  Rate link = Rate::gbps(400);  // one NIC's rate, for the planner's limits

  // The region's ports as control/ocs_commands.h places them (0-based: device port - 1).
  control::RegionPorts ports() const { return {first_port - 1, servers, nics}; }
};

// Reads a regions file:
//   regions:
//     - name: rack0        # letters, digits, '-', '_', '.'
//       servers: 8
//       nics: 8            # per server (default 8)
//       alpha: 6           # of them on the OCS, the last ones (default 6)
//       numa: 2            # default 2
//       first_port: 1      # device port of server 0's first OCS NIC
//       planner: greedy    # default greedy
//       link: 400G         # default 400G
// mfabric::Error naming the file and the field for anything else: unknown fields, repeated or
// badly named regions, an unknown planner, or two regions sharing a port.
std::vector<RegionSpec> read_regions_file(const std::string& path);
// The same from text (`source` names it in errors).
std::vector<RegionSpec> parse_regions(const std::string& text, const std::string& source);

}  // namespace mfabric::controller
