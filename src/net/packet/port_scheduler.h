// How the packet network's ports send (port.h: queued ports with PFC, scheduled ports without).
// A GPU's first port takes a new packet from the flows that start there and may send, one packet
// at a time round robin, as a NIC schedules its flows fairly (wake, pull); a packet given to a
// port joins its queue (enqueue) or, on a scheduled port, its schedule (transmit); a free port
// starts its next packet (kick); a packet that left its port goes on to the next hop or its
// destination (forward); a failed link's scheduled packets are lost (lose_scheduled). The event
// handlers (packet_network.cpp) call these; they are inline, on the path of every packet.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/units.h"
#include "net/packet/event_queue.h"
#include "net/packet/flow_pool.h"
#include "net/packet/packet_options.h"
#include "net/packet/packet_pool.h"
#include "net/packet/packet_spraying.h"
#include "net/packet/port.h"
#include "net/packet/port_table.h"
#include "net/packet/route_table.h"
#include "net/packet/transport.h"
#include "net/packet_report.h"

namespace mfabric::net::packet {

class PortScheduler {
 public:
  // The tables must outlive the scheduler; `stats` counts the packets sent.
  PortScheduler(PortTable& ports, PacketPool& packets, FlowPool& flows, RouteTable& routes,
                EventQueue& events, Transport& transport, PacketStats& stats,
                const PacketBackendOptions& options)
      : ports_(ports),
        packets_(packets),
        flows_(flows),
        routes_(routes),
        events_(events),
        transport_(transport),
        stats_(stats),
        mtu_(options.mtu.count()),
        header_(options.header.count()),
        scheduled_ports_(!options.pfc_enabled()) {}

  // The flow may send: unless held or already waiting, it joins its first port's round robin,
  // which starts its packet at once if the port is free.
  void wake(FlowSlot f, std::int64_t now) {
    Flow& fl = flows_[f];
    if (!fl.live || fl.hold != Hold::None || fl.in_ready) return;
    const std::int32_t p = routes_.first_port(fl.route);
    ports_[p].ready.push_back(f);
    fl.in_ready = true;
    kick(p, now);
  }

  // Starts the port's next packet if it is free: the head of its FIFO, else a new packet of the
  // next ready flow that starts here.
  void kick(std::int32_t port_index, std::int64_t now) {
    Port& p = ports_[port_index];
    if (p.busy || p.down || p.paused) return;
    if (scheduled_ports_) {
      const std::int32_t pkt = pull(port_index);
      if (pkt < 0) return;
      ports_.drain(ports_[port_index], now);
      const std::int64_t done = transmit(port_index, pkt, now);
      ports_[port_index].busy = true;
      events_.push(done, EventKind::PortDone, static_cast<std::uint32_t>(port_index));
      return;
    }
    if (p.fifo.empty()) {
      const std::int32_t pkt = pull(port_index);
      if (pkt < 0) return;
      enqueue(ports_[port_index], pkt, now);
    }
    Port& q = ports_[port_index];
    const Packet& head = packets_[q.fifo.front()];
    const std::int64_t ser = q.serialisation(head.wire);
    q.busy = true;
    ports_.channel_stats(q).busy += Time::picoseconds(ser);
    events_.push(now + ser, EventKind::PortDone, static_cast<std::uint32_t>(port_index));
  }

  // Scheduled ports: puts the packet on the port's schedule and its next hop's event on the
  // list; returns when its last bit leaves.
  std::int64_t transmit(std::int32_t port_index, std::int32_t pkt, std::int64_t now) {
    Port& p = ports_[port_index];
    Packet& k = packets_[pkt];
    const std::int64_t ser = p.serialisation(k.wire);
    const std::int64_t done = std::max(now, p.busy_until) + ser;
    p.busy_until = done;
    p.add_bytes(ports_.stats_of(p), k.wire, now);
    p.scheduled.push(Scheduled{done, k.wire, pkt});
    ports_.sent(p, k.wire, done - ser, done);
    ports_.channel_stats(p).busy += Time::picoseconds(ser);
    ++ports_.stats_of(p).packets;
    forward(k, pkt, done + p.prop_ps);
    return done;
  }

  // Queued ports: the packet joins the port's FIFO.
  void enqueue(Port& p, std::int32_t pkt, std::int64_t now) {
    p.fifo.push(pkt);
    p.add_bytes(ports_.stats_of(p), packets_[pkt].wire, now);
  }

  // Scheduled ports: the port's link failed; the packets it has not sent yet are lost (marked
  // lost, dropped at their next event), counted as drops here.
  void lose_scheduled(Port& p, std::int64_t now) {
    ports_.drain(p, now);
    ports_.account(p, now);
    while (!p.scheduled.empty()) {
      const Scheduled lost = p.scheduled.pop();
      packets_[lost.packet].flags |= Packet::kLost;
      p.queued -= lost.wire;
      ++stats_.drops;
      ++ports_.stats_of(p).drops;
    }
    p.busy_until = now;
  }

  // The packet has left its port: at `at` it reaches the port of its next hop, or its
  // destination.
  void forward(std::int32_t pkt, std::int64_t at) { forward(packets_[pkt], pkt, at); }

 private:
  void forward(Packet& k, std::int32_t pkt, std::int64_t at) {
    ++k.hop;
    if (k.hop < k.hops) {
      ++ports_[routes_.port_at(k.path + k.hop)].inbound;
      events_.push(at, EventKind::Arrive, static_cast<std::uint32_t>(pkt));
    } else {
      events_.push(at, EventKind::Deliver, static_cast<std::uint32_t>(pkt));
    }
  }

  // A new packet of the next ready flow that starts at this port, or -1.
  std::int32_t pull(std::int32_t port_index) {
    for (;;) {
      Port& p = ports_[port_index];
      if (p.ready.empty()) return -1;
      const FlowSlot f = p.ready.front();
      p.ready.pop_front();
      Flow& fl = flows_[f];
      // A flow that moved to a route from another port left a stale entry here.
      if (fl.route < 0 || routes_.first_port(fl.route) != port_index) {
        continue;
      }
      fl.in_ready = false;
      if (!fl.live || fl.hold != Hold::None) continue;
      const std::int32_t seq = transport_.next_packet(f);
      if (seq < 0) continue;
      const std::int32_t pkt = packets_.allocate();
      Packet& k = packets_[pkt];
      k.flow = f;
      k.seq = seq;
      const std::int32_t route = next_packet_route(fl);
      k.route = route;
      k.path = routes_[route].path;
      k.hops = static_cast<std::uint16_t>(routes_[route].hops);
      k.hop = 0;
      k.flags = 0;
      k.wire =
          static_cast<std::int32_t>((seq == fl.packets - 1 ? fl.last_payload : mtu_) + header_);
      ++fl.refs;
      ++routes_[route].refs;
      ++stats_.packets_sent;
      if (transport_.can_send(f)) {
        p.ready.push_back(f);
        fl.in_ready = true;
      }
      return pkt;
    }
  }

  PortTable& ports_;
  PacketPool& packets_;
  FlowPool& flows_;
  RouteTable& routes_;
  EventQueue& events_;
  Transport& transport_;
  PacketStats& stats_;
  std::int64_t mtu_;
  std::int64_t header_;
  bool scheduled_ports_;
};

}  // namespace mfabric::net::packet
