// Running independent jobs on threads, as compare and sweeps do: the caller's thread works too,
// each job is taken by the next free thread in the order given (put the longest first).
#pragma once

#include <cstddef>
#include <functional>

namespace mfabric::study {

// Threads for `count` jobs: `jobs` if positive, else the machine's cores; at most one per job,
// at least one.
int thread_count(std::size_t count, int jobs);

// Calls work(0), ..., work(count - 1) on thread_count(count, jobs) threads and returns when all
// have returned. `work` must not throw.
void run_in_parallel(std::size_t count, int jobs, const std::function<void(std::size_t)>& work);

}  // namespace mfabric::study
