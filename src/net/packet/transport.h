// A transport is the end-host protocol of every flow of a packet backend run: what the sender
// may put on the wire next, what the receiver answers, what the sender does with the answer and
// when its timers fire. One object serves all flows, with its per-flow state in its own arrays
// (indexed by the backend's flow slot), so that a transport is a small object with one job:
// DCTCP, RoCEv2 with DCQCN, IRN (transports/; transports.h names them).
//
// The packet network (packet_network.h) owns packets (packet_pool.h), ports (port_table.h) and
// time; its port scheduler (port_scheduler.h) asks the transport for the next packet when the
// flow's first port is free and the flow is ready (wake()), and the network delivers data
// packets to on_data() and acknowledgements to on_ack().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace mfabric::net::packet {

using FlowSlot = std::int32_t;

// The receiver's answer to a data packet, carried back to the sender on the reverse path.
struct Ack {
  std::int32_t cumulative = 0;  // every packet before this one has arrived
  std::int32_t seq = 0;         // the data packet this answers
  bool ecn_echo = false;        // that packet arrived marked CE
  bool nack = false;            // RoCE go-back-N: a packet is missing before `seq`
  bool cnp = false;             // DCQCN congestion notification (no data acknowledged)
};

// What a transport may ask of the backend.
class TransportHost {
 public:
  virtual ~TransportHost() = default;
  virtual Time now() const = 0;
  // The flow has something to send: the backend asks next_packet() when its port is free, which
  // may be at once, from inside wake(): a transport calls it last, with its state up to date.
  virtual void wake(FlowSlot f) = 0;
  // The flow's one timer: on_timer(f) at `at` (the latest call wins); Time::max() cancels it.
  virtual void set_timer(FlowSlot f, Time at) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // A new flow of `packets` packets (at least 1) in slot f; the backend wakes it afterwards.
  // `rtt` is the unloaded round trip of its route (data there, acknowledgement back);
  // `line_rate` the slowest link rate on that route, what rate-based senders (DCQCN) start at
  // and never exceed, and what a bandwidth-delay product is counted in.
  virtual void open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) = 0;
  // The flow is done (all its data arrived) or abandoned; its state may be reused.
  virtual void close(FlowSlot f) = 0;
  // Whether next_packet() would return a packet now.
  virtual bool can_send(FlowSlot f) const = 0;
  // The sequence number of the packet to send now (a retransmission or new data), or -1.
  virtual std::int32_t next_packet(FlowSlot f) = 0;
  // A data packet of flow f arrived at the receiver. Fills `ack` and returns whether to send
  // it; `complete` becomes true on the arrival that completes the flow's data.
  virtual bool on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) = 0;
  virtual void on_ack(FlowSlot f, const Ack& ack) = 0;
  virtual void on_timer(FlowSlot f) = 0;
  // Packets sent again (timeouts, fast retransmit, go-back-N), over the run.
  virtual std::int64_t retransmissions() const = 0;
  // Retransmission timeouts that fired, over the run.
  virtual std::int64_t timeouts() const = 0;
};

// A transport's per-flow tables cover slot f (slots are reused: open() resets the entry).
template <class Sender, class Receiver>
void cover_slot(FlowSlot f, std::vector<Sender>& senders, std::vector<Receiver>& receivers) {
  const auto i = static_cast<std::size_t>(f);
  if (i >= senders.size()) {
    senders.resize(i + 1);
    receivers.resize(i + 1);
  }
}

}  // namespace mfabric::net::packet
