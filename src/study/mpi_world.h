// MPI for sweeps (docs/sweep.md, "MPI"): `mpirun -n R mfabric sweep ...` splits a sweep's
// points over R ranks. MPI is initialised only when a launcher started the process (mpirun,
// srun), so every other run of mfabric, and a sweep without mpirun, never touches it. Built
// without OpenMPI, a process started by a launcher is refused with a clear message rather than
// running the whole sweep once per rank.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mfabric::study {

// Whether an MPI launcher started this process (its environment: OMPI_COMM_WORLD_SIZE,
// PMIX_RANK, PMI_SIZE).
bool launched_by_mpi();
// How many ranks the launcher started on this machine (1 without one): threads per rank
// default to the cores divided among them.
int local_ranks();

// Points (with their estimated costs) over `ranks` ranks, the costliest first onto the least
// loaded rank (longest processing time first; ties to the lowest rank). The same input gives
// the same split on every rank.
std::vector<std::vector<std::size_t>> split_over_ranks(const std::vector<std::size_t>& points,
                                                       const std::vector<double>& costs, int ranks);

// The ranks of one sweep: MPI_COMM_WORLD when launched by mpirun, else a world of one. Only the
// thread that made it may call it (MPI_THREAD_FUNNELED).
class MpiWorld {
 public:
  // mfabric::Error when launched by mpirun but built without MPI, or MPI fails to start.
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether every rank passed true (a collective: every rank must call it).
  bool all(bool ok);
  // Rank 0 gets every rank's text in rank order; the others get nothing (a collective).
  std::vector<std::string> gather(const std::string& text);

 private:
  bool initialised_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace mfabric::study
