// The TopoOpt topology planner (TopoOpt, NSDI 2023; docs/topoopt.md): every NIC of every server
// sits on one flat patch panel, each server has degree d (its NIC count), and the topology is
// planned once from the whole job's demand before training and never changes.
//
//   1. degree split: the d NICs of a server are split between ring (all-reduce) traffic and the
//      rest in proportion to their bytes;
//   2. TotientPerms: every ring group gets ring permutations over its servers, ring k joining
//      member i to member i + p_k (mod m) for strides p_k coprime with m, picked for a small
//      diameter;
//   3. the NICs left go to the heaviest remaining pair demand by repeated maximum-weight
//      matching, one round per unit of degree, a matched pair's weight falling to
//      demand / (links + 1);
//   4. the graph is made connected where the degree allows, and NICs still free are paired.
//
// Deterministic: the same input gives the same links in the same order.
#pragma once

#include <cstdint>
#include <vector>

#include "control/job_demand.h"
#include "fabric/server_paths.h"

namespace mfabric::control {

struct TopoOptOptions {
  // The matching considers, for every server, only its heaviest pairs (by pair demand; the
  // union over both ends): a sparse candidate graph keeps the matching fast at thousands of
  // servers. 0 = every pair with demand.
  int matching_candidates_per_server = 64;
  // Improve TotientPerms' geometric strides by local search on the ring group's diameter
  // (docs/topoopt.md); false = the geometric pick only.
  bool stride_search = true;
};

enum class LinkPurpose : std::uint8_t {
  Ring,          // a ring permutation of a ring group (TotientPerms)
  Matching,      // a round of the maximum-weight matching over pair demand
  Connectivity,  // added (or rewired) to join components
  Leftover,      // NICs still free at the end, paired
};
const char* to_string(LinkPurpose p);

// One patch-panel cable: NIC nic_a of server_a <-> NIC nic_b of server_b (full duplex).
struct PanelLink {
  int server_a = -1;
  int nic_a = -1;
  int server_b = -1;
  int nic_b = -1;
  LinkPurpose purpose = LinkPurpose::Leftover;
  int ring = -1;   // Ring: index into TopoOptTopology::rings
  int stride = 0;  // Ring: the stride p (server_b is p members after server_a in the group)
};

// The rings one ring group received.
struct RingPlan {
  int demand = -1;           // index into JobDemand::rings
  std::vector<int> servers;  // the group's servers, ascending (member i = servers[i])
  std::vector<int> strides;  // one per ring, in placement order; repeats mean parallel rings
  int diameter = -1;         // hops across the group using only its own rings (-1: no rings)
};

struct TopoOptTopology {
  int servers = 0;
  int degree = 0;
  int ring_degree = 0;      // NICs per server the split gave to rings
  int matching_rounds = 0;  // matching rounds that placed at least one link
  std::vector<PanelLink> links;
  std::vector<RingPlan> rings;  // one per ring group that received at least one ring
  bool connected = false;       // every server reaches every other over `links`
  int unused_nics = 0;          // NICs left without a cable (degree 1, or nothing to pair with)

  // Link indices of the links at a server, in link order.
  std::vector<int> links_of(int server) const;
};

// Plans the topology for `servers` servers with `degree` NICs each. demand.servers may be
// smaller than `servers` (servers without demand only get connectivity and leftover links).
// mfabric::Error for servers < 1, degree < 1, servers x degree above 2^26 NICs, or a demand that
// does not fit (sizes, servers out of range, unsorted or repeated ring servers, negative bytes).
TopoOptTopology plan_topoopt(const JobDemand& demand, int servers, int degree,
                             const TopoOptOptions& options = {});

// The k shortest forwarding paths over a plan's panel links (link index = index into
// topology.links).
fabric::ForwardingPaths forwarding_paths(const TopoOptTopology& topology,
                                         const fabric::ForwardingOptions& options = {});

}  // namespace mfabric::control
