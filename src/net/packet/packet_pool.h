// The packets of a packet network (packet_network.h) in one pool. A packet is a record that
// ports, their queues and the event list refer to by its slot; it goes back to the pool when it
// is delivered and answered, dropped or lost, and the next packet reuses the slot, so that steady
// traffic allocates nothing. A data packet that is answered becomes its acknowledgement on the
// way back (seq, cumulative and flags rewritten). The pool also counts the packets in flight.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/packet/transport.h"

namespace mfabric::net::packet {

struct Packet {
  // flags
  static constexpr std::uint8_t kCe = 1;       // the packet was marked Congestion Experienced
  static constexpr std::uint8_t kEcnEcho = 2;  // an ACK echoing CE
  static constexpr std::uint8_t kNack = 4;
  static constexpr std::uint8_t kCnp = 8;
  static constexpr std::uint8_t kLost = 16;  // lost on a failed link; dropped at its next event

  FlowSlot flow = -1;
  std::int32_t seq = 0;
  std::int32_t route = -1;
  std::int32_t cumulative = 0;  // ACKs
  std::int32_t wire = 0;        // bytes on the wire
  std::int32_t path = 0;        // its route's ports: RouteTable::port_at(path + hop)
  std::uint16_t hop = 0;        // the port it is at or on its way to
  std::uint16_t hops = 0;
  std::uint8_t flags = 0;
};

class PacketPool {
 public:
  // A slot for a new packet. Its record is as the slot's last packet left it: the caller sets
  // every field it reads.
  std::int32_t allocate() {
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    if (!free_.empty()) {
      const std::int32_t p = free_.back();
      free_.pop_back();
      return p;
    }
    packets_.emplace_back();
    return static_cast<std::int32_t>(packets_.size() - 1);
  }
  // The packet is gone; its slot is reused by a later allocate().
  void release(std::int32_t pkt) {
    --in_flight_;
    free_.push_back(pkt);
  }

  Packet& operator[](std::int32_t pkt) { return packets_[static_cast<std::size_t>(pkt)]; }
  const Packet& operator[](std::int32_t pkt) const {
    return packets_[static_cast<std::size_t>(pkt)];
  }
  // Packets allocated and not released: now, and the most at once over the run.
  std::int64_t in_flight() const { return in_flight_; }
  std::int64_t max_in_flight() const { return max_in_flight_; }

 private:
  std::vector<Packet> packets_;
  std::vector<std::int32_t> free_;
  std::int64_t in_flight_ = 0;
  std::int64_t max_in_flight_ = 0;
};

}  // namespace mfabric::net::packet
