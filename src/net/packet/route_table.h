// The routes of a packet network's flows (packet_network.cpp): immutable records shared by a flow
// and its packets in flight (a flow that moves to a new route leaves its packets on the old
// one). Each route's ports are a run of `hops` entries in one flat array, which packets read
// their next port from without touching the route; records and runs are pooled (a freed run is
// reused by a route of the same length), so that steady traffic allocates nothing. A route is
// made from the router's (add: its channels' ports, timed for the ports' rates now) and freed at
// its last reference (release); the table counts the live routes crossing each port, which a
// retired circuit port waits for before it is reused (port_table.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "net/packet/port_table.h"
#include "net/router.h"

namespace mfabric::net::packet {

struct RouteRec {
  std::int32_t path = 0;  // its ports: port_at(path) .. port_at(path + hops - 1)
  std::int32_t hops = 0;
  std::int64_t latency_ps = 0;    // the links' latencies
  std::int64_t ack_delay_ps = 0;  // an ACK's way back: latencies and serialisation
  std::int64_t data_ps = 0;       // an MTU packet's serialisation over all hops
  RouteCost cost;
  std::int32_t refs = 0;
};

class RouteTable {
 public:
  // Routes are timed for data packets of `data_wire` bytes (an MTU and its header) and answers
  // of `ack_wire` bytes.
  RouteTable(std::int64_t data_wire, std::int64_t ack_wire)
      : data_wire_(data_wire), ack_wire_(ack_wire) {}

  // A new route (refs 0) over the ports of the router's route `r`: the links' latency, an MTU
  // packet's serialisation over all hops and an answer's way back, at the ports' rates now.
  std::int32_t add(const Route& r, const PortTable& ports) {
    const std::int32_t index = allocate(static_cast<std::int32_t>(r.channels.size()));
    RouteRec& rec = records_[static_cast<std::size_t>(index)];
    rec.latency_ps = r.latency.ps();
    rec.cost = r.cost;
    for (std::size_t i = 0; i < r.channels.size(); ++i) {
      const ChannelId c = r.channels[i];
      const std::int32_t p = ports.port_of(c);
      set_port(rec, i, p);
      const Port& fwd = ports[p];
      rec.data_ps += fwd.down ? 0 : fwd.serialisation(data_wire_);
      const Port& rev = ports[ports.port_of(c ^ 1)];
      rec.ack_delay_ps += rev.prop_ps + (rev.down ? 0 : rev.serialisation(ack_wire_));
    }
    return index;
  }
  // One reference to route r less; at the last one its record and its run of ports go back to
  // the pools.
  void release(std::int32_t r) {
    RouteRec& rec = records_[static_cast<std::size_t>(r)];
    if (--rec.refs > 0) return;
    for (std::int32_t p : ports_of(rec))
      --crossing_[static_cast<std::size_t>(p)];
    free_paths_[static_cast<std::size_t>(rec.hops)].push_back(rec.path);
    free_routes_.push_back(r);
  }

  RouteRec& operator[](std::int32_t r) { return records_[static_cast<std::size_t>(r)]; }
  const RouteRec& operator[](std::int32_t r) const { return records_[static_cast<std::size_t>(r)]; }
  std::span<const std::int32_t> ports_of(const RouteRec& r) const {
    return {ports_.data() + r.path, static_cast<std::size_t>(r.hops)};
  }
  // The port at position `at` of the flat array (a route's path + its hop).
  std::int32_t port_at(std::int32_t at) const { return ports_[static_cast<std::size_t>(at)]; }
  // The port a packet of route r leaves from first.
  std::int32_t first_port(std::int32_t r) const {
    return port_at(records_[static_cast<std::size_t>(r)].path);
  }
  // Live routes that cross port p.
  std::int32_t routes_crossing(std::int32_t p) const {
    return static_cast<std::size_t>(p) < crossing_.size() ? crossing_[static_cast<std::size_t>(p)]
                                                          : 0;
  }

 private:
  // A route of `hops` ports, its record reset (refs 0, timings 0); the caller fills its ports
  // (set_port) and timings.
  std::int32_t allocate(std::int32_t hops) {
    std::int32_t index;
    if (!free_routes_.empty()) {
      index = free_routes_.back();
      free_routes_.pop_back();
    } else {
      index = static_cast<std::int32_t>(records_.size());
      records_.emplace_back();
    }
    RouteRec& rec = records_[static_cast<std::size_t>(index)];
    rec = RouteRec{};
    rec.hops = hops;
    rec.path = allocate_path(hops);
    return index;
  }
  void set_port(const RouteRec& r, std::size_t hop, std::int32_t port) {
    ports_[static_cast<std::size_t>(r.path) + hop] = port;
    if (crossing_.size() <= static_cast<std::size_t>(port)) {
      crossing_.resize(static_cast<std::size_t>(port) + 1, 0);
    }
    ++crossing_[static_cast<std::size_t>(port)];
  }
  std::int32_t allocate_path(std::int32_t hops) {
    if (free_paths_.size() <= static_cast<std::size_t>(hops)) free_paths_.resize(hops + 1u);
    std::vector<std::int32_t>& free = free_paths_[static_cast<std::size_t>(hops)];
    if (!free.empty()) {
      const std::int32_t at = free.back();
      free.pop_back();
      return at;
    }
    const auto at = static_cast<std::int32_t>(ports_.size());
    ports_.resize(ports_.size() + static_cast<std::size_t>(hops));
    return at;
  }

  std::int64_t data_wire_;
  std::int64_t ack_wire_;
  std::vector<RouteRec> records_;
  std::vector<std::int32_t> free_routes_;
  std::vector<std::int32_t> ports_;
  std::vector<std::vector<std::int32_t>> free_paths_;  // by length
  std::vector<std::int32_t> crossing_;                 // by port: live routes that cross it
};

}  // namespace mfabric::net::packet
