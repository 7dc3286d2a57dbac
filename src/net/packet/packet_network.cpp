#include "net/packet/packet_network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

#include "core/error.h"
#include "net/packet/ecn_marker.h"
#include "net/packet/event_queue.h"
#include "net/packet/pfc.h"
#include "net/packet/port.h"
#include "net/packet/route_table.h"
#include "net/packet/transport.h"
#include "net/packet/transports.h"
#include "net/router.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NodeId;
using packet::Event;
using packet::EventKind;
using packet::FlowSlot;
using packet::Port;
using packet::RouteRec;

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

enum class Hold : std::uint8_t { None, Paused, Down };

constexpr std::uint8_t kCe = 1;       // the packet was marked Congestion Experienced
constexpr std::uint8_t kEcnEcho = 2;  // an ACK echoing CE
constexpr std::uint8_t kNack = 4;
constexpr std::uint8_t kCnp = 8;
constexpr std::uint8_t kLost = 16;  // lost on a failed link; dropped at its next event

struct Packet {
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

struct Flow {
  TransferId id = -1;
  NodeId src = fabric::kNoNode;
  NodeId dst = fabric::kNoNode;
  std::int64_t size = 0;
  std::uint64_t hash = 0;
  std::int32_t latency_hops = 1;
  std::int32_t route = -1;
  std::int32_t packets = 0;
  std::int32_t last_payload = 0;
  std::int32_t refs = 0;  // the flow itself until its callback ran, packets, ACKs, timer events
  std::int64_t timer_deadline = kNever;
  std::int64_t timer_next = kNever;  // the earliest Timer event pending for it
  // Packet spraying: the flow's other equal-cost routes; its packets take `route` and these in
  // turn (spray_next counts them).
  std::vector<std::int32_t> sprayed;
  std::uint32_t spray_next = 0;
  Hold hold = Hold::None;
  bool live = false;  // its transport is open: data still to arrive
  bool in_ready = false;
  Backend::DoneCallback on_done;
};

}  // namespace

struct PacketNetwork::State final : packet::TransportHost {
  State(const fabric::Topology& t, const PacketBackendOptions& o)
      : topo(t), links(t), router(links), options(o), transport(packet::make_transport(*this, o)) {
    sync();
  }

  const fabric::Topology& topo;
  LinkTable links;
  Router router;
  PacketBackendOptions options;
  bool pfc = options.pfc_enabled();
  // Without PFC a port never stops between packets: one event per hop (port.h).
  bool scheduled_ports = !pfc;
  packet::EcnMarker ecn{options.ecn_threshold, options.ecn_max, options.ecn_pmax, options.seed};
  packet::PfcIngress pfc_ingress{options.pfc_thresholds.xoff, options.pfc_thresholds.xon,
                                 options.mtu + options.header};
  std::unique_ptr<packet::Transport> transport;
  std::size_t links_seen = 0;

  std::vector<Port> ports;
  std::vector<std::int32_t> channel_port;     // -1: no port (a free circuit slot)
  std::vector<std::int32_t> port_route_refs;  // routes (alive) that cross each port
  std::vector<std::int32_t> retired_ports;
  packet::RouteTable routes;
  std::vector<Flow> flows;
  std::vector<FlowSlot> free_flows;
  std::vector<FlowSlot> paused;  // held by a torn-down circuit, in the order they were held
  std::vector<Packet> packets;
  std::vector<std::int32_t> free_packets;
  packet::EventQueue events;

  std::int64_t now_ps = 0;
  std::int64_t processed = 0;
  std::size_t active = 0;
  TransferId next_id = 0;
  TransferTotals totals_;
  PacketStats stats;
  std::int64_t in_flight = 0;
  std::vector<ChannelStats> channels;
  std::vector<PortStats> port_stats;
  Route scratch;
  Route spray_scratch;

  std::span<const std::int32_t> path_of(const RouteRec& r) const { return routes.ports_of(r); }
  std::int32_t first_port(std::int32_t route) const { return routes.port_at(routes[route].path); }

  // --- TransportHost ---
  Time now() const override { return Time::picoseconds(now_ps); }
  void wake(FlowSlot f) override {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    if (!fl.live || fl.hold != Hold::None || fl.in_ready) return;
    const std::int32_t p = first_port(fl.route);
    ports[static_cast<std::size_t>(p)].ready.push_back(f);
    fl.in_ready = true;
    kick(p);
  }
  void set_timer(FlowSlot f, Time at) override {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    fl.timer_deadline = at.ps();
    if (at.ps() == kNever || at.ps() >= fl.timer_next) return;
    fl.timer_next = at.ps();
    ++fl.refs;
    events.push(at.ps(), EventKind::Timer, static_cast<std::uint32_t>(f));
  }

