// The transports `simulation.transport` accepts: one line each.
#include "net/packet/transports.h"

#include <algorithm>

#include "net/packet/transports/dctcp.h"
#include "net/packet/transports/irn.h"
#include "net/packet/transports/roce_dcqcn.h"

namespace mfabric::net {

TransportRegistry& packet_transports() {
  static TransportRegistry registry(
      "transport",
      {
          transport_entry<DctcpSettings>("DCTCP (RFC 8257) over TCP NewReno, an ACK per packet"),
          transport_entry<RoceDcqcnSettings>(
              "RoCEv2 reliable connection, go-back-N, DCQCN rate control, over PFC"),
          transport_entry<IrnSettings>(
              "IRN: selective retransmission and BDP flow control, DCQCN on top, without PFC"),
      });
  return registry;
}

TransportChoice::TransportChoice() : TransportChoice(kDefaultTransport) {}

TransportChoice::TransportChoice(std::string_view name)
    : TransportChoice(packet_transports().at(name).factory()) {}

TransportChoice::TransportChoice(std::unique_ptr<TransportSettings> settings)
    : settings_(std::move(settings)) {}

bool reads_block(const TransportSettings& s, std::string_view key) {
  const std::vector<SettingsBlock> blocks = s.blocks();
  return std::any_of(blocks.begin(), blocks.end(),
                     [&](const SettingsBlock& b) { return b.key == key; });
}

std::vector<SettingsBlock> transport_blocks() {
  std::vector<SettingsBlock> out;
  for (const TransportRegistry::Entry& e : packet_transports().entries()) {
    for (SettingsBlock& b : e.factory()->blocks()) {
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const SettingsBlock& o) { return o.key == b.key; });
      if (!seen) out.push_back(std::move(b));
    }
  }
  return out;
}

std::vector<std::string> transports_reading(std::string_view key) {
  std::vector<std::string> out;
  for (const TransportRegistry::Entry& e : packet_transports().entries()) {
    if (reads_block(*e.factory(), key)) out.push_back(e.name);
  }
  return out;
}

}  // namespace mfabric::net
