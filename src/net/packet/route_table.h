// The routes of a packet network's flows (packet_network.cpp): immutable records shared by a flow
// and its packets in flight (a flow that moves to a new route leaves its packets on the old
// one). Each route's ports are a run of `hops` entries in one flat array, which packets read
// their next port from without touching the route; records and runs are pooled (a freed run is
// reused by a route of the same length), so that steady traffic allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
  // The route's record and its ports go back to the pools (its last reference went).
  void free(std::int32_t r) {
    const RouteRec& rec = records_[static_cast<std::size_t>(r)];
    free_paths_[static_cast<std::size_t>(rec.hops)].push_back(rec.path);
    free_routes_.push_back(r);
  }

  RouteRec& operator[](std::int32_t r) { return records_[static_cast<std::size_t>(r)]; }
  const RouteRec& operator[](std::int32_t r) const { return records_[static_cast<std::size_t>(r)]; }
  std::span<const std::int32_t> ports_of(const RouteRec& r) const {
    return {ports_.data() + r.path, static_cast<std::size_t>(r.hops)};
  }
  void set_port(const RouteRec& r, std::size_t hop, std::int32_t port) {
    ports_[static_cast<std::size_t>(r.path) + hop] = port;
  }
  // The port at position `at` of the flat array (a route's path + its hop).
  std::int32_t port_at(std::int32_t at) const { return ports_[static_cast<std::size_t>(at)]; }

 private:
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

  std::vector<RouteRec> records_;
  std::vector<std::int32_t> free_routes_;
  std::vector<std::int32_t> ports_;
  std::vector<std::vector<std::int32_t>> free_paths_;  // by length
};

}  // namespace mfabric::net::packet