  // --- ports ---
  void sync() {
    if (topo.links().size() != links_seen) {
      if (links.circuit_capacity() > 0 && links_seen > 0) {
        throw std::logic_error("PacketNetwork: topology links added after circuits exist");
      }
      if (links_seen > 0) router.sync();
      links_seen = topo.links().size();
    }
    const std::size_t channel_count = 2 * links.size();
    if (channel_port.size() < channel_count) channel_port.resize(channel_count, -1);
    if (channels.size() < channel_count) {
      channels.resize(channel_count);
      port_stats.resize(channel_count);
    }
    for (std::size_t l = 0; l < topo.links().size(); ++l) {
      for (ChannelId c : {static_cast<ChannelId>(2 * l), static_cast<ChannelId>(2 * l + 1)}) {
        if (channel_port[static_cast<std::size_t>(c)] < 0) add_port(c);
      }
    }
  }

  void configure(Port& p, ChannelId c) {
    const fabric::Link& link = links.link(link_of_channel(c));
    const NodeId from = (c % 2 == 0) ? link.a : link.b;
    p.channel = c;
    p.prop_ps = link.latency.ps();
    p.set_rate(link.rate.bps());
    const bool is_switch = topo.node(from).kind == fabric::NodeKind::Switch;
    p.is_switch = is_switch;
    // Lossless (PFC) switch ports never drop: their senders pause instead.
    p.buffer = is_switch && !pfc ? options.buffer.count() : 0;
    p.held_downstream = 0;
    p.pause_requested = false;
    p.paused = false;
    p.ecn_threshold = options.ecn_threshold.count();
    p.retired = false;
    p.queued = 0;
    p.last_change = now_ps;
    p.scheduled.clear();
    p.busy_until = now_ps;
  }

