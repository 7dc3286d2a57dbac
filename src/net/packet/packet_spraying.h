// Packet spraying in the packet network (routing: spray; docs/network.md, "Spraying"): a flow's
// packets take its route and up to spray_paths - 1 other routes in turn, routes of the same cost
// and first port over the links up when the flow took its route, found by hashing the flow
// again (spray_hash, net/ecmp.h; the flow backend sprays over the same hashes), each kept once.
// The sprayer finds a flow's other routes; next_packet_route() takes them in turn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "net/ecmp.h"
#include "net/packet/flow_pool.h"
#include "net/packet/port_table.h"
#include "net/packet/route_table.h"
#include "net/router.h"

namespace mfabric::net::packet {

class PacketSprayer {
 public:
  // The tables must outlive the sprayer. spray_paths 1: no spraying.
  PacketSprayer(Router& router, RouteTable& routes, const PortTable& ports, int spray_paths)
      : router_(router), routes_(routes), ports_(ports), spray_paths_(spray_paths) {}

  // The flow's other routes for its route now (fl.sprayed; the routes it had are released).
  void spray(Flow& fl) {
    clear(fl);
    if (spray_paths_ <= 1) return;
    const RouteCost cost = routes_[fl.route].cost;
    const std::int32_t first = routes_.first_port(fl.route);
    const int attempts = 4 * spray_paths_;
    for (int i = 1; i < attempts && static_cast<int>(fl.sprayed.size()) + 1 < spray_paths_; ++i) {
      if (!router_.find(fl.src, fl.dst, spray_hash(fl.hash, static_cast<std::uint64_t>(i)),
                        scratch_, false) ||
          !(scratch_.cost == cost) || scratch_.channels.empty()) {
        continue;
      }
      if (ports_.port_of(scratch_.channels.front()) != first) continue;
      if (same_ports(fl.route, scratch_)) continue;
      bool seen = false;
      for (std::int32_t r : fl.sprayed)
        seen = seen || same_ports(r, scratch_);
      if (seen) continue;
      const std::int32_t r = routes_.add(scratch_, ports_);
      ++routes_[r].refs;
      fl.sprayed.push_back(r);
    }
  }
  // The flow's other routes are released (fl.sprayed empty).
  void clear(Flow& fl) {
    for (std::int32_t r : fl.sprayed)
      routes_.release(r);
    fl.sprayed.clear();
  }

 private:
  // Whether the router's route `r` crosses the same ports as route `route`.
  bool same_ports(std::int32_t route, const Route& r) const {
    const std::span<const std::int32_t> a = routes_.ports_of(routes_[route]);
    if (a.size() != r.channels.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] != ports_.port_of(r.channels[i])) return false;
    }
    return true;
  }

  Router& router_;
  RouteTable& routes_;
  const PortTable& ports_;
  int spray_paths_;
  Route scratch_;
};

// The route of the flow's next packet: its route and its other routes, in turn.
inline std::int32_t next_packet_route(Flow& fl) {
  if (fl.sprayed.empty()) return fl.route;
  const std::uint32_t turn = fl.spray_next++ % static_cast<std::uint32_t>(fl.sprayed.size() + 1);
  return turn > 0 ? fl.sprayed[turn - 1] : fl.route;
}

}  // namespace mfabric::net::packet
