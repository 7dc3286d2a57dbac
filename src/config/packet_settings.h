// The packet backend's settings in an experiment (docs/network.md, "Packet backend"): the
// `simulation:` fields that set PacketBackendOptions, and their checks against what else the
// experiment says (refused when they would be ignored) and against the built fabric.
#pragma once

#include <string>
#include <vector>

#include "config/experiment.h"
#include "core/yaml_fields.h"

namespace mfabric::config {

// The keys of `simulation:` that are packet settings: the packet backend's own, then every
// block a registered transport reads.
std::vector<std::string> packet_setting_fields();

// Reads the packet settings of the `simulation:` block into e.packet; mfabric::Error naming the
// field for a setting without `backend: packet`, a bad value, or a setting the chosen transport
// (or PFC off) would ignore.
void parse_packet_options(const Fields& f, Experiment& e);

}  // namespace mfabric::config
