#include "mpi/world.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#ifdef MFABRIC_HAVE_MPI
#include <mpi.h>
#endif

// Each call below is written once: MPI's when the World was started, then what one rank alone
// gets, which is also every answer of a build without MPI (it never starts a World).
namespace mfabric::mpi {

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

bool built_with_mpi() {
#ifdef MFABRIC_HAVE_MPI
  return true;
#else
  return false;
#endif
}

World::World(Messages messages) : messages_(std::move(messages)) {
  if (!launched_by_mpi()) return;
#ifdef MFABRIC_HAVE_MPI
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("", "mpirun", "MPI failed to start");
  }
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  throw Error("", "mpirun",
              "this mfabric was built without MPI (OpenMPI was not found at build time): " +
                  messages_.without_mpi);
#endif
}

World::~World() {
#ifdef MFABRIC_HAVE_MPI
  if (started_) MPI_Finalize();
#endif
}

int World::count(std::int64_t bytes) const {
  if (bytes < 0 || bytes > std::numeric_limits<int>::max()) throw messages_.too_large(bytes);
  return static_cast<int>(bytes);
}

void World::barrier() {
#ifdef MFABRIC_HAVE_MPI
  if (started_) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

bool World::all(bool ok) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    int mine = ok ? 1 : 0;
    int every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return every != 0;
  }
#endif
  return ok;
}

double World::max(double value) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#endif
  return value;
}

std::int64_t World::sum(std::int64_t value) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    long long mine = value, out = 0;
    MPI_Allreduce(&mine, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
#endif
  return value;
}

std::string World::first_error(const std::string& error) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    int mine = error.empty() ? size_ : rank_;
    int first = size_;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size_) return {};
    int length = first == rank_ ? count(static_cast<std::int64_t>(error.size())) : 0;
    MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
    std::string text = first == rank_ ? error : std::string(static_cast<std::size_t>(length), ' ');
    MPI_Bcast(text.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
    return fmt::format("rank {}: {}", first, text);
  }
#endif
  return error.empty() ? std::string() : fmt::format("rank 0: {}", error);
}

std::vector<std::int64_t> World::broadcast_from_first(std::vector<std::int64_t> values) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    long long n = static_cast<long long>(values.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    values.resize(static_cast<std::size_t>(n));
    static_assert(sizeof(long long) == sizeof(std::int64_t));
    MPI_Bcast(values.data(), count(n), MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  }
#endif
  return values;
}

std::vector<std::string> World::gather(const std::string& text) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    const int length = count(static_cast<std::int64_t>(text.size()));
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
#endif
  return {text};
}

std::vector<std::byte> World::alltoallv(std::span<const std::byte> send,
                                        std::span<const std::int64_t> send_counts,
                                        std::span<const std::int64_t> recv_counts) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    const auto n = static_cast<std::size_t>(size_);
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    std::int64_t send_at = 0, recv_at = 0;
    for (std::size_t r = 0; r < n; ++r) {
      sc[r] = count(send_counts[r]);
      sd[r] = count(send_at);
      rc[r] = count(recv_counts[r]);
      rd[r] = count(recv_at);
      send_at += send_counts[r];
      recv_at += recv_counts[r];
    }
    std::vector<std::byte> recv(static_cast<std::size_t>(recv_at));
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                  MPI_BYTE, MPI_COMM_WORLD);
    return recv;
  }
#endif
  (void)send_counts;
  (void)recv_counts;
  return {send.begin(), send.end()};
}

void World::exchange(std::span<const Receive> receives, std::span<const Send> sends, int tag) {
#ifdef MFABRIC_HAVE_MPI
  if (started_) {
    std::vector<MPI_Request> requests;
    for (const Receive& r : receives) {
      requests.emplace_back();
      MPI_Irecv(r.bytes.data(), count(static_cast<std::int64_t>(r.bytes.size())), MPI_BYTE, r.from,
                tag, MPI_COMM_WORLD, &requests.back());
    }
    for (const Send& s : sends) {
      requests.emplace_back();
      MPI_Isend(s.bytes.data(), count(static_cast<std::int64_t>(s.bytes.size())), MPI_BYTE, s.to,
                tag, MPI_COMM_WORLD, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    return;
  }
#endif
  // Alone, every message is to and from rank 0, and they match in order.
  (void)tag;
  for (std::size_t k = 0; k < receives.size() && k < sends.size(); ++k) {
    const std::size_t n = std::min(receives[k].bytes.size(), sends[k].bytes.size());
    std::copy_n(sends[k].bytes.begin(), n, receives[k].bytes.begin());
  }
}

void World::abort(const std::string& message) {
  std::fputs(fmt::format("mfabric: error: {}\n", message).c_str(), stderr);
  std::fflush(stderr);
#ifdef MFABRIC_HAVE_MPI
  if (started_) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::abort();  // MPI_Abort does not return
}

}  // namespace mfabric::mpi
