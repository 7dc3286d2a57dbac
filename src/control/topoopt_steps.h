// The steps of plan_topoopt (topoopt.h), each over a PanelDraft: the links placed so far and the
// NICs each server has left. Internal to control/; exposed for the tests.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "control/job_demand.h"
#include "control/topoopt.h"

namespace mfabric::control::detail {

struct DraftLink {
  int a = -1;
  int b = -1;
  LinkPurpose purpose = LinkPurpose::Leftover;
  int ring = -1;
  int stride = 0;
};

// Links between servers before NICs are numbered: NIC numbers are given at the end, in link
// order, so that links removed while joining components leave no holes.
class PanelDraft {
 public:
  PanelDraft(int servers, int degree);

  int servers() const { return static_cast<int>(free_.size()); }
  int degree() const { return degree_; }
  int free(int server) const { return free_[static_cast<std::size_t>(server)]; }
  const std::vector<DraftLink>& links() const { return links_; }
  int links_between(int a, int b) const;

  // Adds a link a-b (a != b, both with a free NIC).
  void add(const DraftLink& link);
  // Removes links()[index], freeing its NICs; later links move down by one.
  void remove(std::size_t index);

 private:
  static std::uint64_t key(int a, int b);

  int degree_;
  std::vector<int> free_;
  std::vector<DraftLink> links_;
  std::unordered_map<std::uint64_t, int> between_;
};

// --- TotientPerms (topoopt_rings.cpp) ---

// Strides p in [1, m/2] with gcd(p, m) == 1: each gives a distinct ring over m members (p and
// m - p give the same full-duplex ring). {1} for m == 2.
std::vector<int> coprime_strides(int m);

struct CirculantScore {
  int diameter = 0;
  std::int64_t total_distance = 0;  // sum of hop counts from member 0 to every member
  auto operator<=>(const CirculantScore&) const = default;
};
// Diameter and distance sum of the circulant graph on Z_m with steps +-p for p in strides
// (vertex-transitive, so one BFS from 0 gives both). Diameter -1 if not connected.
CirculantScore circulant_score(int m, const std::vector<int>& strides);

// `rings` strides for a ring group of m members: stride 1 first, the others started on a
// geometric sequence (m^(k/u) for u distinct strides) and, with `search`, improved one at a time
// while the diameter (then the distance sum) falls. More rings than coprime strides repeat the
// strides in order.
std::vector<int> ring_strides(int m, int rings, bool search);

// Gives ring groups rings within `ring_degree` NICs per server (a ring costs 2 NICs per member,
// 1 for a group of 2): first one ring per group in descending network bytes, then one ring at a
// time to the group with the largest network_bytes / (rings + 1) that still fits. Adds the links
// and returns the plans, in that descending-bytes order.
std::vector<RingPlan> place_rings(const JobDemand& demand, int ring_degree, bool stride_search,
                                  PanelDraft& draft);

// --- matching (topoopt_matching.cpp) ---

// Rounds of maximum-weight matching over the pairs with demand, weight demand / (links + 1) with
// links counting every link already between the pair; at most draft.degree() rounds, each adding
// the matched pairs' links. Returns the rounds that placed a link.
int place_matchings(const PairDemand& pairs, int candidates_per_server, PanelDraft& draft);

// --- connectivity and leftovers (topoopt_connect.cpp) ---

// Component index per server (components numbered by their lowest server).
std::vector<int> components(const PanelDraft& draft, int* count);
// Joins components: two components with free NICs get a link; a component without free NICs
// gives up a link on a cycle (it stays connected) which is rewired to another component.
// Returns whether the result is connected.
bool connect_components(const PairDemand& pairs, PanelDraft& draft);
// Pairs the NICs still free: the server with the most free NICs with the server it has the
// fewest links to (then the most free NICs, then the lowest id), until no two servers have free
// NICs.
void pair_leftover(PanelDraft& draft);

}  // namespace mfabric::control::detail
