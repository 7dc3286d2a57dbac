// The network backends by name, so that an experiment's `simulation.backend` picks one and the
// engine never names a concrete backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fabric/topology.h"
#include "net/backend.h"

namespace mfabric::net {

// "flow": the flow-level backend (flow_backend.h). The topology must outlive the backend.
// Throws mfabric::Error listing the known names for an unknown one.
std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology);
std::vector<std::string> backend_names();

}  // namespace mfabric::net
