// The network backends by name, so that an experiment's `simulation.backend` picks one and the
// engine never names a concrete backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fabric/topology.h"
#include "net/backend.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

// Settings a backend may take; each backend reads those it knows.
struct BackendOptions {
  double completion_batching = 0;  // flow: FlowBackendOptions (flow_backend.h); 0 = exact
  PacketBackendOptions packet;     // packet: packet/packet_options.h
  // Both: per-flow ECMP (1) or packet spraying over up to this many equal-cost paths
  // (docs/network.md, "Spraying"); it overrides packet.spray_paths.
  int spray_paths = 1;
};

// "flow": the flow-level backend (flow_backend.h); "packet": the packet-level backend
// (packet/packet_backend.h). The topology must outlive the backend.
// Throws mfabric::Error listing the known names for an unknown one.
std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology,
                                      const BackendOptions& options = {});
std::vector<std::string> backend_names();

}  // namespace mfabric::net
