// The packet transports by name (`simulation.transport`): one registry line each in
// transports.cpp, each transport a unit in net/packet/transports/ (transport_settings.h). A new
// transport is a new unit there and one line here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.h"
#include "net/packet/transport_settings.h"

namespace mfabric::net {

// Each entry makes its transport's settings with their defaults.
using TransportRegistry = Registry<std::function<std::unique_ptr<TransportSettings>()>>;

// The transports in registration order ("unknown transport 'x' (known: ...)" for another name).
// A test or an embedding program may add its own before any concurrent use.
TransportRegistry& packet_transports();

// The transport of settings that do not choose one.
inline constexpr std::string_view kDefaultTransport = "dctcp";

// The registry entry of settings type S: its S::kName, `description` and S's defaults.
template <std::derived_from<TransportSettings> S>
TransportRegistry::Entry transport_entry(std::string description) {
  return {std::string(S::kName), std::move(description), [] { return std::make_unique<S>(); }};
}

// Every block of `simulation:` some transport reads, each once, in registration order.
std::vector<SettingsBlock> transport_blocks();
// The names of the transports that read block `key`, in registration order.
std::vector<std::string> transports_reading(std::string_view key);
// Whether settings `s` read block `key`.
bool reads_block(const TransportSettings& s, std::string_view key);

}  // namespace mfabric::net
