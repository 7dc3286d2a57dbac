#include "net/backends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "net/flow_backend.h"

namespace mfabric::net {

std::vector<std::string> backend_names() {
  return {"flow"};
}

std::unique_ptr<Backend> make_backend(const std::string& name, const fabric::Topology& topology) {
  if (name == "flow") return std::make_unique<FlowBackend>(topology);
  throw Error(
      fmt::format("unknown backend '{}' (known: {})", name, fmt::join(backend_names(), ", ")));
}

}  // namespace mfabric::net
