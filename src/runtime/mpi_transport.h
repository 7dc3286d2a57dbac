// The runtime over MPI ranks (docs/runtime.md, "moe-bench"): one rank per process, messages
// with MPI's point-to-point calls, and MPI_Alltoallv as the reference the proxy all-to-all is
// checked and timed against. Built without OpenMPI, MpiSession refuses to start with a clear
// message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/circuit_source.h"
#include "runtime/proxy_alltoallv.h"

namespace mfabric::runtime {

// MPI_COMM_WORLD for the lifetime of the object (MPI_Init .. MPI_Finalize).
class MpiSession {
 public:
  // mfabric::Error when built without MPI, when no MPI launcher started the process, or when
  // MPI fails to start.
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void barrier();
  double max(double value);
  std::int64_t sum(std::int64_t value);
  // The message of the lowest rank whose `error` is not empty, on every rank; empty when none
  // (a collective: every rank calls it, so that one rank's failed check stops all of them).
  std::string first_error(const std::string& error);
  // Rank 0's values on every rank (a collective; the others' argument is ignored).
  std::vector<std::int64_t> broadcast_from_first(std::vector<std::int64_t> values);
  // For a failure on this rank alone in the middle of an exchange, where the others would wait
  // for it forever: prints "mfabric: error: <message>" and ends every rank (MPI_Abort).
  [[noreturn]] void abort(const std::string& message);
  // MPI_Alltoallv of byte blocks: send holds the blocks for ranks 0, 1, ... in order
  // (send_counts bytes each); returns the blocks received from them (recv_counts bytes each).
  std::vector<std::byte> alltoallv(std::span<const std::byte> send,
                                   std::span<const std::int64_t> send_counts,
                                   std::span<const std::int64_t> recv_counts);

 private:
  int rank_ = 0;
  int size_ = 1;
};

// This process's rank of the session; messages with MPI_Isend / MPI_Irecv, one tag per step.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MpiSession& session) : session_(session) {}
  bool hosts(int rank) const override { return rank == session_.rank(); }
  void exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                std::vector<std::vector<std::byte>>& payloads) override;

 private:
  MpiSession& session_;
  [[maybe_unused]] int step_ = 0;  // the tag of the next step's messages (unused without MPI)
};

// One source asked by rank 0 alone, its answer (or its error) given to every rank, so that all
// ranks run a layer on the same circuits and generation even when the source is a remote
// controller whose answers two ranks asking apart could see differ. `first` is rank 0's source;
// the other ranks pass nullptr. A request that fails on rank 0 throws its mfabric::Error on every
// rank, so none waits for the others.
class BroadcastCircuitSource final : public CircuitSource {
 public:
  BroadcastCircuitSource(MpiSession& session, CircuitSource* first)
      : session_(session), first_(first) {}
  CircuitsInForce request(const control::ServerDemand& demand) override;
  CircuitsInForce current() override;

 private:
  template <typename Ask>
  CircuitsInForce shared(Ask ask);

  MpiSession& session_;
  CircuitSource* first_;
};

}  // namespace mfabric::runtime
