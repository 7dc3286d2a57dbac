// The network backends by name, so that an experiment's `simulation.backend` picks one and the
// engine never names a concrete backend: one registry line each in backends.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/registry.h"
#include "fabric/topology.h"
#include "net/backend.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

// Settings a backend may take; each backend reads those it knows.
struct BackendOptions {
  double completion_batching = 0;  // flow: FlowBackendOptions (flow/flow_backend.h); 0 = exact
  PacketBackendOptions packet;     // packet: packet/packet_options.h
  // Both: per-flow ECMP (1) or packet spraying over up to this many equal-cost paths
  // (docs/network.md, "Spraying"); it overrides packet.spray_paths.
  int spray_paths = 1;
};

// Each entry makes its backend over a topology, which must outlive the backend.
using BackendRegistry = Registry<
    std::function<std::unique_ptr<Backend>(const fabric::Topology&, const BackendOptions&)>>;

// "flow": the flow-level backend (flow/flow_backend.h); "packet": the packet-level backend
// (packet_backend.h). A test or an embedding program may add its own before any concurrent use.
BackendRegistry& backends();

// backends().at(name) over `topology`: mfabric::Error "unknown backend 'x' (known: flow,
// packet)" for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology,
                                      const BackendOptions& options = {});

}  // namespace mfabric::net
