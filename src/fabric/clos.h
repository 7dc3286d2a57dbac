// Internal: the generic folded-Clos (leaf / spine / core) builder that the fat-tree, rail and
// mFabric builders share. Not part of the public fabric API.
//
// The caller groups the hosts (NIC node ids) into leaves of at most clos_hosts_per_leaf(k, o)
// hosts; build_clos() adds the switches and cables above them:
//  - 1 leaf:        1 tier, no uplinks.
//  - up to k leaves: 2 tiers; leaf l's uplink j goes to spine j.
//  - more:          3 tiers; pods of k/2 consecutive leaves, leaf uplink j -> aggregation switch j
//                   of its pod; aggregation j with m downlinks has m uplinks to cores (j, 0..m-1),
//                   shared by all pods. At most k pods fit (a core has k ports).
// A leaf with h hosts gets ceil(h / o) uplinks and everything above the leaf is non-blocking.
// Only used ports are created, so partial leaves and pods have fewer links.
#pragma once

#include <vector>

#include "fabric/topology.h"

namespace mfabric::fabric::detail {

// Throws mfabric::Error with field "radix" unless k is even and >= 4, and with field
// "oversubscription" unless o >= 1.
void validate_clos_params(int radix, double oversubscription);

// Hosts one leaf serves: floor(k * o / (o + 1)), so that its ceil(hosts / o) uplinks always fit
// in the remaining ports. 32 at k = 64, o = 1; 48 at o = 3.
int clos_hosts_per_leaf(int radix, double oversubscription);

// Uplinks of a leaf with `hosts` hosts: ceil(hosts / o).
int clos_uplinks(int hosts, double oversubscription);

// A network cable at the cluster's link latency and at `rate`, or the cluster's link rate when
// `rate` is zero.
LinkId add_cable(Topology& t, NodeId a, NodeId b, Rate rate = Rate{});

struct ClosOptions {
  int radix = 64;
  double oversubscription = 1.0;
  // Group of every switch (the rail for rail-only), or -1: then leaves and aggregation/spine
  // switches get their pod number and cores -1, because cores join pods.
  int group = -1;
  // If not empty, the group of each leaf (overrides the above for leaves; rail-optimized uses it
  // to label each leaf with its rail).
  std::vector<int> leaf_groups = {};
  // Rate of every cable of this Clos (hosts and switches); zero: the cluster's link rate.
  Rate rate = Rate{};
};

// Adds the switches (NodeKind::Switch with tier, radix and group; index = index among the
// topology's switches of that tier, so names stay unique across several Clos networks in one
// topology) and the cables for `leaves`. Returns the number of tiers (0 when there are no hosts).
// Throws mfabric::Error with field "radix" when the hosts need more than 3 tiers.
int build_clos(Topology& t, const std::vector<std::vector<NodeId>>& leaves,
               const ClosOptions& options);

// `hosts` in leaves of `per_leaf` consecutive hosts (the last one may hold fewer).
std::vector<std::vector<NodeId>> chunk_into_leaves(const std::vector<NodeId>& hosts, int per_leaf);

// The first `eps_nics` NICs of every server, server-major, as the hosts of one Clos of radix k
// and oversubscription o (their role Eps); its NICs and cables at `rate` (zero: the cluster's
// link rate). The fat-tree, mFabric's EPS and NVL72's scale-out network. Returns the tiers.
int build_eps_fat_tree(Topology& t, int eps_nics, int radix, double oversubscription,
                       Rate rate = Rate{});

}  // namespace mfabric::fabric::detail
