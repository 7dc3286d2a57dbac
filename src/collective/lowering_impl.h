// Internal to collective/: the lowerings and the helpers they share. Users go through
// make_lowering() or Lowerer (lowering.h); docs/collectives.md describes the algorithms.
#pragma once

#include <cstdint>
#include <vector>

#include "collective/lowering.h"

namespace mfabric::collective::detail {

class RingLowering final : public Lowering {
 public:
  const char* name() const override { return "ring"; }
  bool choosable_for(workload::CollectiveKind kind) const override {
    return kind == workload::CollectiveKind::AllReduce ||
           kind == workload::CollectiveKind::AllGather ||
           kind == workload::CollectiveKind::ReduceScatter;
  }
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const override;
};

class HierarchicalLowering final : public Lowering {
 public:
  const char* name() const override { return "hierarchical"; }
  bool choosable_for(workload::CollectiveKind kind) const override {
    return kind == workload::CollectiveKind::AllReduce ||
           kind == workload::CollectiveKind::AllToAll;
  }
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const override;
};

class DirectLowering final : public Lowering {
 public:
  const char* name() const override { return "direct"; }
  bool choosable_for(workload::CollectiveKind kind) const override {
    return kind == workload::CollectiveKind::AllToAll;
  }
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const override;
};

class PxnLowering final : public Lowering {
 public:
  const char* name() const override { return "pxn"; }
  bool choosable_for(workload::CollectiveKind kind) const override {
    return kind == workload::CollectiveKind::AllToAll;
  }
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const override;
};

// The hierarchical lowering of an all-to-all(v) (hierarchical_all_to_all.cpp), for a request
// already validated.
Plan hierarchical_all_to_all(const CollectiveRequest& request, const fabric::Topology& topology);

class ProxyLowering final : public Lowering {
 public:
  const char* name() const override { return "proxy"; }
  bool choosable_for(workload::CollectiveKind kind) const override {
    return kind == workload::CollectiveKind::AllToAll;
  }
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const override;
};

// Throws mfabric::Error unless the request has at least one member, every member is a GPU node
// of `topology`, members are distinct, bytes are non-negative and a matrix comes only with
// all-to-all. `algorithm` prefixes the messages.
void validate_request(const CollectiveRequest& request, const fabric::Topology& topology,
                      const char* algorithm);

// The ECMP hash of the transfer of `step` from member `src` to member `dst` (indices into
// request.members): a deterministic mix of the request's seed and the three indices.
std::uint64_t transfer_hash(std::uint64_t seed, int step, int src, int dst);

// ceil(size x num / den) without overflowing for any realistic size; size >= 0, den > 0.
Bytes scale_up(Bytes size, std::int64_t num, std::int64_t den);

// Appends to `step` the n transfers ring[i] -> ring[(i+1) % n] (ring holds member indices) of
// `size` bytes each, with `latency_hops`; `step_index` feeds the flow hashes.
void append_ring(Step& step, const CollectiveRequest& request, const std::vector<int>& ring,
                 Bytes size, int latency_hops, int step_index);

// Throws mfabric::Error unless an all-to-all-v matrix (if any) is n x n for the request's n
// members with no negative entry.
void validate_matrix(const CollectiveRequest& request, const char* algorithm);

// Servers spanned by the members and the member indices on each, servers in order of first
// appearance, members in group order.
std::vector<std::vector<int>> members_by_server(const CollectiveRequest& request,
                                                const fabric::Topology& topology);

// The bytes of an all-to-all(v): member i to member j, from the matrix, or without one
// ceil(bytes / n) for every pair (a member's share to itself stays local).
struct AllToAllBytes {
  const workload::ByteMatrix* matrix = nullptr;
  std::int64_t uniform = 0;
  std::int64_t at(int i, int j) const { return matrix == nullptr ? uniform : matrix->at(i, j); }
};
// Checks an all-to-all request for `algorithm` (the kind, the members, the matrix: mfabric::Error
// otherwise, pointing other kinds at ring or hierarchical) and returns its bytes.
AllToAllBytes all_to_all_bytes(const CollectiveRequest& request, const fabric::Topology& topology,
                               const char* algorithm);

// The ring plan of an already validated request (not all-to-all).
Plan ring_plan(const CollectiveRequest& request);

}  // namespace mfabric::collective::detail
