// The packet network's parts on their own, without its event handlers: the packet and flow pools
// (packet_pool.h, flow_pool.h), the ports by channel (port_table.h), the routes over them
// (route_table.h), the ports' scheduling (port_scheduler.h), packet spraying (packet_spraying.h)
// and the flows' rerouting (flow_rerouting.h), on small fat-trees with a transport that sends
// a fixed number of packets. Expected values are worked out next to each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "fabric/builders.h"
#include "net/link_table.h"
#include "net/packet/event_queue.h"
#include "net/packet/flow_pool.h"
#include "net/packet/flow_rerouting.h"
#include "net/packet/packet_options.h"
#include "net/packet/packet_pool.h"
#include "net/packet/packet_spraying.h"
#include "net/packet/port_scheduler.h"
#include "net/packet/port_table.h"
#include "net/packet/route_table.h"
#include "net/router.h"
#include "net_test_util.h"

namespace mfabric::net::packet {
namespace parts_test {

using fabric::LinkId;
using fabric::NodeId;
using fabric::Topology;
using net::testing::cable_of;
using net::testing::cluster;

// Sends each flow's packets in order, once; records which flow sent each packet.
class CountingTransport final : public Transport {
 public:
  const char* name() const override { return "counting"; }
  void open(FlowSlot f, std::int32_t packets, Time, Rate) override {
    cover_slot(f, left_, next_);
    left_[static_cast<std::size_t>(f)] = packets;
    next_[static_cast<std::size_t>(f)] = 0;
  }
  void close(FlowSlot f) override { left_[static_cast<std::size_t>(f)] = 0; }
  bool can_send(FlowSlot f) const override { return left_[static_cast<std::size_t>(f)] > 0; }
  std::int32_t next_packet(FlowSlot f) override {
    if (!can_send(f)) return -1;
    --left_[static_cast<std::size_t>(f)];
    sent.push_back(f);
    return next_[static_cast<std::size_t>(f)]++;
  }
  bool on_data(FlowSlot, std::int32_t, bool, Ack&, bool& complete) override {
    complete = false;
    return false;
  }
  void on_ack(FlowSlot, const Ack&) override {}
  void on_timer(FlowSlot) override {}
  std::int64_t retransmissions() const override { return 0; }
  std::int64_t timeouts() const override { return 0; }

  std::vector<FlowSlot> sent;

 private:
  std::vector<std::int32_t> left_;
  std::vector<std::int32_t> next_;
};

// The parts wired as PacketNetwork wires them (packet_network.cpp), at time 0.
struct Parts {
  explicit Parts(const Topology& t, PacketBackendOptions o = {})
      : topo(t), links(t), router(links), options(std::move(o)) {
    ports.cover(2 * links.size(), routes, 0);
  }

  // A live flow of `n` packets from src to dst over the router's route for `hash`, woken.
  FlowSlot start(NodeId src, NodeId dst, std::int32_t n, std::uint64_t hash = 0) {
    const FlowSlot f = flows.allocate();
    Flow& fl = flows[f];
    fl.src = src;
    fl.dst = dst;
    fl.hash = hash;
    fl.packets = n;
    fl.last_payload = static_cast<std::int32_t>(options.mtu.count());
    fl.refs = 1;
    router.route(src, dst, hash, scratch);
    rerouter.set_route(fl, scratch);
    transport.open(f, n, Time::zero(), Rate::gbps(100));
    fl.live = true;
    scheduler.wake(f, 0);
    return f;
  }
  // Takes a link down (or up) as PacketNetwork::set_link_rate does, without losing packets.
  void set_link(LinkId l, bool up) {
    for (ChannelId c : {2 * l, 2 * l + 1})
      ports[ports.port_of(c)].set_rate(up ? topo.link(l).rate.bps() : 0);
    router.set_link_up(l, up);
  }
  // The links of the flow's route.
  std::vector<LinkId> route_links(FlowSlot f) const {
    std::vector<LinkId> out;
    for (std::int32_t p : routes.ports_of(routes[flows[f].route]))
      out.push_back(link_of_channel(ports[p].channel));
    return out;
  }

