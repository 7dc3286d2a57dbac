// Running jobs on threads (study/parallel.h): thread counts capped by the machine and the jobs,
// a thread that cannot be started, a job that throws.
#include "study/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace mfabric::study {
namespace {

TEST(ThreadCount, CappedByTheMachineAndTheJobs) {
  const int cores = machine_threads();
  ASSERT_GE(cores, 1);
  // A --jobs of 100,000 (or 600) runs on the machine's threads, not on 100,000 of them.
  EXPECT_EQ(thread_count(1000000, 100000), cores);
  EXPECT_EQ(thread_count(1000000, 600), std::min(600, cores));
  EXPECT_EQ(thread_count(1000000, 0), cores);
  // Never more than the jobs, never fewer than one.
  EXPECT_EQ(thread_count(1, 100000), 1);
  EXPECT_EQ(thread_count(0, 8), 1);
  EXPECT_EQ(thread_count(3, 1), 1);
}

// Starts real threads until `allowed` have started, then fails as std::thread does when the
// process limit is reached.
detail::ThreadStarter failing_after(int allowed) {
  auto started = std::make_shared<int>(0);
  return [started, allowed](std::function<void()> f) {
    if (*started >= allowed) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "cannot start a thread");
    }
    ++*started;
    return std::thread(std::move(f));
  };
}

TEST(RunOnThreads, AThreadThatCannotStartLeavesTheJobsToTheOthers) {
  for (int allowed : {0, 2}) {
    std::vector<int> done(50, 0);
    std::mutex m;
    const ParallelRun run = detail::run_on_threads(
        done.size(), 6,
        [&](std::size_t i) {
          const std::lock_guard<std::mutex> lock(m);
          ++done[i];
        },
        failing_after(allowed));
    EXPECT_EQ(run.planned, 6);
    EXPECT_EQ(run.threads, allowed + 1) << allowed;  // the caller's thread works too
    EXPECT_NE(run.failure.find("cannot start a thread"), std::string::npos) << run.failure;
    EXPECT_EQ(done, std::vector<int>(50, 1)) << allowed;  // every job once
  }
  // All started: no failure.
  const ParallelRun all = detail::run_on_threads(
      4, 3, [](std::size_t) {}, failing_after(100));
  EXPECT_EQ(all.threads, 3);
  EXPECT_TRUE(all.failure.empty());
}

TEST(RunOnThreads, AJobThatThrowsStopsTheRestAndReachesTheCaller) {
  std::atomic<int> ran{0};
  const auto work = [&](std::size_t i) {
    ++ran;
    if (i == 3) throw std::runtime_error("job 3 failed");
  };
  // On threads: every started thread is joined (no std::terminate) and the caller gets it.
  try {
    detail::run_on_threads(1000, 3, work, failing_after(100));
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 3 failed");
  }
  EXPECT_THROW(run_in_parallel(10, 2, work), std::runtime_error);
  // On one thread, no job starts after the failure.
  ran = 0;
  EXPECT_THROW(detail::run_on_threads(1000, 1, work, failing_after(0)), std::runtime_error);
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace mfabric::study
