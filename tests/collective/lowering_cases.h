// The small fat-tree, requests and plan probes shared by the tests of the collective lowerings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collective/lowering.h"
#include "fabric/builders.h"
#include "test_text.h"

// Helpers in a namespace of their own: test files are compiled several to a translation unit.
namespace mfabric::collective::lowering_test {

using fabric::NodeId;
using testing::error_text;
using workload::ByteMatrix;
using workload::CollectiveKind;

inline fabric::ClusterSpec cluster(int servers, int gpus, int nics) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  return c;
}

// 4 servers x 4 GPUs x 4 NICs on a fat-tree, shared by every test.
inline const fabric::Topology& topo() {
  static const fabric::Topology t = fabric::build_fabric("fat-tree", cluster(4, 4, 4));
  return t;
}

inline NodeId gpu(int server, int local) {
  return topo().gpu(server, local);
}

// The first n GPUs in server-major order (server g / 4, local g % 4).
inline std::vector<NodeId> first_gpus(int n) {
  std::vector<NodeId> out;
  for (int g = 0; g < n; ++g)
    out.push_back(gpu(g / 4, g % 4));
  return out;
}

inline CollectiveRequest request(CollectiveKind kind, std::vector<NodeId> members,
                                 std::int64_t bytes, std::uint64_t hash = 7) {
  CollectiveRequest r;
  r.kind = kind;
  r.members = std::move(members);
  r.bytes = Bytes(bytes);
  r.flow_hash = hash;
  return r;
}

inline Plan lower(const std::string& algorithm, const CollectiveRequest& r) {
  return make_lowering(algorithm)->lower(r, topo());
}

// (src, dst, size, latency_hops) of a step, sorted, for exact comparisons.
using Edge = std::tuple<NodeId, NodeId, std::int64_t, int>;
inline std::vector<Edge> edges(const Step& step) {
  std::vector<Edge> out;
  for (const net::Transfer& t : step.transfers) {
    out.emplace_back(t.src, t.dst, t.size.count(), t.latency_hops);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The ring over `members` (in order) with `size` and `hops` on every edge.
inline std::vector<Edge> ring_edges(const std::vector<NodeId>& members, std::int64_t size,
                                    int hops) {
  std::vector<Edge> out;
  const std::size_t n = members.size();
  for (std::size_t i = 0; i < n; ++i)
    out.emplace_back(members[i], members[(i + 1) % n], size, hops);
  std::sort(out.begin(), out.end());
  return out;
}

inline std::int64_t total_bytes(const Plan& p) {
  std::int64_t sum = 0;
  for (const Step& s : p.steps) {
    for (const net::Transfer& t : s.transfers)
      sum += t.size.count();
  }
  return sum;
}

// Members on two servers, with cross-rail and rail-aligned pairs: member i sends to member j
// the bytes v[i][j].
struct RelayCase {
  std::vector<NodeId> members{gpu(0, 0), gpu(0, 1), gpu(1, 1), gpu(1, 2)};
  ByteMatrix mat{4};
  CollectiveRequest r;
  RelayCase() {
    const std::int64_t v[4][4] = {{0, 5, 100, 40}, {0, 0, 8, 0}, {0, 0, 0, 0}, {0, 0, 6, 0}};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j)
        mat.at(i, j) = v[i][j];
    }
    r = request(CollectiveKind::AllToAll, members, mat.off_diagonal_sum());
    r.matrix = &mat;
  }
};

}  // namespace mfabric::collective::lowering_test
