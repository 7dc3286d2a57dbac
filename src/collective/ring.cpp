// Pipelined ring (docs/collectives.md): one step whose transfers carry what the ring moves over
// each edge in total; latency_hops is the ring's step count.
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

#include "collective/lowering_impl.h"
#include "core/error.h"

namespace mfabric::collective::detail {

Plan ring_plan(const CollectiveRequest& request) {
  using workload::CollectiveKind;
  const int n = static_cast<int>(request.members.size());
  Plan plan;
  if (n < 2) return plan;
  const bool barrier = request.kind == CollectiveKind::Barrier;
  // A zero-byte data collective returns at once, as NCCL does for count 0.
  if (!barrier && request.bytes.count() == 0) return plan;

  std::vector<int> ring(static_cast<std::size_t>(n));
  std::iota(ring.begin(), ring.end(), 0);
  Step step;
  switch (request.kind) {
    case CollectiveKind::AllReduce:
      append_ring(step, request, ring, scale_up(request.bytes, 2 * (n - 1), n), 2 * (n - 1), 0);
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
      append_ring(step, request, ring, scale_up(request.bytes, n - 1, n), n - 1, 0);
      break;
    case CollectiveKind::Barrier:
      // NCCL's barrier is an all-reduce of a few bytes: only the 2(n-1) ring latencies count.
      append_ring(step, request, ring, Bytes(0), 2 * (n - 1), 0);
      break;
    case CollectiveKind::Broadcast:
      // A pipelined chain from member 0 (the root): member i forwards to i+1; the last member
      // sends nothing.
      for (int i = 0; i + 1 < n; ++i) {
        net::Transfer t;
        t.src = request.members[static_cast<std::size_t>(i)];
        t.dst = request.members[static_cast<std::size_t>(i + 1)];
        t.size = request.bytes;
        t.latency_hops = n - 1;
        t.flow_hash = transfer_hash(request.flow_hash, 0, i, i + 1);
        step.transfers.push_back(t);
      }
      break;
    case CollectiveKind::AllToAll:
      throw Error("", "", "ring: all-to-all has no ring lowering (use direct)");
  }
  plan.steps.push_back(std::move(step));
  return plan;
}

Plan RingLowering::lower(const CollectiveRequest& request, const fabric::Topology& topology) const {
  if (request.kind == workload::CollectiveKind::AllToAll) {
    throw Error("", "", "ring: all-to-all has no ring lowering (use direct)");
  }
  validate_request(request, topology, name());
  return ring_plan(request);
}

}  // namespace mfabric::collective::detail
