#include "net/packet/packet_network.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "net/packet/ecn_marker.h"
#include "net/packet/event_queue.h"
#include "net/packet/flow_pool.h"
#include "net/packet/flow_rerouting.h"
#include "net/packet/packet_pool.h"
#include "net/packet/packet_spraying.h"
#include "net/packet/pfc.h"
#include "net/packet/port.h"
#include "net/packet/port_scheduler.h"
#include "net/packet/port_table.h"
#include "net/packet/route_table.h"
#include "net/packet/transport.h"
#include "net/router.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NodeId;
using packet::Event;
using packet::EventKind;
using packet::Flow;
using packet::FlowSlot;
using packet::Hold;
using packet::kNever;
using packet::Packet;
using packet::Port;
using packet::RouteRec;

// The network's parts (pools, ports, routes, the event list) and what runs them, and the event
// handlers: what happens to a packet at each event.
struct PacketNetwork::State final : packet::TransportHost {
  State(const fabric::Topology& t, const PacketBackendOptions& o)
      : topo(t), links(t), router(links), options(o), transport(o.transport->make(*this, o)) {
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

  packet::PortTable ports{topo, links, options};
  packet::RouteTable routes{options.mtu.count() + options.header.count(), options.ack.count()};
  packet::FlowPool flows;
  packet::PacketPool packets;
  packet::EventQueue events;

  // Bytes per channel per time bin, when record_timeline() asked for them.
  std::unique_ptr<LinkTimeline> timeline;

  std::int64_t now_ps = 0;
  std::int64_t processed = 0;
  std::size_t active = 0;
  TransferId next_id = 0;
  TransferTotals totals_;
  PacketStats stats;
  Route scratch;

  packet::PortScheduler scheduler{ports,  packets,    flows, routes,
                                  events, *transport, stats, options};
  packet::PacketSprayer sprayer{router, routes, ports, options.spray_paths};
  packet::FlowRerouter rerouter{topo,    router,    flows,  routes,    ports,
                                sprayer, scheduler, events, *transport};

  // --- TransportHost ---
  Time now() const override { return Time::picoseconds(now_ps); }
  void wake(FlowSlot f) override { scheduler.wake(f, now_ps); }
  void set_timer(FlowSlot f, Time at) override {
    Flow& fl = flows[f];
    fl.timer_deadline = at.ps();
    if (at.ps() == kNever || at.ps() >= fl.timer_next) return;
    fl.timer_next = at.ps();
    ++fl.refs;
    events.push(at.ps(), EventKind::Timer, static_cast<std::uint32_t>(f));
  }

  // The router and the ports follow the topology's links (and the circuit slots).
  void sync() {
    if (topo.links().size() != links_seen) {
      if (links.circuit_capacity() > 0 && links_seen > 0) {
        throw std::logic_error("PacketNetwork: topology links added after circuits exist");
      }
      if (links_seen > 0) router.sync();
      links_seen = topo.links().size();
    }
    ports.cover(2 * links.size(), routes, now_ps);
  }

  // The packet is gone: its slot, its reference to its route and to its flow.
  void free_packet(std::int32_t pkt) {
    const Packet& k = packets[pkt];
    const std::int32_t route = k.route;
    const FlowSlot flow = k.flow;
    packets.release(pkt);
    routes.release(route);
    flows.unref(flow);
  }

  // A failed link loses what its port holds.
  void lose_held(Port& p) {
    if (scheduled_ports) {
      scheduler.lose_scheduled(p, now_ps);
      return;
    }
    // The packet on the wire is lost at PortDone.
    ports.account(p, now_ps);
    std::vector<std::int32_t> lost;
    const bool keep_head = p.busy && !p.fifo.empty();
    p.fifo.for_each([&](std::int32_t k) { lost.push_back(k); });
    p.fifo.clear();
    p.queued = 0;
    if (keep_head) {
      p.fifo.push(lost.front());
      p.queued = packets[lost.front()].wire;
      lost.erase(lost.begin());
    }
    for (std::int32_t k : lost)
      drop_queued(k, p);
  }

  // --- events ---
  // Drops a packet the port had queued: the switch no longer holds it for PFC either.
  void drop_queued(std::int32_t pkt, Port& p) {
    const Packet& k = packets[pkt];
    if (pfc && p.is_switch && k.hop > 0) {
      release_ingress(routes.port_at(k.path + k.hop - 1), k.wire);
    }
    drop(pkt, p);
  }

  void drop(std::int32_t pkt, Port& p) {
    ++stats.drops;
    ++ports.stats_of(p).drops;
    free_packet(pkt);
  }

  void on_arrive(std::int32_t pkt) {
    Packet& k = packets[pkt];
    const std::int32_t port_index = routes.port_at(k.path + k.hop);
    Port& p = ports[port_index];
    --p.inbound;
    if (k.flags & Packet::kLost) {
      free_packet(pkt);
      return;
    }
    if (scheduled_ports) ports.drain(p, now_ps);
    if (p.down || (p.buffer > 0 && p.queued + k.wire > p.buffer)) {
      drop(pkt, p);
      return;
    }
    // PFC: what a lossless switch keeps for one input is xoff plus the headroom; a packet beyond
    // it is lost (a pause that came too late for the link: thresholds set wrong).
    if (pfc && p.is_switch && k.hop > 0) {
      const Port& u = ports[routes.port_at(k.path + k.hop - 1)];
      if (!pfc_ingress.fits(u, k.wire)) {
        ++stats.pfc_headroom_drops;
        drop(pkt, p);
        return;
      }
    }
    if (ecn.mark(p.queued)) {
      k.flags |= Packet::kCe;
      ++stats.marks;
      ++ports.stats_of(p).marks;
    }
    if (scheduled_ports) {
      scheduler.transmit(port_index, pkt, now_ps);
      return;
    }
    scheduler.enqueue(p, pkt, now_ps);
    if (pfc && p.is_switch && k.hop > 0) {
      const std::int32_t up = routes.port_at(k.path + k.hop - 1);
      Port& u = ports[up];
      if (pfc_ingress.hold(u, k.wire)) {
        ++stats.pfc_pauses;
        events.push(now_ps + u.prop_ps, EventKind::PfcPause, static_cast<std::uint32_t>(up));
      }
    }
    if (!p.busy) scheduler.kick(port_index, now_ps);
  }

  void on_pfc(std::int32_t port_index, bool pause) {
    Port& p = ports[port_index];
    if (pause == p.paused) return;
    p.paused = pause;
    PortStats& st = ports.stats_of(p);
    if (pause) {
      p.paused_since = now_ps;
      ++st.pauses;
    } else {
      st.pause_ps += now_ps - p.paused_since;
      scheduler.kick(port_index, now_ps);
    }
  }

  void on_port_done(std::int32_t port_index) {
    Port& p = ports[port_index];
    p.busy = false;
    if (scheduled_ports) {
      scheduler.kick(port_index, now_ps);
      return;
    }
    if (p.fifo.empty()) return;  // its packets were dropped when its link went down
    ports.account(p, now_ps);
    const std::int32_t pkt = p.fifo.pop();
    const Packet& k = packets[pkt];
    p.queued -= k.wire;
    if (p.down) {
      drop_queued(pkt, p);
      return;
    }
    // Queued ports start a packet when the previous one is done: it has been on the wire since
    // its serialisation ago.
    ports.sent(p, k.wire, now_ps - p.serialisation(k.wire), now_ps);
    ++ports.stats_of(p).packets;
    if (pfc && p.is_switch && k.hop > 0) {
      release_ingress(routes.port_at(k.path + k.hop - 1), k.wire);
    }
    scheduler.forward(pkt, now_ps + p.prop_ps);
    scheduler.kick(port_index, now_ps);
  }

  // PFC: the switch no longer holds `bytes` that came from port `up`; resume it at xon.
  void release_ingress(std::int32_t up, std::int64_t bytes) {
    if (pfc_ingress.release(ports[up], bytes)) {
      const Port& u = ports[up];
      events.push(now_ps + u.prop_ps, EventKind::PfcResume, static_cast<std::uint32_t>(up));
    }
  }

  void on_deliver(std::int32_t pkt) {
    Packet& k = packets[pkt];
    const FlowSlot f = k.flow;
    if (!flows[f].live || (k.flags & Packet::kLost)) {
      free_packet(pkt);
      return;
    }
    ++stats.packets_delivered;
    packet::Ack ack;
    bool complete = false;
    const bool answer = transport->on_data(f, k.seq, (k.flags & Packet::kCe) != 0, ack, complete);
    if (complete) finish(f);
    if (!answer || !flows[f].live) {
      free_packet(pkt);
      return;
    }
    ++stats.acks;
    k.seq = ack.seq;
    k.cumulative = ack.cumulative;
    k.flags =
        static_cast<std::uint8_t>((ack.ecn_echo ? Packet::kEcnEcho : 0) |
                                  (ack.nack ? Packet::kNack : 0) | (ack.cnp ? Packet::kCnp : 0));
    events.push(now_ps + routes[k.route].ack_delay_ps, EventKind::Ack,
                static_cast<std::uint32_t>(pkt));
  }

  void on_ack(std::int32_t pkt) {
    const Packet k = packets[pkt];
    if (flows[k.flow].live) {
      packet::Ack ack;
      ack.seq = k.seq;
      ack.cumulative = k.cumulative;
      ack.ecn_echo = (k.flags & Packet::kEcnEcho) != 0;
      ack.nack = (k.flags & Packet::kNack) != 0;
      ack.cnp = (k.flags & Packet::kCnp) != 0;
      transport->on_ack(k.flow, ack);
    }
    free_packet(pkt);
  }

  void on_timer(FlowSlot f, std::int64_t t) {
    Flow& fl = flows[f];
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
    flows.unref(f);
  }

  // The flow's data has all arrived: its callback runs after the extra latency hops.
  void finish(FlowSlot f) {
    Flow& fl = flows[f];
    fl.live = false;
    fl.timer_deadline = kNever;
    transport->close(f);
    const RouteRec& r = routes[fl.route];
    const std::int64_t extra = r.latency_ps * std::max(0, fl.latency_hops - 1);
    events.push(now_ps + extra, EventKind::Complete, static_cast<std::uint32_t>(f));
  }

  void on_complete(FlowSlot f) {
    Flow& fl = flows[f];
    Backend::DoneCallback done = std::move(fl.on_done);
    const TransferId id = fl.id;
    ++totals_.delivered;
    totals_.bytes_delivered += fl.size;
    --active;
    if (fl.route >= 0) {
      routes.release(fl.route);
      fl.route = -1;
    }
    sprayer.clear(fl);
    flows.unref(f);
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
  const FlowSlot f = s.flows.allocate();
  const TransferId id = s.next_id++;
  Flow& fl = s.flows[f];
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
  s.rerouter.set_route(fl, route);
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
  for (std::int32_t p : s.routes.ports_of(r)) {
    slowest_ps_per_byte = std::max(slowest_ps_per_byte, s.ports[p].ps_per_byte);
  }
  const Rate line_rate =
      Rate::bits_per_second(slowest_ps_per_byte > 0 ? 8e12 / slowest_ps_per_byte : 0.0);
  s.transport->open(f, fl.packets, rtt, line_rate);
  if (s.rerouter.crosses_down(fl)) {
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
    Port& p = s.ports[s.ports.port_of(c)];
    p.set_rate(rate.bps());
    if (!is_up) s.lose_held(p);
  }
  const bool was_up = s.router.link_up(link);
  if (was_up != is_up) s.router.set_link_up(link, is_up);
  if (!is_up) {
    s.rerouter.link_down();
    return;
  }
  s.rerouter.link_up(s.now_ps);
  for (ChannelId c : {2 * link, 2 * link + 1})
    s.scheduler.kick(s.ports.port_of(c), s.now_ps);
}

void PacketNetwork::reroute_down() {
  State& s = *s_;
  s.sync();
  s.rerouter.reroute_down(s.now_ps);
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
  return s_->ports.channel_stats();
}

void PacketNetwork::record_timeline(const TimelineOptions& options) {
  State& s = *s_;
  s.sync();
  s.timeline = std::make_unique<LinkTimeline>(s.links, options);
  s.ports.count_into(s.timeline.get());
}

std::optional<LinkTimeline> PacketNetwork::take_timeline() {
  State& s = *s_;
  if (!s.timeline) return std::nullopt;
  s.ports.count_into(nullptr);
  s.timeline->close();
  std::optional<LinkTimeline> out(std::move(*s.timeline));
  s.timeline.reset();
  return out;
}

const std::vector<PortStats>& PacketNetwork::port_stats() const {
  // The occupancy integrals up to now.
  State& s = *s_;
  for (Port& p : s.ports) {
    if (p.channel < 0) continue;
    s.ports.drain(p, s.now_ps);
    s.ports.account(p, s.now_ps);
  }
  return s.ports.port_stats();
}

PacketStats PacketNetwork::packet_stats() const {
  PacketStats st = s_->stats;
  st.max_packets_in_flight = s_->packets.max_in_flight();
  st.retransmissions = s_->transport->retransmissions();
  st.timeouts = s_->transport->timeouts();
  return st;
}

PacketReport PacketNetwork::packet_report() const {
  return PacketReport{port_stats(), packet_stats()};
}

const PacketBackendOptions& PacketNetwork::options() const {
  return s_->options;
}

std::vector<StalledTransfer> PacketNetwork::stalled_transfers(std::size_t limit) const {
  return s_->rerouter.stalled(limit);
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
    s.ports.add(c, s.routes, s.now_ps);
  s.router.set_link_up(id, s.links.link(id).rate.bps() > 0);
  return id;
}

void PacketNetwork::disconnect(LinkId circuit) {
  State& s = *s_;
  if (!s.links.connected(circuit)) {
    throw Error("", "circuit", fmt::format("link {} is not a connected circuit", circuit));
  }
  for (ChannelId c : {2 * circuit, 2 * circuit + 1})
    s.ports.retire(c);
  s.rerouter.pause_crossing();
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
  s_->rerouter.resume(servers, s_->now_ps);
}

void PacketNetwork::reroute(std::span<const NodeId> nics) {
  s_->rerouter.reroute(servers_of_nics(s_->topo, nics), s_->now_ps);
}

std::size_t PacketNetwork::paused_transfers() const {
  return s_->rerouter.paused();
}

}  // namespace mfabric::net
