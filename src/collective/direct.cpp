// Direct all-to-all(v) (docs/collectives.md): one step, one transfer per ordered pair of
// distinct members with bytes to send.

#include <cstddef>
#include <utility>

#include "collective/lowering_impl.h"

namespace mfabric::collective::detail {

Plan DirectLowering::lower(const CollectiveRequest& request,
                           const fabric::Topology& topology) const {
  const AllToAllBytes bytes_of = all_to_all_bytes(request, topology, name());
  const int n = static_cast<int>(request.members.size());

  // Without a matrix every member sends bytes / n to each member, itself included (that share
  // stays local); rounded up to whole bytes.
  Step step;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const Bytes size(bytes_of.at(i, j));
      if (size.count() <= 0) continue;
      net::Transfer t;
      t.src = request.members[static_cast<std::size_t>(i)];
      t.dst = request.members[static_cast<std::size_t>(j)];
      t.size = size;
      t.latency_hops = 1;
      t.flow_hash = transfer_hash(request.flow_hash, 0, i, j);
      step.transfers.push_back(t);
    }
  }
  Plan plan;
  if (!step.transfers.empty()) plan.steps.push_back(std::move(step));
  return plan;
}

}  // namespace mfabric::collective::detail
