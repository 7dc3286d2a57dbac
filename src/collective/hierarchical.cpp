// Hierarchical all-reduce (docs/collectives.md): reduce-scatter inside each server, g concurrent
// ring all-reduces of the 1/g shards across servers (one per local index), all-gather inside
// each server. Falls back to the ring when the hierarchy does not apply. All-to-all has its own
// hierarchy (hierarchical_all_to_all.cpp).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collective/lowering_impl.h"
#include "core/error.h"

namespace mfabric::collective::detail {

Plan HierarchicalLowering::lower(const CollectiveRequest& request,
                                 const fabric::Topology& topology) const {
  using workload::CollectiveKind;
  validate_request(request, topology, name());
  if (request.kind == CollectiveKind::AllToAll) return hierarchical_all_to_all(request, topology);
  // Only all-reduce is hierarchical; the other kinds run as rings.
  if (request.kind != CollectiveKind::AllReduce) return ring_plan(request);
  if (request.members.size() < 2 || request.bytes.count() == 0) return Plan{};

  const auto servers = members_by_server(request, topology);
  const auto g = servers.front().size();
  bool equal = true;
  for (const auto& s : servers)
    equal = equal && s.size() == g;
  // One server, one member per server, or uneven servers: the ring.
  if (servers.size() < 2 || g < 2 || !equal) return ring_plan(request);

  const auto gi = static_cast<std::int64_t>(g);
  const auto si = static_cast<std::int64_t>(servers.size());
  const int local_hops = static_cast<int>(g) - 1;
  const int cross_hops = 2 * (static_cast<int>(servers.size()) - 1);

  Plan plan;
  plan.steps.resize(3);
  // Steps 1 and 3: a ring reduce-scatter, then all-gather, among each server's members.
  const Bytes local = scale_up(request.bytes, gi - 1, gi);
  for (const auto& members : servers) {
    append_ring(plan.steps[0], request, members, local, local_hops, 0);
    append_ring(plan.steps[2], request, members, local, local_hops, 2);
  }
  // Step 2: for each local index k, a ring all-reduce of the S/g shard among the k-th members
  // of every server: 2(s-1)/s x S/g per edge. The g rings run concurrently.
  const Bytes cross = scale_up(request.bytes, 2 * (si - 1), si * gi);
  for (std::size_t k = 0; k < g; ++k) {
    std::vector<int> ring;
    ring.reserve(servers.size());
    for (const auto& members : servers)
      ring.push_back(members[k]);
    append_ring(plan.steps[1], request, ring, cross, cross_hops, 1);
  }
  return plan;
}

}  // namespace mfabric::collective::detail