  const Topology& topo;
  LinkTable links;
  Router router;
  PacketBackendOptions options;
  PortTable ports{topo, links, options};
  RouteTable routes{options.mtu.count() + options.header.count(), options.ack.count()};
  FlowPool flows;
  PacketPool packets;
  EventQueue events;
  PacketStats stats;
  CountingTransport transport;
  PortScheduler scheduler{ports, packets, flows, routes, events, transport, stats, options};
  PacketSprayer sprayer{router, routes, ports, options.spray_paths};
  FlowRerouter rerouter{topo, router, flows, routes, ports, sprayer, scheduler, events, transport};
  Route scratch;
};

// Two servers of one GPU and one NIC on one leaf, 100G, 1 us.
Topology two_hosts() {
  return fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
}
// Sixteen servers of one GPU and one NIC: a 3-tier radix-4 fat-tree, four pods of two leaves of
// two hosts, so that servers 0 and 15 are in different pods, with routes of one cost over
// either aggregation switch of the pod and either core switch above it.
Topology sixteen_hosts() {
  return fabric::build_fabric("fat-tree:radix=4", cluster(16, 1, 1));
}

TEST(PacketPool, ReleasedSlotsAreReusedAndPacketsInFlightCounted) {
  PacketPool pool;
  const std::int32_t a = pool.allocate();
  const std::int32_t b = pool.allocate();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(pool.in_flight(), 2);
  pool[a].seq = 7;
  pool.release(a);
  EXPECT_EQ(pool.in_flight(), 1);
  EXPECT_EQ(pool.allocate(), a);  // the slot comes back as it was left
  EXPECT_EQ(pool[a].seq, 7);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.in_flight(), 0);
  EXPECT_EQ(pool.max_in_flight(), 2);
}

TEST(FlowPool, ARecordLivesUntilItsLastReferenceAndItsSlotIsThenReused) {
  FlowPool pool;
  const FlowSlot f = pool.allocate();
  pool[f].refs = 2;
  pool[f].size = 1000;
  pool[f].live = true;
  pool.unref(f);
  EXPECT_EQ(pool[f].size, 1000);
  pool.unref(f);
  EXPECT_EQ(pool[f].size, 0);  // reset
  EXPECT_FALSE(pool[f].live);
  EXPECT_EQ(pool[f].route, -1);
  EXPECT_EQ(pool.allocate(), f);
  EXPECT_EQ(pool.allocate(), f + 1);
  EXPECT_EQ(pool.slots(), 2);
}

TEST(PortTable, EveryChannelHasAPortAndSwitchPortsAloneHaveABuffer) {
  const Topology t = two_hosts();
  for (const bool pfc : {false, true}) {
    PacketBackendOptions o;
    o.pfc = pfc;
    Parts parts(t, o);
    std::set<std::int32_t> seen;
    for (std::size_t l = 0; l < t.links().size(); ++l) {
      for (ChannelId c : {static_cast<ChannelId>(2 * l), static_cast<ChannelId>(2 * l + 1)}) {
        const std::int32_t p = parts.ports.port_of(c);
        ASSERT_GE(p, 0);
        EXPECT_TRUE(seen.insert(p).second);
        const Port& port = parts.ports[p];
        EXPECT_EQ(port.channel, c);
        const fabric::Link& link = t.link(static_cast<LinkId>(l));
        const bool from_switch =
            t.node(c % 2 == 0 ? link.a : link.b).kind == fabric::NodeKind::Switch;
        // Lossless switch ports pause their senders instead of dropping.
        EXPECT_EQ(port.buffer, from_switch && !pfc ? o.buffer.count() : 0);
        EXPECT_EQ(port.prop_ps, link.latency.ps());
      }
    }
  }
}

TEST(PortTable, ARetiredPortIsReusedOnlyOnceNoRouteCrossesIt) {
  const Topology t = two_hosts();
  Parts parts(t);
  parts.router.route(t.gpu(0, 0), t.gpu(1, 0), 0, parts.scratch);
  const std::int32_t r = parts.routes.add(parts.scratch, parts.ports);
  ++parts.routes[r].refs;
  const ChannelId c = parts.scratch.channels[1];
  const std::int32_t p = parts.ports.port_of(c);
  parts.ports.retire(c);
  EXPECT_EQ(parts.ports.port_of(c), -1);
  EXPECT_TRUE(parts.ports[p].retired);
  // The route still crosses p: the channel gets a new port, which retires too.
  const std::int32_t q = parts.ports.add(c, parts.routes, 0);
  EXPECT_NE(q, p);
  parts.ports.retire(c);
  parts.routes.release(r);
  EXPECT_EQ(parts.ports.add(c, parts.routes, 0), p);  // the first retired port free again
  EXPECT_FALSE(parts.ports[p].retired);
  EXPECT_EQ(parts.ports[p].channel, c);
}

TEST(RouteTable, ARouteIsTimedOverItsPortsAndCountedOnThemUntilItsLastReference) {
  const Topology t = two_hosts();
  Parts parts(t);
  parts.router.route(t.gpu(0, 0), t.gpu(1, 0), 0, parts.scratch);
  const Route& route = parts.scratch;
  const std::int32_t r = parts.routes.add(route, parts.ports);
  const RouteRec& rec = parts.routes[r];
  EXPECT_EQ(rec.refs, 0);
  EXPECT_EQ(rec.latency_ps, route.latency.ps());
  // An MTU packet (4096 + 64 bytes) at each link's rate, rounded up; the answer (64 bytes) back
  // over each link after its latency.
  std::int64_t data_ps = 0;
  std::int64_t ack_ps = 0;
  for (ChannelId c : route.channels) {
    const fabric::Link& link = t.link(link_of_channel(c));
    const double ps_per_byte = 8e12 / link.rate.bps();
    data_ps += static_cast<std::int64_t>(std::ceil(4160 * ps_per_byte));
    ack_ps += link.latency.ps() + static_cast<std::int64_t>(std::ceil(64 * ps_per_byte));
  }
  EXPECT_EQ(rec.data_ps, data_ps);
  EXPECT_EQ(rec.ack_delay_ps, ack_ps);
  const std::span<const std::int32_t> ports = parts.routes.ports_of(rec);
  ASSERT_EQ(ports.size(), route.channels.size());
  for (std::size_t i = 0; i < ports.size(); ++i) {
    EXPECT_EQ(ports[i], parts.ports.port_of(route.channels[i]));
    EXPECT_EQ(parts.routes.routes_crossing(ports[i]), 1);
  }
  EXPECT_EQ(parts.routes.first_port(r), ports[0]);
  parts.routes[r].refs = 2;
  parts.routes.release(r);
  EXPECT_EQ(parts.routes.routes_crossing(ports[0]), 1);
  parts.routes.release(r);
  EXPECT_EQ(parts.routes.routes_crossing(ports[0]), 0);
  // The record and its run of ports are reused by the next route of that length.
  const std::int32_t path = rec.path;
  const std::int32_t again = parts.routes.add(route, parts.ports);
  EXPECT_EQ(again, r);
  EXPECT_EQ(parts.routes[again].path, path);
}

TEST(PortScheduler, FlowsOfOnePortSendInTurnBackToBack) {
  const Topology t = two_hosts();
  Parts parts(t);
  const FlowSlot a = parts.start(t.gpu(0, 0), t.gpu(1, 0), 3, 1);
  // Flow a's first packet left at once, and a is back in the round robin; the port is busy
  // until that packet is gone.
  EXPECT_EQ(parts.transport.sent, std::vector<FlowSlot>{a});
  const FlowSlot b = parts.start(t.gpu(0, 0), t.gpu(1, 0), 2, 2);
  EXPECT_EQ(parts.transport.sent, std::vector<FlowSlot>{a});
  const std::int32_t first = parts.routes.first_port(parts.flows[a].route);
  ASSERT_EQ(parts.routes.first_port(parts.flows[b].route), first);
  // Each PortDone frees the port for the next ready flow, in turn: a, b, a, b.
  std::vector<std::int64_t> done;
  while (!parts.events.empty()) {
    const Event e = parts.events.pop();
    if (e.kind != EventKind::PortDone) continue;
    done.push_back(e.t);
    parts.ports[static_cast<std::int32_t>(e.index)].busy = false;
    parts.scheduler.kick(static_cast<std::int32_t>(e.index), e.t);
  }
  EXPECT_EQ(parts.transport.sent, (std::vector<FlowSlot>{a, a, b, a, b}));
  const std::int64_t ser = parts.ports[first].serialisation(4160);
  EXPECT_EQ(done, (std::vector<std::int64_t>{ser, 2 * ser, 3 * ser, 4 * ser, 5 * ser}));
  EXPECT_EQ(parts.stats.packets_sent, 5);
  EXPECT_EQ(parts.packets.in_flight(), 5);
  EXPECT_EQ(parts.ports.stats_of(parts.ports[first]).packets, 5);
}

TEST(PortScheduler, AFailedLinkLosesTheScheduledPacketsAndCountsThemAsDrops) {
  const Topology t = two_hosts();
  Parts parts(t);
  const FlowSlot a = parts.start(t.gpu(0, 0), t.gpu(1, 0), 1);
  const Flow& fl = parts.flows[a];
  // The packet is on the first port's schedule until its last bit leaves.
  Port& p = parts.ports[parts.routes.first_port(fl.route)];
  ASSERT_EQ(p.scheduled.size(), 1u);
  const std::int32_t pkt = p.scheduled.front().packet;
  parts.scheduler.lose_scheduled(p, 1);
  EXPECT_TRUE(p.scheduled.empty());
  EXPECT_EQ(p.queued, 0);
  EXPECT_EQ(p.busy_until, 1);
  EXPECT_NE(parts.packets[pkt].flags & Packet::kLost, 0);
  EXPECT_EQ(parts.stats.drops, 1);
  EXPECT_EQ(parts.ports.stats_of(p).drops, 1);
}

TEST(PacketSprayer, AFlowSpraysOverDistinctRoutesOfItsCostAndFirstPortInTurn) {
  const Topology t = sixteen_hosts();
  PacketBackendOptions o;
  o.spray_paths = 4;
  Parts parts(t, o);
  const FlowSlot f = parts.start(t.gpu(0, 0), t.gpu(15, 0), 1);
  Flow& fl = parts.flows[f];
  // Two aggregation switches a pod, two core switches each: four routes of one cost.
  ASSERT_EQ(fl.sprayed.size(), 3u);
  std::set<std::vector<std::int32_t>> distinct;
  const auto ports_of = [&](std::int32_t r) {
    const std::span<const std::int32_t> s = parts.routes.ports_of(parts.routes[r]);
    return std::vector<std::int32_t>(s.begin(), s.end());
  };
  distinct.insert(ports_of(fl.route));
  for (std::int32_t r : fl.sprayed) {
    EXPECT_TRUE(parts.routes[r].cost == parts.routes[fl.route].cost);
    EXPECT_EQ(parts.routes.first_port(r), parts.routes.first_port(fl.route));
    EXPECT_EQ(parts.routes[r].refs, 1);
    distinct.insert(ports_of(r));
  }
  EXPECT_EQ(distinct.size(), 4u);
  // The first packet took the route; the next ones take the others, then the route again.
  std::vector<std::int32_t> turns;
  for (int i = 0; i < 5; ++i)
    turns.push_back(next_packet_route(fl));
  EXPECT_EQ(turns, (std::vector<std::int32_t>{fl.sprayed[0], fl.sprayed[1], fl.sprayed[2], fl.route,
                                              fl.sprayed[0]}));
  const std::int32_t other = fl.sprayed[0];
  const std::int32_t core_port = ports_of(other)[3];
  parts.sprayer.clear(fl);
  EXPECT_TRUE(fl.sprayed.empty());
  EXPECT_EQ(parts.routes.routes_crossing(core_port), 0);
}

TEST(PacketSprayer, OneSprayPathIsNoSpraying) {
  const Topology t = sixteen_hosts();
  Parts parts(t);
  const FlowSlot f = parts.start(t.gpu(0, 0), t.gpu(15, 0), 1);
  EXPECT_TRUE(parts.flows[f].sprayed.empty());
  EXPECT_EQ(next_packet_route(parts.flows[f]), parts.flows[f].route);
}

TEST(FlowRerouter, AFlowMovesOffAFailedLinkOrHoldsUntilItComesBack) {
  const Topology t = sixteen_hosts();
  Parts parts(t);
  const FlowSlot f = parts.start(t.gpu(0, 0), t.gpu(15, 0), 4);
  const Flow& fl = parts.flows[f];
  // A switch link of its route fails: the flow moves to another route of the same cost.
  const std::vector<LinkId> before = parts.route_links(f);
  const LinkId uplink = before[2];  // leaf - aggregation
  ASSERT_EQ(t.node(t.link(uplink).a).kind, fabric::NodeKind::Switch);
  const RouteCost cost = parts.routes[fl.route].cost;
  parts.set_link(uplink, false);
  parts.rerouter.link_down();
  EXPECT_EQ(fl.hold, Hold::None);
  EXPECT_TRUE(parts.routes[fl.route].cost == cost);
  const std::vector<LinkId> after = parts.route_links(f);
  EXPECT_EQ(std::count(after.begin(), after.end(), uplink), 0);
  EXPECT_TRUE(parts.rerouter.stalled(10).empty());
  // Its NIC's cable fails: no route is left, the flow holds and says why.
  const LinkId cable = cable_of(t, t.nic(0, 0));
  parts.set_link(cable, false);
  parts.rerouter.link_down();
  EXPECT_EQ(fl.hold, Hold::Down);
  const std::vector<StalledTransfer> stalled = parts.rerouter.stalled(10);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].why, StalledTransfer::Why::LinkDown);
  EXPECT_EQ(stalled[0].down_link, cable);
  // Back up: the flow sends again (its port is busy with its first packet: it waits its turn).
  parts.set_link(cable, true);
  parts.rerouter.link_up(0);
  EXPECT_EQ(fl.hold, Hold::None);
  EXPECT_TRUE(fl.in_ready);
  EXPECT_TRUE(parts.rerouter.stalled(10).empty());
}

