// Running independent jobs on threads, as compare and sweeps do: the caller's thread works too,
// each job is taken by the next free thread in the order given (put the longest first).
//
// Thread counts are capped by the machine: a --jobs J larger than its hardware threads gains
// nothing (every job is CPU-bound and may hold gigabytes) and a J of 100,000 would exhaust
// memory or the process limit. A thread that cannot be started (std::system_error: the process
// limit, memory) is not fatal: the jobs run on the threads that did start.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <thread>

namespace mfabric::study {

// The machine's hardware threads (std::thread::hardware_concurrency), 1 when unknown.
int machine_threads();

// Threads for `count` jobs: `jobs` if positive, else machine_threads(); never more than
// machine_threads() nor than `count`; at least 1.
int thread_count(std::size_t count, int jobs);

// What a parallel run used.
struct ParallelRun {
  int threads = 1;      // the threads that ran jobs, the caller's included
  int planned = 1;      // thread_count(count, jobs)
  std::string failure;  // why fewer threads than planned started (empty when all did)
};

// Calls work(0), ..., work(count - 1) on thread_count(count, jobs) threads and returns when all
// have returned. When a thread cannot be started, the jobs run on those that did (at least the
// caller's). If `work` throws, no further job starts, every started thread is joined and the
// first exception is rethrown on the caller's thread.
ParallelRun run_in_parallel(std::size_t count, int jobs,
                            const std::function<void(std::size_t)>& work);

namespace detail {
// Starts one worker thread; tests replace it to make starting fail.
using ThreadStarter = std::function<std::thread(std::function<void()>)>;
// run_in_parallel on exactly `threads` threads (at least 1, the caller's included), each
// started by `start`.
ParallelRun run_on_threads(std::size_t count, int threads,
                           const std::function<void(std::size_t)>& work,
                           const ThreadStarter& start);
}  // namespace detail

}  // namespace mfabric::study
