// The one wrapper of MPI (docs/architecture.md, "mpi/"): a sweep's points (study/, docs/sweep.md)
// and moe-bench's ranks (runtime/, docs/runtime.md) run on the ranks of a World. MPI is started
// only when a launcher started the process (mpirun, srun), so every other run of mfabric never
// touches it. MPI is optional at build time: built without OpenMPI, a process started by a
// launcher is refused with a clear message rather than running alone once per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace mfabric::mpi {

// Whether an MPI launcher started this process (its environment: OMPI_COMM_WORLD_SIZE,
// PMIX_RANK, PMI_SIZE).
bool launched_by_mpi();
// How many ranks the launcher started on this machine (1 without one): threads per rank
// default to the cores divided among them.
int local_ranks();
// Whether this mfabric was built with MPI (OpenMPI found at build time).
bool built_with_mpi();

// A World's refusals in the words of the command that runs on it, which knows what the user
// can do instead.
struct Messages {
  // After "this mfabric was built without MPI (OpenMPI was not found at build time): ", when a
  // launcher started a process built without MPI.
  std::string without_mpi;
  // The error for a message of `bytes` over MPI's int count (2 GiB): refused, never truncated.
  std::function<Error(std::int64_t bytes)> too_large;
};

// MPI_COMM_WORLD from MPI_Init to MPI_Finalize when a launcher started the process, else a world
// of one (rank 0 of 1) that never touches MPI, whose collectives return what one rank would.
// Every collective must be called by every rank. Only the thread that made the World may call
// it (MPI_THREAD_FUNNELED: moe-bench's rank 0 has gRPC's threads beside it, which never call MPI).
class World {
 public:
  // mfabric::Error (field "mpirun") when launched but built without MPI, or MPI fails to start.
  explicit World(Messages messages);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether MPI was started (a launcher started the process).
  bool started() const { return started_; }

  void barrier();
  // Whether every rank passed true.
  bool all(bool ok);
  double max(double value);
  std::int64_t sum(std::int64_t value);
  // "rank R: <error>" for the lowest rank R whose `error` is not empty, on every rank; empty
  // when none, so that one rank's failed check stops all of them.
  std::string first_error(const std::string& error);
  // Rank 0's values on every rank (the others' argument is ignored).
  std::vector<std::int64_t> broadcast_from_first(std::vector<std::int64_t> values);
  // Rank 0 gets every rank's text in rank order; the others get nothing.
  std::vector<std::string> gather(const std::string& text);
  // MPI_Alltoallv of byte blocks: send holds the blocks for ranks 0, 1, ... in order
  // (send_counts bytes each); returns the blocks received from them (recv_counts bytes each).
  std::vector<std::byte> alltoallv(std::span<const std::byte> send,
                                   std::span<const std::int64_t> send_counts,
                                   std::span<const std::int64_t> recv_counts);

  // One step of point-to-point messages, all of them under `tag`: every receive is posted (in
  // order), then every send, and the call returns when all are done. Messages between the same
  // two ranks under one tag match in order.
  struct Receive {
    int from;
    std::span<std::byte> bytes;  // exactly the size of the message
  };
  struct Send {
    int to;
    std::span<const std::byte> bytes;
  };
  void exchange(std::span<const Receive> receives, std::span<const Send> sends, int tag);

  // For a failure on this rank alone in the middle of an exchange, where the others would wait
  // for it forever: prints "mfabric: error: <message>" and ends every rank (MPI_Abort).
  [[noreturn]] void abort(const std::string& message);

 private:
  // MPI's counts are int: a count over 2 GiB is messages_.too_large.
  int count(std::int64_t bytes) const;

  Messages messages_;
  bool started_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace mfabric::mpi