  std::int32_t add_port(ChannelId c) {
    std::int32_t index = -1;
    for (std::size_t i = 0; i < retired_ports.size(); ++i) {
      const std::int32_t r = retired_ports[i];
      Port& p = ports[static_cast<std::size_t>(r)];
      drain(p);
      if (!p.busy && p.fifo.empty() && p.scheduled.empty() && p.inbound == 0 &&
          port_route_refs[static_cast<std::size_t>(r)] == 0) {
        index = r;
        retired_ports.erase(retired_ports.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    if (index < 0) {
      index = static_cast<std::int32_t>(ports.size());
      ports.emplace_back();
      port_route_refs.push_back(0);
    }
    Port& p = ports[static_cast<std::size_t>(index)];
    p.ready.clear();
    configure(p, c);
    channel_port[static_cast<std::size_t>(c)] = index;
    return index;
  }

  PortStats& stats_of(const Port& p) { return port_stats[static_cast<std::size_t>(p.channel)]; }
  void account(Port& p) { p.account(stats_of(p), now_ps); }
  void drain(Port& p) { p.drain(stats_of(p), now_ps); }

  // Scheduled ports: puts the packet on the port's schedule and its next hop's event on the
  // list; returns when its last bit leaves.
  std::int64_t transmit(std::int32_t port_index, std::int32_t pkt) {
    Port& p = ports[static_cast<std::size_t>(port_index)];
    Packet& k = packets[static_cast<std::size_t>(pkt)];
    const std::int64_t ser = p.serialisation(k.wire);
    const std::int64_t done = std::max(now_ps, p.busy_until) + ser;
    p.busy_until = done;
    p.add_bytes(stats_of(p), k.wire, now_ps);
    p.scheduled.push(packet::Scheduled{done, k.wire, pkt});
    ChannelStats& cs = channels[static_cast<std::size_t>(p.channel)];
    cs.bytes += k.wire;
    cs.busy += Time::picoseconds(ser);
    ++port_stats[static_cast<std::size_t>(p.channel)].packets;
    ++k.hop;
    if (k.hop < k.hops) {
      ++ports[static_cast<std::size_t>(routes.port_at(k.path + k.hop))].inbound;
      events.push(done + p.prop_ps, EventKind::Arrive, static_cast<std::uint32_t>(pkt));
    } else {
      events.push(done + p.prop_ps, EventKind::Deliver, static_cast<std::uint32_t>(pkt));
    }
    return done;
  }

  void enqueue(Port& p, std::int32_t pkt) {
    p.fifo.push(pkt);
    p.add_bytes(stats_of(p), packets[static_cast<std::size_t>(pkt)].wire, now_ps);
  }

  // Starts the port's next packet if it is free: the head of its FIFO, else a new packet of the
  // next ready flow that starts here.
  void kick(std::int32_t port_index) {
    Port& p = ports[static_cast<std::size_t>(port_index)];
    if (p.busy || p.down || p.paused) return;
    if (scheduled_ports) {
      const std::int32_t pkt = pull(port_index);
      if (pkt < 0) return;
      drain(ports[static_cast<std::size_t>(port_index)]);
      const std::int64_t done = transmit(port_index, pkt);
      ports[static_cast<std::size_t>(port_index)].busy = true;
      events.push(done, EventKind::PortDone, static_cast<std::uint32_t>(port_index));
      return;
    }
    if (p.fifo.empty()) {
      const std::int32_t pkt = pull(port_index);
      if (pkt < 0) return;
      enqueue(ports[static_cast<std::size_t>(port_index)], pkt);
    }
    Port& q = ports[static_cast<std::size_t>(port_index)];
    const Packet& head = packets[static_cast<std::size_t>(q.fifo.front())];
    const std::int64_t ser = q.serialisation(head.wire);
    q.busy = true;
    channels[static_cast<std::size_t>(q.channel)].busy += Time::picoseconds(ser);
    events.push(now_ps + ser, EventKind::PortDone, static_cast<std::uint32_t>(port_index));
  }

  // A new packet of the next ready flow that starts at this port, or -1.
  std::int32_t pull(std::int32_t port_index) {
    for (;;) {
      Port& p = ports[static_cast<std::size_t>(port_index)];
      if (p.ready.empty()) return -1;
      const FlowSlot f = p.ready.front();
      p.ready.pop_front();
      Flow& fl = flows[static_cast<std::size_t>(f)];
      // A flow that moved to a route from another port left a stale entry here.
      if (fl.route < 0 || first_port(fl.route) != port_index) {
        continue;
      }
      fl.in_ready = false;
      if (!fl.live || fl.hold != Hold::None) continue;
      const std::int32_t seq = transport->next_packet(f);
      if (seq < 0) continue;
      const std::int32_t pkt = new_packet();
      Packet& k = packets[static_cast<std::size_t>(pkt)];
      k.flow = f;
      k.seq = seq;
      std::int32_t route = fl.route;
      if (!fl.sprayed.empty()) {
        const std::uint32_t turn =
            fl.spray_next++ % static_cast<std::uint32_t>(fl.sprayed.size() + 1);
        if (turn > 0) route = fl.sprayed[turn - 1];
      }
      k.route = route;
      k.path = routes[route].path;
      k.hops = static_cast<std::uint16_t>(routes[route].hops);
      k.hop = 0;
      k.flags = 0;
      k.wire = static_cast<std::int32_t>(
          (seq == fl.packets - 1 ? fl.last_payload : options.mtu.count()) + options.header.count());
      ++fl.refs;
      ++routes[route].refs;
      ++stats.packets_sent;
      if (transport->can_send(f)) {
        p.ready.push_back(f);
        fl.in_ready = true;
      }
      return pkt;
    }
  }

  // --- pools ---
  std::int32_t new_packet() {
    ++in_flight;
    stats.max_packets_in_flight = std::max(stats.max_packets_in_flight, in_flight);
    if (!free_packets.empty()) {
      const std::int32_t p = free_packets.back();
      free_packets.pop_back();
      return p;
    }
    packets.emplace_back();
    return static_cast<std::int32_t>(packets.size() - 1);
  }
  void free_packet(std::int32_t pkt) {
    const Packet k = packets[static_cast<std::size_t>(pkt)];
    --in_flight;
    free_packets.push_back(pkt);
    unref_route(k.route);
    unref_flow(k.flow);
  }
  void unref_flow(FlowSlot f) {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    if (--fl.refs > 0) return;
    fl = Flow{};
    free_flows.push_back(f);
  }
  std::int32_t new_route(const Route& r) {
    const std::int32_t index = routes.allocate(static_cast<std::int32_t>(r.channels.size()));
    RouteRec& rec = routes[index];
    rec.latency_ps = r.latency.ps();
    rec.cost = r.cost;
    const std::int64_t mtu_wire = options.mtu.count() + options.header.count();
    for (std::size_t i = 0; i < r.channels.size(); ++i) {
      const ChannelId c = r.channels[i];
      const std::int32_t p = channel_port[static_cast<std::size_t>(c)];
      routes.set_port(rec, i, p);
      ++port_route_refs[static_cast<std::size_t>(p)];
      const Port& fwd = ports[static_cast<std::size_t>(p)];
      rec.data_ps += fwd.down ? 0 : fwd.serialisation(mtu_wire);
      const std::int32_t back = channel_port[static_cast<std::size_t>(c ^ 1)];
      const Port& rev = ports[static_cast<std::size_t>(back)];
      rec.ack_delay_ps += rev.prop_ps + (rev.down ? 0 : rev.serialisation(options.ack.count()));
    }
    return index;
  }
  void unref_route(std::int32_t r) {
    RouteRec& rec = routes[r];
    if (--rec.refs > 0) return;
    for (std::int32_t p : path_of(rec))
      --port_route_refs[static_cast<std::size_t>(p)];
    routes.free(r);
  }
  void set_route(Flow& fl, const Route& r) {
    const std::int32_t old = fl.route;
    fl.route = new_route(r);
    ++routes[fl.route].refs;
    if (old >= 0) {
      // Its entry in the old first port's ready list is stale now (pull() skips it).
      if (first_port(old) != first_port(fl.route)) {
        fl.in_ready = false;
      }
      unref_route(old);
    }
    spray(fl);
  }
  void clear_sprayed(Flow& fl) {
    for (std::int32_t r : fl.sprayed)
      unref_route(r);
    fl.sprayed.clear();
  }
  // Packet spraying: up to spray_paths - 1 more routes of the primary's cost and first port over
  // links up now, found by hashing the flow again (spray_hash), each kept once.
  void spray(Flow& fl) {
    clear_sprayed(fl);
    if (options.spray_paths <= 1) return;
    const RouteRec& primary = routes[fl.route];
    const RouteCost cost = primary.cost;
    const std::int32_t first = first_port(fl.route);
    const int attempts = 4 * options.spray_paths;
    for (int i = 1; i < attempts && static_cast<int>(fl.sprayed.size()) + 1 < options.spray_paths;
         ++i) {
      if (!router.find(fl.src, fl.dst, spray_hash(fl.hash, static_cast<std::uint64_t>(i)),
                       spray_scratch, false) ||
          !(spray_scratch.cost == cost) || spray_scratch.channels.empty()) {
        continue;
      }
      if (channel_port[static_cast<std::size_t>(spray_scratch.channels.front())] != first) continue;
      if (same_ports(fl.route, spray_scratch)) continue;
      bool seen = false;
      for (std::int32_t r : fl.sprayed)
        seen = seen || same_ports(r, spray_scratch);
      if (seen) continue;
      const std::int32_t r = new_route(spray_scratch);
      ++routes[r].refs;
      fl.sprayed.push_back(r);
    }
  }
  bool same_ports(std::int32_t route, const Route& r) const {
    const std::span<const std::int32_t> a = path_of(routes[route]);
    if (a.size() != r.channels.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] != channel_port[static_cast<std::size_t>(r.channels[i])]) return false;
    }
    return true;
  }
  bool route_down(std::int32_t route) const {
    for (std::int32_t p : path_of(routes[route])) {
      const Port& q = ports[static_cast<std::size_t>(p)];
      if (q.down || q.retired) return true;
    }
    return false;
  }
  bool crosses_down(const Flow& fl) const {
    if (route_down(fl.route)) return true;
    for (std::int32_t r : fl.sprayed) {
      if (route_down(r)) return true;
    }
    return false;
  }
  void unhold(FlowSlot f) {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    fl.hold = Hold::None;
    if (fl.timer_deadline <= now_ps && fl.timer_next == kNever) {
      fl.timer_next = now_ps;
      ++fl.refs;
      events.push(now_ps, EventKind::Timer, static_cast<std::uint32_t>(f));
    }
    if (transport->can_send(f)) wake(f);
  }

  // --- events ---
  // Drops a packet the port had queued: the switch no longer holds it for PFC either.
  void drop_queued(std::int32_t pkt, Port& p) {
    const Packet& k = packets[static_cast<std::size_t>(pkt)];
    if (pfc && p.is_switch && k.hop > 0) {
      release_ingress(routes.port_at(k.path + k.hop - 1), k.wire);
    }
    drop(pkt, p);
  }

  void drop(std::int32_t pkt, Port& p) {
    ++stats.drops;
    ++port_stats[static_cast<std::size_t>(p.channel)].drops;
    free_packet(pkt);
  }

  void on_arrive(std::int32_t pkt) {
    Packet& k = packets[static_cast<std::size_t>(pkt)];
    const std::int32_t port_index = routes.port_at(k.path + k.hop);
    Port& p = ports[static_cast<std::size_t>(port_index)];
    --p.inbound;
    if (k.flags & kLost) {
      free_packet(pkt);
      return;
    }
    if (scheduled_ports) drain(p);
    if (p.down || (p.buffer > 0 && p.queued + k.wire > p.buffer)) {
      drop(pkt, p);
      return;
    }
    // PFC: what a lossless switch keeps for one input is xoff plus the headroom; a packet beyond
    // it is lost (a pause that came too late for the link: thresholds set wrong).
    if (pfc && p.is_switch && k.hop > 0) {
      const Port& u = ports[static_cast<std::size_t>(routes.port_at(k.path + k.hop - 1))];
      if (!pfc_ingress.fits(u, k.wire)) {
        ++stats.pfc_headroom_drops;
        drop(pkt, p);
        return;
      }
    }
    if (ecn.mark(p.queued)) {
      k.flags |= kCe;
      ++stats.marks;
      ++port_stats[static_cast<std::size_t>(p.channel)].marks;
    }
    if (scheduled_ports) {
      transmit(port_index, pkt);
      return;
    }
    enqueue(p, pkt);
    if (pfc && p.is_switch && k.hop > 0) {
      const std::int32_t up = routes.port_at(k.path + k.hop - 1);
      Port& u = ports[static_cast<std::size_t>(up)];
      if (pfc_ingress.hold(u, k.wire)) {
        ++stats.pfc_pauses;
        events.push(now_ps + u.prop_ps, EventKind::PfcPause, static_cast<std::uint32_t>(up));
      }
    }
    if (!p.busy) kick(port_index);
  }

  void on_pfc(std::int32_t port_index, bool pause) {
    Port& p = ports[static_cast<std::size_t>(port_index)];
    if (pause == p.paused) return;
    p.paused = pause;
    PortStats& st = port_stats[static_cast<std::size_t>(p.channel)];
    if (pause) {
      p.paused_since = now_ps;
      ++st.pauses;
    } else {
      st.pause_ps += now_ps - p.paused_since;
      kick(port_index);
    }
  }

  void on_port_done(std::int32_t port_index) {
    Port& p = ports[static_cast<std::size_t>(port_index)];
    p.busy = false;
    if (scheduled_ports) {
      kick(port_index);
      return;
    }
    if (p.fifo.empty()) return;  // its packets were dropped when its link went down
    account(p);
    const std::int32_t pkt = p.fifo.pop();
    Packet& k = packets[static_cast<std::size_t>(pkt)];
    p.queued -= k.wire;
    if (p.down) {
      drop_queued(pkt, p);
      return;
    }
    channels[static_cast<std::size_t>(p.channel)].bytes += k.wire;
    ++port_stats[static_cast<std::size_t>(p.channel)].packets;
    if (pfc && p.is_switch && k.hop > 0) {
      release_ingress(routes.port_at(k.path + k.hop - 1), k.wire);
    }
    ++k.hop;
    if (k.hop < k.hops) {
      ++ports[static_cast<std::size_t>(routes.port_at(k.path + k.hop))].inbound;
      events.push(now_ps + p.prop_ps, EventKind::Arrive, static_cast<std::uint32_t>(pkt));
    } else {
      events.push(now_ps + p.prop_ps, EventKind::Deliver, static_cast<std::uint32_t>(pkt));
    }
    kick(port_index);
  }

  // PFC: the switch no longer holds `bytes` that came from port `up`; resume it at xon.
  void release_ingress(std::int32_t up, std::int64_t bytes) {
    if (pfc_ingress.release(ports[static_cast<std::size_t>(up)], bytes)) {
      const Port& u = ports[static_cast<std::size_t>(up)];
      events.push(now_ps + u.prop_ps, EventKind::PfcResume, static_cast<std::uint32_t>(up));
    }
  }

  void on_deliver(std::int32_t pkt) {
    Packet& k = packets[static_cast<std::size_t>(pkt)];
    const FlowSlot f = k.flow;
    if (!flows[static_cast<std::size_t>(f)].live || (k.flags & kLost)) {
      free_packet(pkt);
      return;
    }
    ++stats.packets_delivered;
    packet::Ack ack;
    bool complete = false;
    const bool answer = transport->on_data(f, k.seq, (k.flags & kCe) != 0, ack, complete);
    if (complete) finish(f);
    if (!answer || !flows[static_cast<std::size_t>(f)].live) {
      free_packet(pkt);
      return;
    }
    ++stats.acks;
    k.seq = ack.seq;
    k.cumulative = ack.cumulative;
    k.flags = static_cast<std::uint8_t>((ack.ecn_echo ? kEcnEcho : 0) | (ack.nack ? kNack : 0) |
                                        (ack.cnp ? kCnp : 0));
    events.push(now_ps + routes[k.route].ack_delay_ps, EventKind::Ack,
                static_cast<std::uint32_t>(pkt));
  }

  void on_ack(std::int32_t pkt) {
    const Packet k = packets[static_cast<std::size_t>(pkt)];
    if (flows[static_cast<std::size_t>(k.flow)].live) {
      packet::Ack ack;
      ack.seq = k.seq;
      ack.cumulative = k.cumulative;
      ack.ecn_echo = (k.flags & kEcnEcho) != 0;
      ack.nack = (k.flags & kNack) != 0;
      ack.cnp = (k.flags & kCnp) != 0;
      transport->on_ack(k.flow, ack);
    }
    free_packet(pkt);
  }

  void on_timer(FlowSlot f, std::int64_t t) {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    if (fl.live) {
      if (t == fl.timer_next) fl.timer_next = kNever;
      if (fl.timer_deadline <= now_ps) {
        if (fl.hold == Hold::None) {
          fl.timer_deadline = kNever;
          transport->on_timer(f);
        }
      } else if (fl.timer_deadline != kNever && fl.timer_next == kNever) {
        fl.timer_next = fl.timer_deadline;
        ++fl.refs;
        events.push(fl.timer_deadline, EventKind::Timer, static_cast<std::uint32_t>(f));
      }
    }
    unref_flow(f);
  }

  // The flow's data has all arrived: its callback runs after the extra latency hops.
  void finish(FlowSlot f) {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    fl.live = false;
    fl.timer_deadline = kNever;
    transport->close(f);
    const RouteRec& r = routes[fl.route];
    const std::int64_t extra = r.latency_ps * std::max(0, fl.latency_hops - 1);
    events.push(now_ps + extra, EventKind::Complete, static_cast<std::uint32_t>(f));
  }

  void on_complete(FlowSlot f) {
    Flow& fl = flows[static_cast<std::size_t>(f)];
    Backend::DoneCallback done = std::move(fl.on_done);
    const TransferId id = fl.id;
    ++totals_.delivered;
    totals_.bytes_delivered += fl.size;
    --active;
    if (fl.route >= 0) {
      unref_route(fl.route);
      fl.route = -1;
    }
    clear_sprayed(fl);
    unref_flow(f);
    if (done) done(id, Time::picoseconds(now_ps));
  }

  void process(const Event& e) {
    ++processed;
    const auto i = static_cast<std::int32_t>(e.index);
    switch (e.kind) {
      case EventKind::Arrive:
        on_arrive(i);
        break;
      case EventKind::PortDone:
        on_port_done(i);
        break;
      case EventKind::Deliver:
        on_deliver(i);
        break;
      case EventKind::Ack:
        on_ack(i);
        break;
      case EventKind::Timer:
        on_timer(i, e.t);
        break;
      case EventKind::Complete:
        on_complete(i);
        break;
      case EventKind::PfcPause:
        on_pfc(i, true);
        break;
      case EventKind::PfcResume:
        on_pfc(i, false);
        break;
    }
  }

  FlowSlot new_flow() {
    if (!free_flows.empty()) {
      const FlowSlot f = free_flows.back();
      free_flows.pop_back();
      return f;
    }
    flows.emplace_back();
    return static_cast<FlowSlot>(flows.size() - 1);
  }

  // Flows (live, not held) whose route crosses a down or retired port, in slot order.
  std::vector<FlowSlot> flows_crossing_down() const {
    std::vector<FlowSlot> out;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const Flow& fl = flows[i];
      if (fl.live && fl.hold == Hold::None && fl.route >= 0 && crosses_down(fl)) {
        out.push_back(static_cast<FlowSlot>(i));
      }
    }
    return out;
  }
};