TEST(FlowRerouter, RerouteDownMovesAHeldFlowOnlyToARouteUp) {
  const Topology t = sixteen_hosts();
  Parts parts(t);
  const FlowSlot f = parts.start(t.gpu(0, 0), t.gpu(15, 0), 4);
  Flow& fl = parts.flows[f];
  // Its NIC's cable fails: no route over links up, before or after reroute_down().
  const LinkId cable = cable_of(t, t.nic(0, 0));
  parts.set_link(cable, false);
  parts.rerouter.link_down();
  ASSERT_EQ(fl.hold, Hold::Down);
  parts.rerouter.reroute_down(0);
  EXPECT_EQ(fl.hold, Hold::Down);
  // A flow held when only routes of another cost were up (a hold link_down() leaves) takes a
  // route of any cost.
  parts.set_link(cable, true);
  parts.rerouter.reroute_down(0);
  EXPECT_EQ(fl.hold, Hold::None);
  EXPECT_TRUE(parts.rerouter.stalled(10).empty());
}

TEST(FlowRerouter, ATornDownCircuitPausesItsFlowsUntilTheyResume) {
  const Topology t = two_hosts();
  Parts parts(t);
  const FlowSlot f = parts.start(t.gpu(0, 0), t.gpu(1, 0), 4);
  const Flow& fl = parts.flows[f];
  // The ports of the flow's cable retire (as a circuit's do): the flow holds, paused.
  const LinkId cable = cable_of(t, t.nic(0, 0));
  for (ChannelId c : {2 * cable, 2 * cable + 1})
    parts.ports.retire(c);
  parts.rerouter.pause_crossing();
  EXPECT_EQ(fl.hold, Hold::Paused);
  EXPECT_EQ(parts.rerouter.paused(), 1u);
  ASSERT_EQ(parts.rerouter.stalled(10).size(), 1u);
  EXPECT_EQ(parts.rerouter.stalled(10)[0].why, StalledTransfer::Why::Paused);
  // New ports for the channels; flows of other servers stay paused, the server's resume.
  for (ChannelId c : {2 * cable, 2 * cable + 1})
    parts.ports.add(c, parts.routes, 0);
  std::vector<bool> servers(2, false);
  parts.rerouter.resume(servers, 0);
  EXPECT_EQ(fl.hold, Hold::Paused);
  servers[1] = true;  // the destination's
  parts.rerouter.resume(servers, 0);
  EXPECT_EQ(fl.hold, Hold::None);
  EXPECT_EQ(parts.rerouter.paused(), 0u);
  const std::vector<LinkId> links = parts.route_links(f);
  EXPECT_EQ(std::count(links.begin(), links.end(), cable), 1);
}

}  // namespace parts_test
}  // namespace mfabric::net::packet
