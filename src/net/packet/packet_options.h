// Settings of the packet-level backend (docs/network.md, "Packet backend"), with their defaults
// and where the defaults come from. Sizes are bytes, times picoseconds (core/units.h).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "net/packet/transport_settings.h"

namespace mfabric::net {

// Priority flow control (IEEE 802.1Qbb) at switch ports for lossless traffic: a switch counts
// the bytes it holds from each input link and pauses the sender on that link at `xoff`,
// resuming it at `xon`. Lossless ports never drop; the headroom is what may still arrive while
// a pause travels (link latency both ways at line rate, plus two packets).
struct PfcOptions {
  Bytes xoff = Bytes(300000);
  Bytes xon = Bytes(280000);
};

struct PacketBackendOptions {
  // The transport and its own settings (transports.h; DCTCP by default).
  TransportChoice transport;
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
  // RED marking between ecn_threshold and ecn_max with probability rising to ecn_pmax (DCQCN's
  // Kmin, Kmax, Pmax); ecn_max 0 (the default) marks every packet above ecn_threshold (DCTCP's
  // step).
  Bytes ecn_max = Bytes(0);
  double ecn_pmax = 1.0;
  // Lossless switch ports with PFC: on by default for the transports that say so (roce-dcqcn).
  std::optional<bool> pfc;
  PfcOptions pfc_thresholds;
  // Packet spraying (docs/packet.md, "Routing"): each flow's packets take up to this many
  // equal-cost routes in turn; 1 (the default) is per-flow ECMP.
  int spray_paths = 1;
  // Seeds the RED marking draws.
  std::uint64_t seed = 1;
  // The file the settings came from (the experiment), named by the errors the backend raises
  // about them while it runs; empty for settings made in code.
  std::string source;

  bool pfc_enabled() const { return pfc.value_or(transport->lossless()); }
};

// mfabric::Error(file, field, expectation) for a setting out of range (fields named
// `prefix`.name): the checks that need no topology, the packet settings' and then the
// transport's.
void check_packet_options(const PacketBackendOptions& o, const std::string& file = "",
                          const std::string& prefix = "simulation");

// The mtu's range, bytes.
inline constexpr std::int64_t kMinMtu = 64;
inline constexpr std::int64_t kMaxMtu = 65536;

// The limits a fabric's links put on the timers and rates of the settings (docs/packet.md,
// "Limits of the settings"), from its network links (cables: NIC, switch, OCS and patch-panel
// links; NVLink and PCIe inside a server are not network links).
struct PacketLinkLimits {
  Rate slowest;  // the slowest network link
  Rate fastest;  // the fastest: no flow's line rate is above it
  // One full packet (mtu + header bytes) serialised at the slowest link, rounded up to the
  // picosecond: the floor of every timer. A timer shorter than this fires before a packet can
  // even have left that link's port, let alone be acknowledged; an RTO below it times out again
  // and again while one packet is on the wire (1 ps runs a timer event per picosecond per flow).
  Time packet_time;
};
// The limits of topology `t` for settings `o`; nullopt when `t` has no network link (every
// transfer stays inside a server and runs as a fluid flow: no setting is used).
std::optional<PacketLinkLimits> packet_link_limits(const PacketBackendOptions& o,
                                                   const fabric::Topology& t);

// The longest timer: 60 s, the least a TCP stack may cap its RTO at (RFC 6298, 2.5). A longer
// timer never fires in a run of seconds, and DCTCP's 64 x backoff of one must stay inside the
// picosecond clock.
inline constexpr Time kMaxPacketTimer = Time::milliseconds(60'000);
// Additive and hyper increase are at least this fraction of the fastest link's rate, so that
// DCQCN climbs from min_rate back to the line rate in at most a million steps (a smaller step
// leaves a cut flow paced near min_rate, waking at every rate-increase timer, for hours of
// simulated time).
inline constexpr double kMinIncreaseFraction = 1e-6;

// mfabric::Error(file, field, expectation) for a timer or rate of the chosen transport's settings
// outside the limits of the fabric's links (`limits`): each timer from limits.packet_time to
// kMaxPacketTimer, DCQCN's byte counter at least a packet and its rates at most the fastest
// link's (TransportSettings::check).
void check_packet_options(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                          const std::string& file = "", const std::string& prefix = "simulation");
// What the transports' limit checks share: mfabric::Error(file, field, ...) unless
// floor <= value <= kMaxPacketTimer, `why` saying where the floor comes from.
void check_packet_timer(const std::string& file, const std::string& field, Time value, Time floor,
                        const std::string& why);
// "one 4160-byte packet (mtu + header) at the slowest network link's 100Gbps": why a timer
// has limits.packet_time as its floor.
std::string one_packet_at_slowest_link(const PacketBackendOptions& o,
                                       const PacketLinkLimits& limits);
// The floor of a retransmission timeout: one_packet_at_slowest_link() and what a shorter one does.
std::string timeout_floor_reason(const PacketBackendOptions& o, const PacketLinkLimits& limits);
// Both checks, the second with the limits of topology `t` (when it has a network link).
void check_packet_options(const PacketBackendOptions& o, const fabric::Topology& t,
                          const std::string& file = "", const std::string& prefix = "simulation");

// The most packets a flow may have: its packets' sequence numbers are 32-bit. A flow of that
// many carries 8 TiB at the default mtu, 128 GiB at the smallest (64 bytes).
inline constexpr std::int64_t kMaxFlowPackets = std::numeric_limits<std::int32_t>::max();
// Why `size` bytes cannot be one flow of `mtu`-byte packets (more than kMaxFlowPackets), and
// what would do: the least mtu that would, or, past the largest mtu's flow, smaller transfers.
std::string flow_size_limit(Bytes size, Bytes mtu);

}  // namespace mfabric::net
