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

namespace mfabric::net {

enum class PacketTransport { Dctcp, RoceDcqcn, Irn };
const char* to_string(PacketTransport t);
std::optional<PacketTransport> parse_packet_transport(std::string_view name);
std::vector<std::string> packet_transport_names();

// When DCTCP cuts its window: RFC 8257's at the first ECN-Echo of a window (with the alpha of
// the windows before), or htsim's at the end of each window that saw a mark (with that window's
// alpha folded in).
enum class DctcpVariant { Rfc8257, Htsim };
const char* to_string(DctcpVariant v);

// DCTCP (RFC 8257) over a TCP NewReno sender with an ACK per packet.
struct DctcpOptions {
  DctcpVariant variant = DctcpVariant::Rfc8257;
  // Weight of the newest window's marked fraction in alpha: 1/16 (RFC 8257, section 4.2).
  double g = 1.0 / 16.0;
  // Packets a flow may send before its first ACK: 10 (RFC 6928).
  int initial_window = 10;
  // The receiver's window, bytes: the most a flow has in flight. 4 MiB: above the bandwidth-delay
  // product of every default fabric (400G x 12 us = 600 kB), so it binds only on NVLink.
  Bytes max_window = Bytes::mib(4);
  // Duplicate ACKs that start a fast retransmission; 0 (the default) chooses: 3 (RFC 5681) with
  // per-flow ECMP, kSprayDupacks with packet spraying, which reorders packets by up to the
  // difference between its paths' queues (docs/packet.md, "Routing").
  int dupacks = 0;
  int effective_dupacks(int spray_paths) const {
    return dupacks > 0 ? dupacks : (spray_paths > 1 ? kSprayDupacks : 3);
  }
  static constexpr int kSprayDupacks = 32;
  // Retransmission timeout before backoff: 200 us, a data-centre minimum RTO (the DCTCP paper
  // ran 10 ms; data-centre stacks and simulators use 200 us to 1 ms for 10-400G fabrics).
  Time min_rto = Time::microseconds(200);
};

// Which DCQCN reaction point: the paper's algorithm (its Figure 7 and section 3), or the one in
// its authors' simulator (ns3-rdma), which differs in its counters and in how fast it climbs
// back (dcqcn.h lists the differences).
enum class DcqcnVariant { Paper, Ns3Rdma };
const char* to_string(DcqcnVariant v);
std::optional<DcqcnVariant> parse_dcqcn_variant(std::string_view name);

// DCQCN rate control (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015): the reaction point at the sender, the notification point at the receiver.
// Defaults are the paper's where it gives one; each says where it comes from, and dcqcn.h how
// it is used. `for_variant(Ns3Rdma)` takes the counters of the authors' simulator instead.
struct DcqcnOptions {
  DcqcnVariant variant = DcqcnVariant::Paper;
  // The defaults of a variant: the ones below for the paper; for ns3-rdma its config.txt's
  // RP_TIMER (60 us) and BYTE_COUNTER (300,000 bytes), the rest as below (its config gives the
  // same g, alpha timer, CNP interval, F, R_AI and R_HAI).
  static DcqcnOptions for_variant(DcqcnVariant v);
  // alpha's gain: 1/256 (the paper's g).
  double g = 1.0 / 256.0;
  // alpha decays, alpha = (1 - g) alpha, every 55 us without a CNP (the paper's K).
  Time alpha_timer = Time::microseconds(55);
  // Rate-increase timer: a step every 55 us (the paper's T).
  Time rate_timer = Time::microseconds(55);
  // Rate-increase byte counter: a step every 10 MB sent (the paper's B, in decimal megabytes).
  Bytes byte_counter = Bytes(10000000);
  // Fast-recovery steps before additive increase: 5 (the paper's F).
  int fast_recovery_steps = 5;
  // Additive increase of the target rate per step: 40 Mb/s (the paper's R_AI).
  Rate additive_increase = Rate::gbps(0.04);
  // Hyper increase per step: 200 Mb/s. The paper gives no value for R_HAI; 200 Mb/s is what its
  // authors' simulator runs with R_AI = 40 Mb/s (github.com/bobzhuyb/ns3-rdma,
  // windows/ns-3-dev/mix/config.txt, RATE_HAI).
  Rate hyper_increase = Rate::gbps(0.2);
  // Notification point: at most one CNP per flow per 50 us (the paper's N).
  Time cnp_interval = Time::microseconds(50);
  // The rate never falls below 100 Mb/s (the same simulator's MinRate; the paper gives none), or
  // below the line rate of a route slower than that.
  Rate min_rate = Rate::gbps(0.1);
};

// RoCEv2 reliable connection: go-back-N on NACK or timeout, over PFC.
struct RoceOptions {
  // Go-back-N timeout after the last progress: 1 ms. Lossless (PFC) fabrics rarely need it; NICs
  // configure it as the InfiniBand local ACK timeout 4.096 us x 2^n, and n = 8 is 1.05 ms.
  Time rto = Time::microseconds(1000);
};

// IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018): selective
// retransmission and at most a bandwidth-delay product in flight, without PFC.
struct IrnOptions {
  // Timeouts, the paper's: RTO_low = 100 us while at most N = 3 packets are in
  // flight (a small message's tail loss is found quickly), RTO_high = 320 us otherwise.
  Time rto_low = Time::microseconds(100);
  Time rto_high = Time::microseconds(320);
  int low_packets = 3;
  // DCQCN rate control on top: the paper evaluates IRN with and without it; on by default, so
  // that IRN differs from roce-dcqcn only in loss recovery and BDP-FC.
  bool dcqcn = true;
};

// Priority flow control (IEEE 802.1Qbb) at switch ports for lossless traffic: a switch counts
// the bytes it holds from each input link and pauses the sender on that link at `xoff`,
// resuming it at `xon`. Lossless ports never drop; the headroom is what may still arrive while
// a pause travels (link latency both ways at line rate, plus two packets).
struct PfcOptions {
  Bytes xoff = Bytes(300000);
  Bytes xon = Bytes(280000);
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
  // RED marking between ecn_threshold and ecn_max with probability rising to ecn_pmax (DCQCN's
  // Kmin, Kmax, Pmax); ecn_max 0 (the default) marks every packet above ecn_threshold (DCTCP's
  // step).
  Bytes ecn_max = Bytes(0);
  double ecn_pmax = 1.0;
  // Lossless switch ports with PFC: on by default for roce-dcqcn only.
  std::optional<bool> pfc;
  PfcOptions pfc_thresholds;
  DctcpOptions dctcp;
  DcqcnOptions dcqcn;
  RoceOptions roce;
  IrnOptions irn;
  // Packet spraying (docs/packet.md, "Routing"): each flow's packets take up to this many
  // equal-cost routes in turn; 1 (the default) is per-flow ECMP.
  int spray_paths = 1;
  // Seeds the RED marking draws.
  std::uint64_t seed = 1;
  // The file the settings came from (the experiment), named by the errors the backend raises
  // about them while it runs; empty for settings made in code.
  std::string source;

  bool pfc_enabled() const { return pfc.value_or(transport == PacketTransport::RoceDcqcn); }
};

// The variant of the congestion control the transport runs: DCTCP's ("rfc8257", "htsim"), or
// DCQCN's ("paper", "ns3-rdma") for RoCE and for IRN with DCQCN; "none" for IRN without it.
const char* congestion_control_variant(const PacketBackendOptions& o);

// mfabric::Error(file, field, expectation) for a setting out of range (fields named
// `prefix`.name): the checks that need no topology.
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

// mfabric::Error(file, field, expectation) for a timer or rate of the settings in force for the
// chosen transport outside the limits of the fabric's links (`limits`): each timer from
// limits.packet_time to kMaxPacketTimer, the byte counter at least a packet, DCQCN's rates at
// most the fastest link's. Settings of other transports are not looked at.
void check_packet_options(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                          const std::string& file = "", const std::string& prefix = "simulation");
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
