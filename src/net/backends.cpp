#include "net/backends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "net/flow_backend.h"
#include "net/packet/packet_backend.h"
#include "net/spraying_backend.h"

namespace mfabric::net {

std::vector<std::string> backend_names() {
  return {"flow", "packet"};
}

std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology,
                                      const BackendOptions& options) {
  if (name == "flow") {
    FlowBackendOptions flow;
    flow.completion_batching = options.completion_batching;
    auto backend = std::make_unique<FlowBackend>(topology, flow);
    if (options.spray_paths <= 1) return backend;
    return std::make_unique<SprayingBackend>(std::move(backend), options.spray_paths);
  }
  if (name == "packet") {
    PacketBackendOptions packet = options.packet;
    packet.spray_paths = options.spray_paths;
    return std::make_unique<PacketBackend>(topology, packet);
  }
  throw Error(
      fmt::format("unknown backend '{}' (known: {})", name, fmt::join(backend_names(), ", ")));
}

}  // namespace mfabric::net