// ----------------------------------------------------------------------------------------------

PacketNetwork::PacketNetwork(const fabric::Topology& topology,
                             const PacketBackendOptions& options) {
  check_packet_options(options, topology, options.source);
  s_ = std::make_unique<State>(topology, options);
}

PacketNetwork::~PacketNetwork() = default;

TransferId PacketNetwork::start(const net::Transfer& t, DoneCallback on_done) {
  State& s = *s_;
  s.sync();
  check_transfer(t);
  s.router.route(t.src, t.dst, t.flow_hash, s.scratch);
  return start_routed(t, s.scratch, std::move(on_done));
}

void PacketNetwork::move_clock(Time t) {
  State& s = *s_;
  if (t.ps() < s.now_ps || (!s.events.empty() && s.events.top().t < t.ps())) {
    throw std::logic_error(
        fmt::format("PacketNetwork::move_clock: {} ps is before now ({} ps) or "
                    "after the next event",
                    t.ps(), s.now_ps));
  }
  s.now_ps = t.ps();
}

void PacketNetwork::route(const net::Transfer& t, Route& out) {
  State& s = *s_;
  s.sync();
  s.router.route(t.src, t.dst, t.flow_hash, out);
}

TransferId PacketNetwork::start_routed(const net::Transfer& t, const Route& route,
                                       DoneCallback on_done) {
  State& s = *s_;
  const std::int64_t mtu = s.options.mtu.count();
  const std::int64_t packet_count = (t.size.count() + mtu - 1) / mtu;
  if (packet_count > kMaxFlowPackets) {
    throw Error(s.options.source, "simulation.mtu",
                fmt::format("the transfer {} -> {}: {}", s.topo.name(t.src), s.topo.name(t.dst),
                            flow_size_limit(t.size, s.options.mtu)));
  }
  const FlowSlot f = s.new_flow();
  const TransferId id = s.next_id++;
  Flow& fl = s.flows[static_cast<std::size_t>(f)];
  fl.id = id;
  fl.src = t.src;
  fl.dst = t.dst;
  fl.size = t.size.count();
  fl.hash = t.flow_hash;
  fl.latency_hops = t.latency_hops;
  fl.packets = static_cast<std::int32_t>(packet_count);
  fl.last_payload = static_cast<std::int32_t>(t.size.count() - (packet_count - 1) * mtu);
  fl.refs = 1;
  fl.on_done = std::move(on_done);
  ++s.active;
  ++s.processed;
  ++s.totals_.started;
  s.totals_.bytes_sent += t.size.count();
  if (route.channels.empty()) {
    s.events.push(s.now_ps, EventKind::Complete, static_cast<std::uint32_t>(f));
    return id;
  }
  s.set_route(fl, route);
  if (t.size.count() == 0) {
    const std::int64_t latency = s.routes[fl.route].latency_ps * t.latency_hops;
    s.events.push(s.now_ps + latency, EventKind::Complete, static_cast<std::uint32_t>(f));
    return id;
  }
  const RouteRec& r = s.routes[fl.route];
  const Time rtt = Time::picoseconds(r.latency_ps + r.data_ps + r.ack_delay_ps);
  fl.live = true;
  // The flow's line rate is its route's slowest link (ps_per_byte = 8e12 / rate; 0 = down).
  double slowest_ps_per_byte = 0;
  for (std::int32_t p : s.path_of(r)) {
    slowest_ps_per_byte =
        std::max(slowest_ps_per_byte, s.ports[static_cast<std::size_t>(p)].ps_per_byte);
  }
  const Rate line_rate =
      Rate::bits_per_second(slowest_ps_per_byte > 0 ? 8e12 / slowest_ps_per_byte : 0.0);
  s.transport->open(f, fl.packets, rtt, line_rate);
  if (s.crosses_down(fl)) {
    fl.hold = Hold::Down;
    return id;
  }
  s.wake(f);
  return id;
}

