#include "runtime/mpi_transport.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.h"

#ifdef MFABRIC_HAVE_MPI
#include <mpi.h>
#endif

namespace mfabric::runtime {
namespace {

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// MPI counts are int: a message over 2 GiB is refused rather than truncated.
[[maybe_unused]] int mpi_count(std::int64_t bytes) {
  if (bytes < 0 || bytes > std::numeric_limits<int>::max()) {
    throw Error("", "runtime",
                fmt::format("a message of {} bytes is over MPI's 2 GiB count: fewer --tokens or "
                            "a smaller --hidden",
                            bytes));
  }
  return static_cast<int>(bytes);
}

}  // namespace

#ifdef MFABRIC_HAVE_MPI

MpiSession::MpiSession() {
  if (!launched_by_mpi()) {
    throw Error("", "mpirun",
                "moe-bench runs on MPI ranks: start it with mpirun -n RANKS mfabric moe-bench ...");
  }
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw Error("", "mpirun", "MPI failed to start");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

void MpiSession::barrier() {
  MPI_Barrier(MPI_COMM_WORLD);
}

double MpiSession::max(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

std::int64_t MpiSession::sum(std::int64_t value) {
  long long mine = value, out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

std::string MpiSession::first_error(const std::string& error) {
  int mine = error.empty() ? size_ : rank_;
  int first = size_;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size_) return {};
  int length = first == rank_ ? mpi_count(static_cast<std::int64_t>(error.size())) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
  std::string text = first == rank_ ? error : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(text.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
  return fmt::format("rank {}: {}", first, text);
}

std::vector<std::int64_t> MpiSession::broadcast_from_first(std::vector<std::int64_t> values) {
  long long count = static_cast<long long>(values.size());
  MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  values.resize(static_cast<std::size_t>(count));
  static_assert(sizeof(long long) == sizeof(std::int64_t));
  MPI_Bcast(values.data(), mpi_count(count), MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return values;
}

void MpiSession::abort(const std::string& message) {
  std::fputs(fmt::format("mfabric: error: {}\n", message).c_str(), stderr);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

std::vector<std::byte> MpiSession::alltoallv(std::span<const std::byte> send,
                                             std::span<const std::int64_t> send_counts,
                                             std::span<const std::int64_t> recv_counts) {
  const auto n = static_cast<std::size_t>(size_);
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  std::int64_t send_at = 0, recv_at = 0;
  for (std::size_t r = 0; r < n; ++r) {
    sc[r] = mpi_count(send_counts[r]);
    sd[r] = mpi_count(send_at);
    rc[r] = mpi_count(recv_counts[r]);
    rd[r] = mpi_count(recv_at);
    send_at += send_counts[r];
    recv_at += recv_counts[r];
  }
  std::vector<std::byte> recv(static_cast<std::size_t>(recv_at));
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                MPI_BYTE, MPI_COMM_WORLD);
  return recv;
}

void MpiTransport::exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                            std::vector<std::vector<std::byte>>& payloads) {
  // Each step its own tag, so that a late message of one step never matches the next step's
  // receive; the plan has at most one message per (from, to) in a step.
  const int tag = step_;
  step_ = (step_ + 1) % 32768;
  const int me = session_.rank();
  std::vector<MPI_Request> requests;
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const Transfer& t = transfers[k];
    const std::int64_t bytes = static_cast<std::int64_t>(t.tokens.size()) * token_bytes;
    if (t.to == me) {
      payloads[k].resize(static_cast<std::size_t>(bytes));
      requests.emplace_back();
      MPI_Irecv(payloads[k].data(), mpi_count(bytes), MPI_BYTE, t.from, tag, MPI_COMM_WORLD,
                &requests.back());
    }
  }
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const Transfer& t = transfers[k];
    if (t.from != me) continue;
    requests.emplace_back();
    MPI_Isend(payloads[k].data(), mpi_count(static_cast<std::int64_t>(payloads[k].size())),
              MPI_BYTE, t.to, tag, MPI_COMM_WORLD, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

#else

MpiSession::MpiSession() {
  throw Error("", "mpirun",
              launched_by_mpi()
                  ? "this mfabric was built without MPI (OpenMPI was not found at build time): "
                    "install libopenmpi-dev (scripts/install-deps.sh) and rebuild"
                  : "moe-bench runs on MPI ranks, and this mfabric was built without MPI: "
                    "install libopenmpi-dev (scripts/install-deps.sh), rebuild, and start it "
                    "with mpirun -n RANKS mfabric moe-bench ...");
}

MpiSession::~MpiSession() = default;
void MpiSession::barrier() {}
double MpiSession::max(double value) {
  return value;
}
std::int64_t MpiSession::sum(std::int64_t value) {
  return value;
}
std::string MpiSession::first_error(const std::string& error) {
  return error;
}
std::vector<std::int64_t> MpiSession::broadcast_from_first(std::vector<std::int64_t> values) {
  return values;
}
void MpiSession::abort(const std::string& message) {
  std::fputs(fmt::format("mfabric: error: {}\n", message).c_str(), stderr);
  std::abort();
}
std::vector<std::byte> MpiSession::alltoallv(std::span<const std::byte>,
                                             std::span<const std::int64_t>,
                                             std::span<const std::int64_t>) {
  return {};
}
void MpiTransport::exchange(std::span<const Transfer>, std::int64_t,
                            std::vector<std::vector<std::byte>>&) {}

#endif

// The answer travels as [generation, server, nic, peer_server, peer_nic, ...]; rank 0's error,
// if any, through first_error, which every rank calls whether or not it failed.
template <typename Ask>
CircuitsInForce BroadcastCircuitSource::shared(Ask ask) {
  std::vector<std::int64_t> wire;
  std::string error;
  if (session_.rank() == 0) {
    try {
      const CircuitsInForce answer = ask(*first_);
      wire.push_back(static_cast<std::int64_t>(answer.generation));
      for (const control::PortCircuit& c : answer.circuits) {
        wire.insert(wire.end(), {c.server, c.nic, c.peer_server, c.peer_nic});
      }
    } catch (const Error& e) {
      error = e.what();
    }
  }
  error = session_.first_error(error);
  if (!error.empty()) throw Error(error);
  wire = session_.broadcast_from_first(std::move(wire));
  CircuitsInForce out;
  if (wire.empty()) return out;
  out.generation = static_cast<std::uint64_t>(wire[0]);
  for (std::size_t k = 1; k + 3 < wire.size(); k += 4) {
    out.circuits.push_back({static_cast<int>(wire[k]), static_cast<int>(wire[k + 1]),
                            static_cast<int>(wire[k + 2]), static_cast<int>(wire[k + 3])});
  }
  return out;
}

CircuitsInForce BroadcastCircuitSource::request(const control::ServerDemand& demand) {
  return shared([&](CircuitSource& source) { return source.request(demand); });
}

CircuitsInForce BroadcastCircuitSource::current() {
  return shared([](CircuitSource& source) { return source.current(); });
}

}  // namespace mfabric::runtime
