#include "study/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

namespace mfabric::study {

int machine_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int thread_count(std::size_t count, int jobs) {
  const int wanted = jobs > 0 ? std::min(jobs, machine_threads()) : machine_threads();
  return std::max(1,
                  static_cast<int>(std::min<std::size_t>(count, static_cast<std::size_t>(wanted))));
}

ParallelRun run_in_parallel(std::size_t count, int jobs,
                            const std::function<void(std::size_t)>& work) {
  return detail::run_on_threads(count, thread_count(count, jobs), work,
                                [](std::function<void()> f) { return std::thread(std::move(f)); });
}

namespace detail {

ParallelRun run_on_threads(std::size_t count, int threads,
                           const std::function<void(std::size_t)>& work,
                           const ThreadStarter& start) {
  ParallelRun run;
  run.planned = std::max(1, threads);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto worker = [&] {
    try {
      for (std::size_t i = next++; i < count && !stop; i = next++)
        work(i);
    } catch (...) {
      // No exception may leave a thread (std::terminate): the first is kept for the caller.
      stop = true;
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  // Reserved first: a started thread is never left joinable by a failing push_back.
  pool.reserve(static_cast<std::size_t>(run.planned - 1));
  for (int t = 1; t < run.planned; ++t) {
    try {
      pool.push_back(start(worker));
    } catch (const std::exception& e) {
      // std::system_error (the process limit) or std::bad_alloc (no memory for a stack): the
      // threads started so far, and the caller's, take every job.
      run.failure = e.what();
      break;
    }
  }
  run.threads = static_cast<int>(pool.size()) + 1;
  worker();
  for (std::thread& t : pool)
    t.join();
  if (failure) std::rethrow_exception(failure);
  return run;
}

}  // namespace detail

}  // namespace mfabric::study