void PacketNetwork::set_link_rate(LinkId link, Rate rate) {
  State& s = *s_;
  s.sync();
  check_link_rate(s.links, link, rate);
  const bool is_up = rate.bps() > 0;
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    const std::int32_t pi = s.channel_port[static_cast<std::size_t>(c)];
    Port& p = s.ports[static_cast<std::size_t>(pi)];
    p.set_rate(rate.bps());
    if (!is_up && s.scheduled_ports) {
      // A failed link loses what its port holds: the packets not gone yet are lost (dropped at
      // their next event, counted here).
      s.drain(p);
      s.account(p);
      while (!p.scheduled.empty()) {
        const packet::Scheduled lost = p.scheduled.pop();
        s.packets[static_cast<std::size_t>(lost.packet)].flags |= kLost;
        p.queued -= lost.wire;
        ++s.stats.drops;
        ++s.port_stats[static_cast<std::size_t>(p.channel)].drops;
      }
      p.busy_until = s.now_ps;
    } else if (!is_up) {
      // A failed link loses what its port holds; the packet on the wire is lost at PortDone.
      s.account(p);
      std::vector<std::int32_t> lost;
      const bool keep_head = p.busy && !p.fifo.empty();
      p.fifo.for_each([&](std::int32_t k) { lost.push_back(k); });
      p.fifo.clear();
      p.queued = 0;
      if (keep_head) {
        p.fifo.push(lost.front());
        p.queued = s.packets[static_cast<std::size_t>(lost.front())].wire;
        lost.erase(lost.begin());
      }
      for (std::int32_t k : lost)
        s.drop_queued(k, p);
    }
  }
  const bool was_up = s.router.link_up(link);
  if (was_up != is_up) s.router.set_link_up(link, is_up);
  if (!is_up) {
    // Flows crossing it move to a route of equal cost if there is one, else hold.
    for (FlowSlot f : s.flows_crossing_down()) {
      Flow& fl = s.flows[static_cast<std::size_t>(f)];
      const RouteCost cost = s.routes[fl.route].cost;
      if (s.router.find(fl.src, fl.dst, fl.hash, s.scratch, false) && s.scratch.cost == cost) {
        s.set_route(fl, s.scratch);
        if (!s.crosses_down(fl)) continue;
      }
      fl.hold = Hold::Down;
    }
  } else {
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
      Flow& fl = s.flows[i];
      if (fl.live && fl.hold == Hold::Down && !s.crosses_down(fl)) {
        s.unhold(static_cast<FlowSlot>(i));
      }
    }
    for (ChannelId c : {2 * link, 2 * link + 1})
      s.kick(s.channel_port[static_cast<std::size_t>(c)]);
  }
}

