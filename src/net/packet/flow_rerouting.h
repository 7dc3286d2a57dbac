// Where the packet network's flows go when the network changes (docs/packet.md, "Circuits and
// failures"). A flow whose route crosses a link that fails moves to a route of equal cost over
// links still up, or holds (Hold::Down) until the link comes back or reroute_down() finds it a
// route of any cost. A circuit torn down holds the flows crossing it (Hold::Paused) until
// resume() routes them again, and reroute() moves flows to cheaper routes (new circuits). A held
// flow sends nothing; released, it gets the timer that came due meanwhile and is woken. A flow's
// packets in flight keep the route they took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabric/topology.h"
#include "net/backend_stats.h"
#include "net/packet/event_queue.h"
#include "net/packet/flow_pool.h"
#include "net/packet/packet_spraying.h"
#include "net/packet/port_scheduler.h"
#include "net/packet/port_table.h"
#include "net/packet/route_table.h"
#include "net/packet/transport.h"
#include "net/router.h"

namespace mfabric::net::packet {

class FlowRerouter {
 public:
  // The tables must outlive the rerouter.
  FlowRerouter(const fabric::Topology& topology, Router& router, FlowPool& flows,
               RouteTable& routes, const PortTable& ports, PacketSprayer& sprayer,
               PortScheduler& scheduler, EventQueue& events, Transport& transport)
      : topo_(topology),
        router_(router),
        flows_(flows),
        routes_(routes),
        ports_(ports),
        sprayer_(sprayer),
        scheduler_(scheduler),
        events_(events),
        transport_(transport) {}

  // The flow takes the router's route `r` (and, spraying, other routes with it); its packets in
  // flight keep theirs.
  void set_route(Flow& fl, const Route& r);
  // Whether a route of the flow crosses a port that is down or retired.
  bool crosses_down(const Flow& fl) const;

  // A link went down (its ports are down): the flows crossing it move to a route of equal cost
  // over links up if there is one, else hold.
  void link_down();
  // A link came back: the flows held for a link down whose routes are up again send again.
  void link_up(std::int64_t now);
  // The flows held for a link down take a route of any cost over links up, if there is one.
  void reroute_down(std::int64_t now);

  // A circuit was torn down (its ports retired): the flows crossing it hold, paused.
  void pause_crossing();
  // The paused flows with either end on a server flagged in `servers` take a route again.
  void resume(const std::vector<bool>& servers, std::int64_t now);
  // The flows from a server flagged in `servers` move to a cheaper route if there is one.
  void reroute(const std::vector<bool>& servers, std::int64_t now);
  // Flows paused now.
  std::size_t paused() const;
  // Up to `limit` held flows, in slot order, and why they hold.
  std::vector<StalledTransfer> stalled(std::size_t limit) const;

 private:
  bool route_down(std::int32_t route) const;
  // Flows (live, not held) with a route that crosses a down or retired port, in slot order.
  std::vector<FlowSlot> flows_crossing_down() const;
  // The held flow may send again.
  void unhold(FlowSlot f, std::int64_t now);

  const fabric::Topology& topo_;
  Router& router_;
  FlowPool& flows_;
  RouteTable& routes_;
  const PortTable& ports_;
  PacketSprayer& sprayer_;
  PortScheduler& scheduler_;
  EventQueue& events_;
  Transport& transport_;
  Route scratch_;
  std::vector<FlowSlot> paused_;  // held by a torn-down circuit, in the order they were held
};

}  // namespace mfabric::net::packet
