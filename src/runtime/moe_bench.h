// moe-bench (docs/runtime.md): MoE layers on MPI ranks grouped into servers. Each layer draws a
// skewed routing (seeded), gets its circuits by a policy from a CircuitSource, dispatches every
// token to its expert and combines it back with the proxy all-to-all-v, checks every token at
// its expert and back at its source, and checks both directions byte for byte against
// MPI_Alltoallv of the same routing on the same ranks, timing both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "runtime/circuit_source.h"
#include "runtime/mpi_transport.h"

namespace mfabric::runtime {

struct MoeBenchOptions {
  int servers = 4;
  int alpha = 0;  // OCS NICs per server; 0: half the ranks of a server (at least 1)
  int layers = 8;
  std::int64_t tokens = 4096;  // per rank and layer, before top-k
  int top_k = 2;
  std::int64_t hidden = 1024;  // bytes per token
  std::uint64_t seed = 1;
  CircuitPolicy policy = CircuitPolicy::Block;
  // local (a planner here), none (EPS only), or controller (first_rank_source, asked by rank 0
  // alone and its answers broadcast: the region controller's client, which cli/ wires in)
  std::string circuits = "local";
  CircuitSource* first_rank_source = nullptr;  // of circuits == controller, on rank 0
  std::string planner = "greedy";
  Rate link = Rate::gbps(400);
  Time switch_time;  // of --circuits local: the OCS switching a change of circuits waits for
};

struct MoeLayerResult {
  int layer = 0;
  double seconds = 0;              // dispatch + combine, slowest rank
  double alltoallv_seconds = 0;    // MPI_Alltoallv both ways, slowest rank
  std::int64_t bytes_circuit = 0;  // over circuits, both ways
  std::int64_t bytes_eps = 0;
  std::int64_t bytes_nvswitch = 0;
  std::int64_t bytes_routed = 0;  // token bytes between different ranks, both ways
  std::uint64_t generation = 0;
  int circuits = 0;
  bool reconfigured = false;
  bool waited = false;
  double wait_seconds = 0;
  std::int64_t tokens_verified = 0;  // at experts and back at sources, over all ranks
};

struct MoeBenchResult {
  int ranks = 0;
  RankLayout layout;
  std::vector<MoeLayerResult> layers;
};

// Runs on every rank of the world (a collective). mfabric::Error naming the option on bad
// input, or with the first rank's message when a token is wrong or the bytes differ from
// MPI_Alltoallv's (every rank throws it; none hangs).
MoeBenchResult run_moe_bench(const MoeBenchOptions& options, mpi::World& world);

}  // namespace mfabric::runtime