void PacketNetwork::reroute_down() {
  State& s = *s_;
  s.sync();
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    Flow& fl = s.flows[i];
    if (!fl.live || fl.hold != Hold::Down) continue;
    if (!s.router.find(fl.src, fl.dst, fl.hash, s.scratch, false)) continue;
    s.set_route(fl, s.scratch);
    if (!s.crosses_down(fl)) s.unhold(static_cast<FlowSlot>(i));
  }
}

Time PacketNetwork::now() const {
  return Time::picoseconds(s_->now_ps);
}

std::optional<Time> PacketNetwork::next_event_time() const {
  if (s_->events.empty()) return std::nullopt;
  return Time::picoseconds(s_->events.top().t);
}

void PacketNetwork::advance(Time t) {
  State& s = *s_;
  if (t.ps() < s.now_ps) {
    throw std::logic_error(
        fmt::format("PacketNetwork::advance: time {} ps is before now ({} ps)", t.ps(), s.now_ps));
  }
  for (;;) {
    const std::optional<Time> next = next_event_time();
    if (!next || next->ps() > t.ps()) break;
    // One timestamp at a time, with the events pushed for that time meanwhile.
    s.now_ps = next->ps();
    while (!s.events.empty() && s.events.top().t == s.now_ps)
      s.process(s.events.pop());
  }
  s.now_ps = t.ps();
}

