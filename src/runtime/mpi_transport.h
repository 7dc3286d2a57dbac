// The runtime over MPI ranks (docs/runtime.md, "moe-bench"): one rank per
// process, messages with MPI's point-to-point calls, and MPI_Alltoallv as the
// reference the proxy all-to-all is checked and timed against, all through
// mpi/'s World. Built without OpenMPI, moe-bench refuses to start with a clear
// message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mpi/world.h"
#include "runtime/circuit_source.h"
#include "runtime/proxy_alltoallv.h"

namespace mfabric::runtime {

// moe-bench's ranks: MPI_COMM_WORLD until the World is destroyed.
// mfabric::Error (field "mpirun") when no MPI launcher started the process,
// when built without MPI, or when MPI fails to start; a message over MPI's 2
// GiB count is an mfabric::Error naming the options to lower.
mpi::World moe_bench_world();

// This process's rank of the world; messages with MPI_Isend / MPI_Irecv, one
// tag per step.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(mpi::World& world) : world_(world) {}
  bool hosts(int rank) const override { return rank == world_.rank(); }
  void exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                std::vector<std::vector<std::byte>>& payloads) override;

 private:
  mpi::World& world_;
  int step_ = 0;  // the tag of the next step's messages
};

// One source asked by rank 0 alone, its answer (or its error) given to every
// rank, so that all ranks run a layer on the same circuits and generation even
// when the source is a remote controller whose answers two ranks asking apart
// could see differ. `first` is rank 0's source; the other ranks pass nullptr. A
// request that fails on rank 0 throws its mfabric::Error on every rank, so none
// waits for the others.
class BroadcastCircuitSource final : public CircuitSource {
 public:
  BroadcastCircuitSource(mpi::World& world, CircuitSource* first) : world_(world), first_(first) {}
  CircuitsInForce request(const control::ServerDemand& demand) override;
  CircuitsInForce current() override;

 private:
  template <typename Ask>
  CircuitsInForce shared(Ask ask);

  mpi::World& world_;
  CircuitSource* first_;
};

}  // namespace mfabric::runtime
