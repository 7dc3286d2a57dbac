// A whole sweep (docs/sweep.md): the points a journal does not hold yet, split over the MPI
// ranks (one rank without mpirun), each rank's share run on threads, every point that finished
// without error appended to the journal, and the results gathered on rank 0 in the sweep's
// order. The result does not depend on the ranks, the threads or what was resumed.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mpi/world.h"
#include "study/sweep.h"
#include "study/sweep_run.h"

namespace mfabric::study {

// The ranks of a sweep: MPI_COMM_WORLD when a launcher started the process, else a world of one.
// mfabric::Error (field "mpirun") when launched but built without MPI, or MPI fails to start.
mpi::World sweep_world();

// Points (with their estimated costs) over `ranks` ranks, the costliest first onto the least
// loaded rank (longest processing time first; ties to the lowest rank). The same input gives
// the same split on every rank.
std::vector<std::vector<std::size_t>> split_over_ranks(const std::vector<std::size_t>& points,
                                                       const std::vector<double>& costs, int ranks);

struct SweepOptions {
  int jobs = 0;         // threads per rank; 0: this machine's cores shared among its ranks
  std::string journal;  // the resume journal (points.jsonl), or empty for none
  // Called once per rank, after the journal is read and before the first point runs: the
  // sweep's points, those the journal holds, and this rank's threads and rough estimate
  // (RunsStart's, with this rank's points).
  std::function<void(const RunsStart&)> start;
};

struct SweepResult {
  std::vector<SweepRun> runs;  // every point in order (on rank 0; empty on the others)
  std::size_t resumed = 0;     // points taken from the journal
  int ranks = 1;
  int threads = 1;            // this rank's threads that ran points
  std::string journal_error;  // the journal could not be written: why (the run went on)
  // For the user (rank 0's): a torn last line of the journal dropped, fewer threads started
  // than planned.
  std::vector<std::string> notes;
};

// Checks every point first (check_points: a bad point is an mfabric::Error on every rank
// before anything runs), then reads the journal (a bad record is an mfabric::Error naming its
// line and field, before anything runs; a torn last line is dropped with a note and cut off the
// file by rank 0). progress(done, total) counts this rank's points.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options, mpi::World& world,
                      const std::function<void(int done, int total)>& progress = {});

}  // namespace mfabric::study
