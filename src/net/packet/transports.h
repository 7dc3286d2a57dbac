// The transport a packet network runs, by PacketBackendOptions::transport: one line per transport
// (a new one is a file pair in net/packet/ on Transport or RdmaTransport, a PacketTransport name
// in packet_options.h and a line here).
#pragma once

#include <memory>

#include "net/packet/packet_options.h"
#include "net/packet/transport.h"

namespace mfabric::net::packet {

// The options' transport for `host`, with the options' settings for it (DCTCP's duplicate-ack
// threshold raised for spraying, docs/packet.md).
std::unique_ptr<Transport> make_transport(TransportHost& host, const PacketBackendOptions& o);

}  // namespace mfabric::net::packet
