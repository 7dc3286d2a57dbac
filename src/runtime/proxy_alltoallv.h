// mFabric's 5-step proxy all-to-all-v on real buffers (docs/runtime.md; the simulator's lowering
// is collective/proxy.cpp):
//   1. for each destination server, a rank looks up its server's proxies: the ranks whose NIC
//      holds a circuit to that server in the current generation, else the ranks with an EPS NIC
//      (itself when it has one);
//   2. it gathers its tokens for that server onto the proxies over the NVSwitch, token by token
//      in turn over the proxies;
//   3. proxies send over their circuit, or over the EPS when the pair of servers has none, while
//   4. tokens for the rank's own server move directly over the NVSwitch;
//   5. the receiving proxies scatter the tokens to their destination ranks over the NVSwitch.
// The plan (which rank sends which tokens to which rank in each step) is computed the same way
// on every process from the routing and the circuits in force; a Transport moves the bytes.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "control/nic_mapping.h"

namespace mfabric::runtime {

// Ranks grouped into servers: rank r is GPU r % gpus_per_server() of server r /
// gpus_per_server(), and uses the NIC of the same local index. The last alpha NICs of a server
// are on the OCS (control::ServerNics), the others on the EPS.
struct RankLayout {
  int ranks = 0;
  int servers = 1;
  int alpha = 1;

  int gpus_per_server() const { return ranks / servers; }
  int server_of(int rank) const { return rank / gpus_per_server(); }
  int nic_of(int rank) const { return rank % gpus_per_server(); }
  int rank_of(int server, int nic) const { return server * gpus_per_server() + nic; }
  bool on_ocs(int nic) const { return nic >= gpus_per_server() - alpha; }
  control::ServerNics server_nics() const { return {gpus_per_server(), alpha, 1}; }
  // mfabric::Error naming the field unless servers >= 1 divides ranks, at least two ranks per
  // server, and 1 <= alpha <= ranks per server - 1 (every server keeps an EPS NIC).
  void validate() const;
};

// One generation of circuits from the controller: NIC-to-NIC circuits between servers.
struct CircuitsInForce {
  std::uint64_t generation = 0;
  std::vector<control::PortCircuit> circuits;
};
// mfabric::Error (field "circuits") unless every end is an OCS NIC of a server of the layout,
// no NIC holds two circuits, and no circuit joins a server to itself.
void check_circuits(const CircuitsInForce& circuits, const RankLayout& layout);

// Tokens each rank sends to each rank's expert (row-major ranks x ranks), each token_bytes.
struct TokenRouting {
  int ranks = 0;
  std::vector<std::int64_t> tokens;
  std::int64_t token_bytes = 0;

  std::int64_t at(int source, int expert) const {
    return tokens[static_cast<std::size_t>(source) * static_cast<std::size_t>(ranks) +
                  static_cast<std::size_t>(expert)];
  }
  // Tokens rank `source` sends in all.
  std::int64_t sent_by(int source) const;
  // mfabric::Error unless the matrix is ranks x ranks, counts >= 0 and token_bytes >=
  // kTokenHeaderBytes.
  void validate() const;
};

// A token by its source rank and its index in the source's send buffer: buffers hold their
// tokens in key order, which is the layout of MPI_Alltoallv's buffers (blocks by peer rank).
inline std::uint64_t token_key(std::uint32_t source, std::uint32_t index) {
  return (std::uint64_t{source} << 32) | index;
}

// A token going from one rank to another (from == to: it stays).
struct TokenMove {
  std::uint64_t key = 0;
  int from = 0;
  int to = 0;
};
// Dispatch: every token from its source to its expert's rank. Combine: back.
std::vector<TokenMove> dispatch_moves(const TokenRouting& routing);
std::vector<TokenMove> combine_moves(const TokenRouting& routing);

enum class Path { NvSwitch, Circuit, Eps };
const char* path_name(Path path);

// One message of one step: tokens (keys, in order) from a rank to a rank over one path.
struct Transfer {
  int from = 0;
  int to = 0;
  Path path = Path::NvSwitch;
  std::vector<std::uint64_t> tokens;
};

struct ProxyPlan {
  std::int64_t token_bytes = 0;
  // Steps 1-2 (gather onto proxies), 3-4 (between proxies; server-local), 5 (scatter).
  std::array<std::vector<Transfer>, 3> steps;
  // Per rank: the keys of the tokens it starts with and ends with, in key order (its send and
  // receive buffers).
  std::vector<std::vector<std::uint64_t>> departures, arrivals;

  std::int64_t bytes_over(Path path) const;
};

// The plan for `moves`; circuits are checked (check_circuits). Deterministic.
ProxyPlan plan_proxy(std::span<const TokenMove> moves, const RankLayout& layout,
                     const CircuitsInForce& circuits, std::int64_t token_bytes);

// Moves one step's bytes between the ranks of the processes taking part.
class Transport {
 public:
  virtual ~Transport() = default;
  // Whether rank's buffers live in this process.
  virtual bool hosts(int rank) const = 0;
  // A collective: every process calls it with the same transfers, of tokens of token_bytes
  // each. Before, payloads[k] holds
  // transfer k's bytes where this process hosts its sender; after, where it hosts its receiver.
  // mfabric::Error when a message is lost or has the wrong size.
  virtual void exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                        std::vector<std::vector<std::byte>>& payloads) = 0;
};

// Every rank in this process: the unit tests' transport. Receivers get a copy and the sender's
// buffer is cleared, as if the bytes had crossed a wire.
class InProcessTransport final : public Transport {
 public:
  bool hosts(int) const override { return true; }
  void exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                std::vector<std::vector<std::byte>>& payloads) override;
};

// Runs plans, keeping its buffers from one run to the next, so that the layers after the first
// touch no fresh memory: on a loaded machine, page faults of fresh buffers cost more than the
// copies themselves.
class ProxyRunner {
 public:
  ProxyRunner();
  ~ProxyRunner();
  ProxyRunner(const ProxyRunner&) = delete;
  ProxyRunner& operator=(const ProxyRunner&) = delete;

  // As run_proxy() below, into `received` (its buffers reused).
  void run(const ProxyPlan& plan, Transport& transport,
           const std::map<int, std::vector<std::byte>>& send_buffers,
           std::map<int, std::vector<std::byte>>& received);

 private:
  class TokenStore;
  std::map<int, std::unique_ptr<TokenStore>> stores_;            // by hosted rank
  std::array<std::vector<std::vector<std::byte>>, 3> payloads_;  // by step
};

// Runs the plan: send_buffers[r] (for each rank r the transport hosts) holds r's departures'
// bytes in order; returns each hosted rank's receive buffer (its arrivals in order).
// mfabric::Error when a buffer has the wrong size.
std::map<int, std::vector<std::byte>> run_proxy(
    const ProxyPlan& plan, Transport& transport,
    const std::map<int, std::vector<std::byte>>& send_buffers);

}  // namespace mfabric::runtime
