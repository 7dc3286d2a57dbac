// The traffic demand of one region, between its servers: what a region controller plans circuits
// for (docs/control-plane.md). Servers are numbered 0..N-1 inside the region; the region IS the
// matrix, so every pair of the matrix may get circuits.
//
// A circuit is full duplex, so the demand of a pair is the bytes of both directions together:
// D[i][j] = D[j][i] = S[i][j] + S[j][i] for the directed server-to-server bytes S. Intra-server
// bytes (the diagonal) ride the NVSwitch and are dropped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workload/task_graph.h"

namespace mfabric::control {

// Servers of one region a demand may hold. The largest OCS of the paper's Table 2 has 1008 ports,
// so a region (at least one OCS port per server) never has more than 1008 servers; the dense
// matrix of 1024 servers is 8 MiB.
inline constexpr int kMaxRegionServers = 1024;
// Bytes one directed entry (a GPU pair, a server pair, tokens x bytes per token) and one pair's
// demand may hold: 1 PiB, far above one all-to-all, and small enough that sums of a few such
// entries cannot overflow 64 bits.
inline constexpr std::int64_t kMaxPairBytes = std::int64_t{1} << 50;
// Bytes a whole region's demand may hold: 1 EiB. A region of kMaxRegionServers servers has half a
// million pairs, whose sum at kMaxPairBytes each would overflow 64 bits (a fuzzed demand file of
// 130 servers did); a bound on the sum keeps every total, and a few of them added, in range.
inline constexpr std::int64_t kMaxRegionBytes = std::int64_t{1} << 60;

// A pair of servers i < j with demand.
struct DemandPair {
  int i = 0;
  int j = 0;
  std::int64_t bytes = 0;
};

// Symmetric server x server demand in bytes, diagonal 0.
class ServerDemand {
 public:
  ServerDemand() = default;
  // N servers, no demand. 1 <= servers <= kMaxRegionServers (mfabric::Error otherwise).
  explicit ServerDemand(int servers);

  int servers() const { return n_; }
  std::int64_t at(int i, int j) const {
    return bytes_[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) +
                  static_cast<std::size_t>(j)];
  }
  // Adds bytes to the pair {i, j} (both directions of the circuit); i == j is ignored
  // (intra-server). mfabric::Error when the pair's demand would exceed kMaxPairBytes, or the
  // region's total kMaxRegionBytes.
  void add(int i, int j, std::int64_t bytes);

  // Pairs with demand, i < j, in (i, j) order.
  std::vector<DemandPair> pairs() const;
  // Sum over pairs i < j (at most kMaxRegionBytes).
  std::int64_t total() const { return total_; }

 private:
  int n_ = 0;
  std::int64_t total_ = 0;
  std::vector<std::int64_t> bytes_;  // n x n, row-major, symmetric
};

// From directed server-to-server bytes S (row-major, servers x servers): D = S + S^T, diagonal
// dropped. Entries must be in [0, kMaxPairBytes]; errors name the entry ("demand_bytes[2][5]").
ServerDemand demand_from_server_bytes(std::span<const std::int64_t> bytes, int servers);

// From a GPU-pair byte matrix over a group of GPUs (an all-to-all-v of a TaskGraph):
// server_of_member[k] is the region-local server of group member k. Bytes between members on
// one server are dropped.
ServerDemand demand_from_gpu_bytes(const workload::ByteMatrix& matrix,
                                   std::span<const int> server_of_member, int servers);

// Where EP ranks and experts live: source rank r is on server r / ep_ranks_per_server; expert e
// is hosted by rank e / experts_per_rank, hence on server (e / experts_per_rank) /
// ep_ranks_per_server.
struct TokenLayout {
  int ep_ranks_per_server = 1;
  int experts_per_rank = 1;
  std::int64_t bytes_per_token = 0;
};

// From a token matrix tokens[src_rank][expert] (row-major, ep x experts, the matrix Megatron's
// token dispatcher all-gathers): each token is bytes_per_token bytes from the source rank's
// server to the expert's server. ep must be a multiple of ep_ranks_per_server and experts must
// equal ep x experts_per_rank; the region has ep / ep_ranks_per_server servers. Errors name the
// field ("tokens[1][7]", "experts_per_rank").
ServerDemand demand_from_tokens(std::span<const std::int64_t> tokens, int ep, int experts,
                                const TokenLayout& layout);

}  // namespace mfabric::control