std::size_t PacketNetwork::active_transfers() const {
  return s_->active;
}

std::int64_t PacketNetwork::events_processed() const {
  return s_->processed;
}

const std::vector<ChannelStats>& PacketNetwork::channel_stats() const {
  return s_->channels;
}

const std::vector<PortStats>& PacketNetwork::port_stats() const {
  // The occupancy integrals up to now.
  for (Port& p : s_->ports) {
    if (p.channel < 0) continue;
    s_->drain(p);
    s_->account(p);
  }
  return s_->port_stats;
}

PacketStats PacketNetwork::packet_stats() const {
  PacketStats st = s_->stats;
  st.retransmissions = s_->transport->retransmissions();
  st.timeouts = s_->transport->timeouts();
  return st;
}

std::optional<PacketReport> PacketNetwork::packet_report() const {
  return PacketReport{port_stats(), packet_stats()};
}

const PacketBackendOptions& PacketNetwork::options() const {
  return s_->options;
}

std::vector<StalledTransfer> PacketNetwork::stalled_transfers(std::size_t limit) const {
  const State& s = *s_;
  std::vector<StalledTransfer> out;
  for (const Flow& fl : s.flows) {
    if (out.size() >= limit) break;
    if (!fl.live || fl.hold == Hold::None) continue;
    StalledTransfer st;
    st.id = fl.id;
    st.src = fl.src;
    st.dst = fl.dst;
    st.remaining = Bytes(fl.size);
    st.why =
        fl.hold == Hold::Paused ? StalledTransfer::Why::Paused : StalledTransfer::Why::LinkDown;
    if (fl.hold == Hold::Down) {
      for (std::int32_t p : s.path_of(s.routes[fl.route])) {
        const Port& q = s.ports[static_cast<std::size_t>(p)];
        if (q.down) {
          st.down_link = link_of_channel(q.channel);
          break;
        }
      }
    }
    out.push_back(st);
  }
  return out;
}

