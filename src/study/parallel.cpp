#include "study/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace mfabric::study {

int thread_count(std::size_t count, int jobs) {
  const int wanted =
      jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1,
                  static_cast<int>(std::min<std::size_t>(count, static_cast<std::size_t>(wanted))));
}

void run_in_parallel(std::size_t count, int jobs, const std::function<void(std::size_t)>& work) {
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++)
      work(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < thread_count(count, jobs); ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool)
    t.join();
}

}  // namespace mfabric::study
