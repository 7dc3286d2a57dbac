#include "study/mpi_world.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "core/error.h"

#ifdef MFABRIC_HAVE_MPI
#include <mpi.h>
#endif

namespace mfabric::study {

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int local_ranks() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    const char* v = std::getenv(name);
    if (v == nullptr) continue;
    const int n = std::atoi(v);
    if (n > 0) return n;
  }
  return 1;
}

std::vector<std::vector<std::size_t>> split_over_ranks(const std::vector<std::size_t>& points,
                                                       const std::vector<double>& costs,
                                                       int ranks) {
  if (ranks < 1) throw Error("", "ranks", fmt::format("must be at least 1, got {}", ranks));
  if (costs.size() != points.size()) {
    throw Error("", "costs", fmt::format("expected {} costs, got {}", points.size(), costs.size()));
  }
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(ranks));
  std::vector<double> load(out.size(), 0);
  for (std::size_t i : order) {
    const auto r =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[r].push_back(points[i]);
    load[r] += std::max(0.0, costs[i]);
  }
  for (auto& list : out)
    std::sort(list.begin(), list.end());
  return out;
}

#ifdef MFABRIC_HAVE_MPI

MpiWorld::MpiWorld() {
  if (!launched_by_mpi()) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("", "mpirun", "MPI failed to start");
  }
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  if (initialised_) MPI_Finalize();
}

bool MpiWorld::all(bool ok) {
  if (!initialised_) return ok;
  int mine = ok ? 1 : 0;
  int every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return every != 0;
}

std::vector<std::string> MpiWorld::gather(const std::string& text) {
  if (!initialised_) return {text};
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error("", "mpirun", "a rank's results are over 2 GiB; split the sweep");
  }
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_), 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size(), 0);
  std::string all;
  if (rank_ == 0) {
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank_ != 0) return {};
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

#else

MpiWorld::MpiWorld() {
  if (launched_by_mpi()) {
    throw Error("", "mpirun",
                "this mfabric was built without MPI (OpenMPI was not found at build time): run "
                "the sweep without mpirun, or install libopenmpi-dev (scripts/install-deps.sh) "
                "and rebuild");
  }
}

MpiWorld::~MpiWorld() = default;

bool MpiWorld::all(bool ok) {
  return ok;
}

std::vector<std::string> MpiWorld::gather(const std::string& text) {
  return {text};
}

#endif

}  // namespace mfabric::study
