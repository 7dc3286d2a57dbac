#include "runtime/mpi_transport.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace mfabric::runtime {

mpi::World moe_bench_world() {
  if (!mpi::launched_by_mpi()) {
    throw Error("", "mpirun",
                mpi::built_with_mpi() ? "moe-bench runs on MPI ranks: start it with mpirun -n "
                                        "RANKS mfabric "
                                        "moe-bench ..."
                                      : "moe-bench runs on MPI ranks, and this mfabric was built "
                                        "without MPI: "
                                        "install libopenmpi-dev (scripts/install-deps.sh), "
                                        "rebuild, and start it "
                                        "with mpirun -n RANKS mfabric moe-bench ...");
  }
  return mpi::World(
      {"install libopenmpi-dev (scripts/install-deps.sh) and rebuild", [](std::int64_t bytes) {
         return Error("", "runtime",
                      fmt::format("a message of {} bytes is over MPI's 2 GiB count: "
                                  "fewer --tokens or a smaller --hidden",
                                  bytes));
       }});
}

void MpiTransport::exchange(std::span<const Transfer> transfers, std::int64_t token_bytes,
                            std::vector<std::vector<std::byte>>& payloads) {
  // Each step its own tag, so that a late message of one step never matches the
  // next step's receive; the plan has at most one message per (from, to) in a
  // step.
  const int tag = step_;
  step_ = (step_ + 1) % 32768;
  const int me = world_.rank();
  std::vector<mpi::World::Receive> receives;
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const Transfer& t = transfers[k];
    if (t.to != me) continue;
    const std::int64_t bytes = static_cast<std::int64_t>(t.tokens.size()) * token_bytes;
    payloads[k].resize(static_cast<std::size_t>(bytes));
    receives.push_back({t.from, payloads[k]});
  }
  std::vector<mpi::World::Send> sends;
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const Transfer& t = transfers[k];
    if (t.from == me) sends.push_back({t.to, payloads[k]});
  }
  world_.exchange(receives, sends, tag);
}

// The answer travels as [generation, server, nic, peer_server, peer_nic, ...];
// rank 0's error, if any, through first_error, which every rank calls whether
// or not it failed.
template <typename Ask>
CircuitsInForce BroadcastCircuitSource::shared(Ask ask) {
  std::vector<std::int64_t> wire;
  std::string error;
  if (world_.rank() == 0) {
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
  error = world_.first_error(error);
  if (!error.empty()) throw Error(error);
  wire = world_.broadcast_from_first(std::move(wire));
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
