// Settings of the packet-level backend (docs/network.md, "Packet backend"), with their defaults
// and where the defaults come from. Sizes are bytes, times picoseconds (core/units.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace mfabric::net {

enum class PacketTransport { Dctcp };
const char* to_string(PacketTransport t);
std::optional<PacketTransport> parse_packet_transport(std::string_view name);
std::vector<std::string> packet_transport_names();

// DCTCP (RFC 8257) over a TCP NewReno sender with an ACK per packet.
struct DctcpOptions {
  // Weight of the newest window's marked fraction in alpha: 1/16 (RFC 8257, section 4.2).
  double g = 1.0 / 16.0;
  // Packets a flow may send before its first ACK: 10 (RFC 6928).
  int initial_window = 10;
  // The receiver's window, bytes: the most a flow has in flight. 4 MiB: above the bandwidth-delay
  // product of every default fabric (400G x 12 us = 600 kB), so it binds only on NVLink.
  Bytes max_window = Bytes::mib(4);
  // Retransmission timeout before backoff: 200 us, a data-centre minimum RTO (the DCTCP paper
  // ran 10 ms; data-centre stacks and simulators use 200 us to 1 ms for 10-400G fabrics).
  Time min_rto = Time::microseconds(200);
};

struct PacketBackendOptions {
  PacketTransport transport = PacketTransport::Dctcp;
  // Payload bytes per packet: 4096, the RoCEv2 / InfiniBand MTU common in GPU clusters.
  Bytes mtu = Bytes(4096);
  // Header bytes per packet on the wire: 64 (Ethernet 14 + FCS 4, IPv4 20, UDP 8, BTH 12, ICRC
  // 4, rounded up; TCP/IPv4 over Ethernet is 58).
  Bytes header = Bytes(64);
  // Bytes of an acknowledgement, NACK or CNP on the wire: 64.
  Bytes ack = Bytes(64);
  // Output buffer of a switch port: 1 MiB (a 64 MB shared buffer over 64 ports of 400G).
  // Host ports (GPU, NVSwitch, NIC) never drop: the host back-pressures its senders.
  Bytes buffer = Bytes::mib(1);
  // A port marks ECN (CE) on packets that arrive when it holds at least this many bytes: 120 kB,
  // DCTCP's K > C x RTT / 7 for 400G and a 12 us round trip (six 1 us links each way).
  Bytes ecn_threshold = Bytes(120000);
  DctcpOptions dctcp;
};

// mfabric::Error(file, field, expectation) for a setting out of range (fields named
// `prefix`.name).
void check_packet_options(const PacketBackendOptions& o, const std::string& file = "",
                          const std::string& prefix = "simulation");

}  // namespace mfabric::net
