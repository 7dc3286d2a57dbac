// The backends `simulation.backend` accepts: one line each.
#include "net/backends.h"

#include "net/flow/flow_backend.h"
#include "net/flow/spraying_backend.h"
#include "net/packet_backend.h"

namespace mfabric::net {

namespace {

std::unique_ptr<Backend> make_flow(const fabric::Topology& topology,
                                   const BackendOptions& options) {
  FlowBackendOptions flow;
  flow.completion_batching = options.completion_batching;
  auto backend = std::make_unique<FlowBackend>(topology, flow);
  if (options.spray_paths <= 1) return backend;
  return std::make_unique<SprayingBackend>(std::move(backend), options.spray_paths);
}

std::unique_ptr<Backend> make_packet(const fabric::Topology& topology,
                                     const BackendOptions& options) {
  PacketBackendOptions packet = options.packet;
  packet.spray_paths = options.spray_paths;
  return std::make_unique<PacketBackend>(topology, packet);
}

}  // namespace

BackendRegistry& backends() {
  static BackendRegistry registry(
      "backend", {
                     {"flow", "fluid flows, max-min fair rates (docs/network.md)", make_flow},
                     {"packet", "packets, queues and transports between servers (docs/packet.md)",
                      make_packet},
                 });
  return registry;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology,
                                      const BackendOptions& options) {
  return backends().at(name).factory(topology, options);
}

}  // namespace mfabric::net
