// Shared helpers of the net tests: small clusters, link lookup, running a backend to idle.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "fabric/builders.h"
#include "fabric/topology.h"
#include "net/flow/flow_backend.h"
#include "net/transfer.h"

namespace mfabric::net::testing {

inline fabric::ClusterSpec cluster(int servers, int gpus, int nics, Rate link = Rate::gbps(100),
                                   Time latency = Time::microseconds(1)) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  c.numa_nodes = 1;
  c.link = link;
  c.link_latency = latency;
  return c;
}

// The link between two nodes; fails the test if there is none.
inline fabric::LinkId link_between(const fabric::Topology& t, fabric::NodeId a, fabric::NodeId b) {
  for (fabric::LinkId l : t.links_of(a)) {
    if (t.other_end(l, a) == b) return l;
  }
  ADD_FAILURE() << "no link " << t.name(a) << " - " << t.name(b);
  return -1;
}

// The network cable of a NIC (its one Cable link).
inline fabric::LinkId cable_of(const fabric::Topology& t, fabric::NodeId nic) {
  for (fabric::LinkId l : t.links_of(nic)) {
    if (t.link(l).kind == fabric::LinkKind::Cable) return l;
  }
  ADD_FAILURE() << "no cable on " << t.name(nic);
  return -1;
}

inline net::Transfer transfer(fabric::NodeId src, fabric::NodeId dst, std::int64_t bytes,
                              std::uint64_t hash = 0, int latency_hops = 1) {
  net::Transfer t;
  t.src = src;
  t.dst = dst;
  t.size = Bytes(bytes);
  t.flow_hash = hash;
  t.latency_hops = latency_hops;
  return t;
}

// Completion times by transfer id, filled by the callbacks of the transfers it starts.
struct Recorder {
  std::vector<std::optional<Time>> done;

  TransferId start(Backend& b, const net::Transfer& t) {
    const TransferId id = b.start(t, [this](TransferId i, Time at) {
      if (static_cast<std::size_t>(i) >= done.size()) done.resize(static_cast<std::size_t>(i) + 1);
      done[static_cast<std::size_t>(i)] = at;
    });
    if (static_cast<std::size_t>(id) >= done.size()) done.resize(static_cast<std::size_t>(id) + 1);
    return id;
  }
  Time at(TransferId id) const {
    const auto& d = done.at(static_cast<std::size_t>(id));
    EXPECT_TRUE(d.has_value()) << "transfer " << id << " not done";
    return d.value_or(Time::zero());
  }
};

// Processes events until none is left (stalled transfers may remain).
inline void run_to_idle(Backend& b) {
  while (const auto t = b.next_event_time()) {
    b.advance(*t);
  }
}

}  // namespace mfabric::net::testing
