#include "control/nic_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace mfabric::control {

void ServerNics::validate() const {
  fabric::check_alpha(alpha, nics);
  if (numa < 1 || numa > nics) {
    throw Error(
        "", "numa",
        fmt::format("expected 1 to {} NUMA nodes (at most one per NIC), got {}", nics, numa));
  }
}

namespace {

// The free OCS NICs of every server, and which NUMA node each NIC is on.
class FreeNics {
 public:
  // The unusable NICs are taken from the start (the caller checked they are OCS NICs of the
  // region's servers).
  FreeNics(int servers, const ServerNics& nics, const std::set<std::pair<int, int>>& unusable)
      : nics_(nics),
        taken_(static_cast<std::size_t>(servers) * static_cast<std::size_t>(nics.alpha), false) {
    for (const auto& [server, nic] : unusable)
      taken_[index(server, nic - nics_.first_ocs_nic())] = true;
  }

  // A NIC of `server` on the NUMA node that holds the fewest of `on_node` (this pair's circuits
  // so far per node), ties: more free NICs on the node, then the lower node; the lowest free
  // NIC there. The caller checked that the server has a free OCS NIC.
  int take(int server, std::vector<int>& on_node) {
    std::vector<int> free_on_node(static_cast<std::size_t>(nics_.numa), 0);
    for (int k = 0; k < nics_.alpha; ++k) {
      if (!is_taken(server, k)) ++free_on_node[static_cast<std::size_t>(node(k))];
    }
    int best = -1;
    for (int n = 0; n < nics_.numa; ++n) {
      const auto u = static_cast<std::size_t>(n);
      if (free_on_node[u] == 0) continue;
      if (best < 0) {
        best = n;
        continue;
      }
      const auto b = static_cast<std::size_t>(best);
      if (on_node[u] < on_node[b] ||
          (on_node[u] == on_node[b] && free_on_node[u] > free_on_node[b])) {
        best = n;
      }
    }
    for (int k = 0; k < nics_.alpha; ++k) {
      if (!is_taken(server, k) && node(k) == best) {
        taken_[index(server, k)] = true;
        ++on_node[static_cast<std::size_t>(best)];
        return nics_.first_ocs_nic() + k;
      }
    }
    return -1;  // unreachable: the caller checked the server's free ports
  }

 private:
  std::size_t index(int server, int k) const {
    return static_cast<std::size_t>(server) * static_cast<std::size_t>(nics_.alpha) +
           static_cast<std::size_t>(k);
  }
  bool is_taken(int server, int k) const { return taken_[index(server, k)]; }
  int node(int k) const { return nics_.numa_of(nics_.first_ocs_nic() + k); }

  ServerNics nics_;
  std::vector<bool> taken_;
};

}  // namespace

std::vector<PortCircuit> map_to_nics(const CircuitPlan& plan, const ServerNics& nics,
                                     const std::set<std::pair<int, int>>& unusable) {
  nics.validate();
  // Per server: its OCS NICs that may carry a circuit.
  std::vector<int> usable(static_cast<std::size_t>(std::max(plan.servers, 0)), nics.alpha);
  for (const auto& [server, nic] : unusable) {
    if (server < 0 || server >= plan.servers || nic < nics.first_ocs_nic() || nic >= nics.nics) {
      throw Error("", "unusable",
                  fmt::format("NIC {} of server {} is not an OCS NIC (local indices {} to {}) of "
                              "a server of the region of {} servers",
                              nic, server, nics.first_ocs_nic(), nics.nics - 1, plan.servers));
    }
    --usable[static_cast<std::size_t>(server)];
  }
  std::vector<int> ends(static_cast<std::size_t>(plan.servers), 0);
  for (const Circuit& c : plan.circuits) {
    if (c.i < 0 || c.i >= c.j || c.j >= plan.servers || c.count < 1) {
      throw Error("", "plan",
                  fmt::format("circuit between servers {} and {} (x{}) is outside the region of "
                              "{} servers",
                              c.i, c.j, c.count, plan.servers));
    }
    ends[static_cast<std::size_t>(c.i)] += c.count;
    ends[static_cast<std::size_t>(c.j)] += c.count;
  }
  for (int s = 0; s < plan.servers; ++s) {
    const auto u = static_cast<std::size_t>(s);
    if (ends[u] > usable[u]) {
      throw Error("", "plan",
                  usable[u] == nics.alpha
                      ? fmt::format("server {} has {} circuits but only alpha = {} OCS NICs", s,
                                    ends[u], nics.alpha)
                      : fmt::format("server {} has {} circuits but only {} usable OCS NICs "
                                    "(alpha = {}, {} unusable)",
                                    s, ends[u], usable[u], nics.alpha, nics.alpha - usable[u]));
    }
  }

  std::vector<std::size_t> order(plan.circuits.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return plan.circuits[a].count > plan.circuits[b].count;
  });

  FreeNics free(plan.servers, nics, unusable);
  std::vector<PortCircuit> out;
  out.reserve(static_cast<std::size_t>(plan.total_circuits()));
  for (const std::size_t k : order) {
    const Circuit& c = plan.circuits[k];
    std::vector<int> at_i(static_cast<std::size_t>(nics.numa), 0);
    std::vector<int> at_j(static_cast<std::size_t>(nics.numa), 0);
    for (int n = 0; n < c.count; ++n) {
      const int nic_i = free.take(c.i, at_i);
      const int nic_j = free.take(c.j, at_j);
      out.push_back({c.i, nic_i, c.j, nic_j});
    }
  }
  return out;
}

}  // namespace mfabric::control
