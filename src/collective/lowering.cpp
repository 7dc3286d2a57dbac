#include "collective/lowering.h"

#include <limits>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "collective/lowering_impl.h"
#include "collective/step_bytes.h"
#include "core/error.h"
#include "core/rng.h"

namespace mfabric::collective {
namespace detail {

void validate_request(const CollectiveRequest& request, const fabric::Topology& topology,
                      const char* algorithm) {
  const std::string kind = workload::to_string(request.kind);
  if (request.members.empty()) {
    throw Error("", "", fmt::format("{}: {} has no members", algorithm, kind));
  }
  if (request.bytes.count() < 0) {
    throw Error(
        "", "",
        fmt::format("{}: {} of negative size ({} bytes)", algorithm, kind, request.bytes.count()));
  }
  if (request.matrix != nullptr && request.kind != workload::CollectiveKind::AllToAll) {
    throw Error(
        "", "",
        fmt::format("{}: a byte matrix only applies to all-to-all, not {}", algorithm, kind));
  }
  const auto nodes = static_cast<fabric::NodeId>(topology.nodes().size());
  for (std::size_t i = 0; i < request.members.size(); ++i) {
    const fabric::NodeId id = request.members[i];
    if (id < 0 || id >= nodes) {
      throw Error("", "",
                  fmt::format("{}: member {} of the {} is node {}, outside the topology's {} "
                              "nodes",
                              algorithm, i, kind, id, nodes));
    }
    if (topology.node(id).kind != fabric::NodeKind::Gpu) {
      throw Error("", "",
                  fmt::format("{}: member {} of the {} is {} ({}), not a GPU", algorithm, i, kind,
                              topology.name(id), fabric::to_string(topology.node(id).kind)));
    }
  }
  std::vector<fabric::NodeId> sorted = request.members;
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) {
    throw Error("", "",
                fmt::format("{}: {} lists {} more than once; members must be distinct", algorithm,
                            kind, topology.name(*dup)));
  }
}

void validate_matrix(const CollectiveRequest& request, const char* algorithm) {
  const workload::ByteMatrix* m = request.matrix;
  if (m == nullptr) return;
  const int n = static_cast<int>(request.members.size());
  if (m->n != n || m->bytes.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw Error("", "",
                fmt::format("{}: all-to-all-v matrix is {} x {} but the group has {} members",
                            algorithm, m->n, m->n, n));
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (m->at(i, j) < 0) {
        throw Error("", "",
                    fmt::format("{}: all-to-all-v matrix entry ({}, {}) is negative ({})",
                                algorithm, i, j, m->at(i, j)));
      }
    }
  }
}

std::uint64_t transfer_hash(std::uint64_t seed, int step, int src, int dst) {
  // Each round is a bijection of the running value xor one index, so for a fixed seed and
  // prefix, distinct last indices give distinct hashes.
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(step)));
  h = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)));
  h = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)));
  return h;
}

Bytes scale_up(Bytes size, std::int64_t num, std::int64_t den) {
  const std::int64_t s = size.count();
  const std::int64_t q = s / den;
  const std::int64_t r = s % den;
  // Inputs cap sizes far below this (workload::kMaxTransferBytes); this guards the arithmetic.
  if (num > 0 && (q > (std::numeric_limits<std::int64_t>::max() - den) / num ||
                  r > std::numeric_limits<std::int64_t>::max() / num)) {
    throw Error(
        "", "bytes",
        fmt::format("a collective of {} bytes over {} members is too large to lower", s, den));
  }
  return Bytes(q * num + (r * num + den - 1) / den);
}

void append_ring(Step& step, const CollectiveRequest& request, const std::vector<int>& ring,
                 Bytes size, int latency_hops, int step_index) {
  const std::size_t n = ring.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int src = ring[i];
    const int dst = ring[(i + 1) % n];
    net::Transfer t;
    t.src = request.members[static_cast<std::size_t>(src)];
    t.dst = request.members[static_cast<std::size_t>(dst)];
    t.size = size;
    t.latency_hops = latency_hops;
    t.flow_hash = transfer_hash(request.flow_hash, step_index, src, dst);
    step.transfers.push_back(t);
  }
}

std::vector<std::vector<int>> members_by_server(const CollectiveRequest& request,
                                                const fabric::Topology& topology) {
  std::vector<int> server_ids;
  std::vector<std::vector<int>> groups;
  for (std::size_t i = 0; i < request.members.size(); ++i) {
    const int server = topology.node(request.members[i]).server;
    const auto it = std::find(server_ids.begin(), server_ids.end(), server);
    const auto pos = static_cast<std::size_t>(it - server_ids.begin());
    if (it == server_ids.end()) {
      server_ids.push_back(server);
      groups.emplace_back();
    }
    groups[pos].push_back(static_cast<int>(i));
  }
  return groups;
}

AllToAllBytes all_to_all_bytes(const CollectiveRequest& request, const fabric::Topology& topology,
                               const char* algorithm) {
  if (request.kind != workload::CollectiveKind::AllToAll) {
    throw Error("", "",
                fmt::format("{}: only lowers all-to-all, not {} (use ring or hierarchical)",
                            algorithm, workload::to_string(request.kind)));
  }
  validate_request(request, topology, algorithm);
  validate_matrix(request, algorithm);
  const auto n = static_cast<std::int64_t>(request.members.size());
  return AllToAllBytes{request.matrix,
                       request.matrix == nullptr ? scale_up(request.bytes, 1, n).count() : 0};
}

bool has_eps_nic(const fabric::Topology& t, const CircuitView* view, fabric::NodeId gpu) {
  if (view != nullptr && !view->usable(gpu)) return false;
  for (fabric::LinkId l : t.links_of(gpu)) {
    if (t.link(l).kind != fabric::LinkKind::Pcie) continue;
    const fabric::NodeId nic = t.other_end(l, gpu);
    if (t.node(nic).role == fabric::NicRole::Eps && (view == nullptr || view->usable(nic)))
      return true;
  }
  return false;
}

}  // namespace detail

}  // namespace mfabric::collective
