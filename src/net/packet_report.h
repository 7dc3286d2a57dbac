// What a packet-level backend reports beyond BackendStats (Backend::packet_reporting(),
// backend.h): per output port and over the run. The engine and the reports read it without
// knowing which backend ran; a fluid backend has none.
#pragma once

#include <cstdint>
#include <vector>

namespace mfabric::net {

// Per directed channel, what a packet-level backend adds to ChannelStats.
struct PortStats {
  std::int64_t packets = 0;    // data packets sent
  std::int64_t drops = 0;      // packets dropped (full buffer or link down)
  std::int64_t marks = 0;      // packets marked CE
  std::int64_t max_queue = 0;  // bytes, the most the port held at once
  double queue_byte_ps = 0;    // integral of the bytes held over time (mean = / run time)
  std::int64_t pause_ps = 0;   // PFC: time this port was paused by the switch downstream
  std::int64_t pauses = 0;     // PFC pause frames it received
};

// Counters of a run, for outputs and benchmarks.
struct PacketStats {
  std::int64_t packets_sent = 0;  // data packets put on a first port
  std::int64_t packets_delivered = 0;
  std::int64_t acks = 0;
  std::int64_t drops = 0;
  std::int64_t marks = 0;
  std::int64_t retransmissions = 0;
  std::int64_t timeouts = 0;
  std::int64_t max_packets_in_flight = 0;
  std::int64_t pfc_pauses = 0;  // pause frames sent
  // Of `drops`: packets beyond a lossless input's xoff + headroom (a pause too late for its link)
  std::int64_t pfc_headroom_drops = 0;
};

// Per directed channel (as BackendStats::channel_stats()) and over the run.
struct PacketReport {
  std::vector<PortStats> ports;
  PacketStats totals;
};

class PacketReporting {
 public:
  virtual ~PacketReporting() = default;

  // Ports and packet counters up to now.
  virtual PacketReport packet_report() const = 0;
};

}  // namespace mfabric::net