TransferTotals PacketNetwork::totals() const {
  return s_->totals_;
}

LinkId PacketNetwork::connect(NodeId nic_a, NodeId nic_b) {
  State& s = *s_;
  s.sync();
  const LinkId id = s.links.connect(nic_a, nic_b);
  s.sync();  // channel tables cover the circuit slots
  for (ChannelId c : {2 * id, 2 * id + 1})
    s.add_port(c);
  s.router.set_link_up(id, s.links.link(id).rate.bps() > 0);
  return id;
}

void PacketNetwork::disconnect(LinkId circuit) {
  State& s = *s_;
  if (!s.links.connected(circuit)) {
    throw Error("", "circuit", fmt::format("link {} is not a connected circuit", circuit));
  }
  for (ChannelId c : {2 * circuit, 2 * circuit + 1}) {
    const std::int32_t pi = s.channel_port[static_cast<std::size_t>(c)];
    s.ports[static_cast<std::size_t>(pi)].retired = true;
    s.retired_ports.push_back(pi);
    s.channel_port[static_cast<std::size_t>(c)] = -1;
  }
  for (FlowSlot f : s.flows_crossing_down()) {
    s.flows[static_cast<std::size_t>(f)].hold = Hold::Paused;
    s.paused.push_back(f);
  }
  s.router.set_link_up(circuit, false);
  s.links.disconnect(circuit);
}

NodeId PacketNetwork::circuit_peer(NodeId nic) const {
  const LinkId c = s_->links.circuit_at(nic);
  return c < 0 ? fabric::kNoNode : s_->links.other_end(c, nic);
}

void PacketNetwork::resume_paused() {
  resume_paused_on(std::vector<bool>(static_cast<std::size_t>(s_->topo.cluster().servers), true));
}

void PacketNetwork::resume_paused(std::span<const NodeId> nics) {
  resume_paused_on(servers_of_nics(s_->topo, nics));
}

void PacketNetwork::resume_paused_on(const std::vector<bool>& servers) {
  State& s = *s_;
  const auto inside = [&](NodeId gpu) {
    return servers[static_cast<std::size_t>(s.topo.node(gpu).server)];
  };
  std::vector<FlowSlot> resume;
  std::vector<FlowSlot> still;
  for (FlowSlot f : s.paused) {
    const Flow& fl = s.flows[static_cast<std::size_t>(f)];
    if (!fl.live || fl.hold != Hold::Paused) continue;
    (inside(fl.src) || inside(fl.dst) ? resume : still).push_back(f);
  }
  s.paused.swap(still);
  for (FlowSlot f : resume) {
    Flow& fl = s.flows[static_cast<std::size_t>(f)];
    s.router.route(fl.src, fl.dst, fl.hash, s.scratch);
    s.set_route(fl, s.scratch);
    if (s.crosses_down(fl)) {
      fl.hold = Hold::Down;
      continue;
    }
    s.unhold(f);
  }
}

void PacketNetwork::reroute(std::span<const NodeId> nics) {
  State& s = *s_;
  const std::vector<bool> servers = servers_of_nics(s.topo, nics);
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    Flow& fl = s.flows[i];
    if (!fl.live || fl.hold != Hold::None) continue;
    if (!servers[static_cast<std::size_t>(s.topo.node(fl.src).server)]) continue;
    if (!s.router.find(fl.src, fl.dst, fl.hash, s.scratch, false)) continue;
    if (!(s.scratch.cost < s.routes[fl.route].cost)) continue;
    // The flow's packets in flight stay on the old route; new ones take the new one, from the
    // new first port.
    s.set_route(fl, s.scratch);
    s.wake(static_cast<FlowSlot>(i));
  }
}

std::size_t PacketNetwork::paused_transfers() const {
  std::size_t n = 0;
  for (FlowSlot f : s_->paused) {
    const Flow& fl = s_->flows[static_cast<std::size_t>(f)];
    if (fl.live && fl.hold == Hold::Paused) ++n;
  }
  return n;
}

}  // namespace mfabric::net
