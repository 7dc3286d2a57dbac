// Direct all-to-all(v) (docs/collectives.md): one step, one transfer per ordered pair of
// distinct members with bytes to send.
#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "collective/lowering_impl.h"
#include "core/error.h"

namespace mfabric::collective::detail {

Plan DirectLowering::lower(const CollectiveRequest& request,
                           const fabric::Topology& topology) const {
  if (request.kind != workload::CollectiveKind::AllToAll) {
    throw Error("", "",
                fmt::format("direct: only lowers all-to-all, not {} (use ring or hierarchical)",
                            workload::to_string(request.kind)));
  }
  validate_request(request, topology, name());
  validate_matrix(request, name());
  const int n = static_cast<int>(request.members.size());
  const workload::ByteMatrix* m = request.matrix;

  // Without a matrix every member sends bytes / n to each member, itself included (that share
  // stays local); rounded up to whole bytes.
  const Bytes uniform = m == nullptr ? scale_up(request.bytes, 1, n) : Bytes(0);
  Step step;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const Bytes size = m == nullptr ? uniform : Bytes(m->at(i, j));
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
