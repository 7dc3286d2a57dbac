// The region controller's round trip (docs/runtime.md, "Region controller"): a submit for a
// 64-server region is a read-back (RTRV-PORT-STATUS, RTRV-PATCH), a plan, a diff and the TL1
// commands of the diff, against the OCS emulator on loopback (in process, on its own thread,
// switching in 0 ms, its journal in a temporary directory). The goal is under 1 ms when the
// plan changes little; every changed circuit adds a command round trip and a journal write.
//   mfabric_bench --benchmark_filter=ControllerSubmit
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "control/demand.h"
#include "control/synthetic_demand.h"
#include "controller/region_service.h"
#include "controller/regions_file.h"
#include "core/rng.h"
#include "ocs/ocs_emulator.h"
#include "tl1/tcp_connection.h"
#include "tl1/tl1_client.h"

namespace {

using namespace mfabric;

// An emulator of 384 ports (64 servers x 6 OCS NICs) on a thread, stopped at the end.
class BenchEmulator {
 public:
  BenchEmulator()
      : dir_(std::filesystem::temp_directory_path() /
             ("mfabric_controller_bench_" + std::to_string(::getpid()))),
        emulator_(options(dir_)) {
    thread_ = std::thread([this] { emulator_.run(); });
  }
  ~BenchEmulator() {
    emulator_.request_stop();
    thread_.join();
    std::filesystem::remove_all(dir_);
  }
  const std::string& address() const { return emulator_.address(); }

 private:
  static ocs::OcsEmulatorOptions options(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    ocs::OcsEmulatorOptions o;
    o.ports = 384;
    o.switching = Time::milliseconds(0);
    o.state_file = (dir / "ocs.state").string();
    return o;
  }
  std::filesystem::path dir_;
  ocs::OcsEmulator emulator_;
  std::thread thread_;
};

// Submits alternate between `demands` (one demand again and again: nothing switches).
void submit_loop(benchmark::State& state, int demands) {
  BenchEmulator emulator;
  controller::RegionControllerService controller(
      controller::parse_regions("regions:\n  - {name: r, servers: 64, first_port: 1}\n", "bench"),
      std::make_unique<tl1::Tl1Client>(
          emulator.address(), tl1::Tl1Credentials{ocs::kDefaultUser, ocs::kDefaultPassword}));
  controller.start();
  std::vector<control::ServerDemand> inputs;
  for (int k = 0; k < demands; ++k) {
    Rng rng = Rng(static_cast<std::uint64_t>(k) + 1).derive("controller-bench");
    inputs.push_back(control::synthetic_demand({.servers = 64, .density = 1.0, .skew = 1.0}, rng));
  }
  int layer = 0;
  std::int64_t commands_before = controller.health().commands;
  for (auto _ : state) {
    const auto& demand = inputs[static_cast<std::size_t>(layer) % inputs.size()];
    benchmark::DoNotOptimize(controller.submit("r", layer, 0, demand));
    ++layer;
  }
  state.counters["tl1_commands_per_submit"] =
      benchmark::Counter(static_cast<double>(controller.health().commands - commands_before) /
                         static_cast<double>(std::max<std::int64_t>(state.iterations(), 1)));
}

void ControllerSubmitUnchanged(benchmark::State& state) {
  submit_loop(state, 1);
}
void ControllerSubmitNewPlan(benchmark::State& state) {
  submit_loop(state, 2);
}

BENCHMARK(ControllerSubmitUnchanged)->Unit(benchmark::kMicrosecond);
BENCHMARK(ControllerSubmitNewPlan)->Unit(benchmark::kMicrosecond);

// The emulator's TL1 command rate (docs/performance.md, "Region controller (issue 28)"), items/s
// being commands/s. One at a time: a Tl1Client waiting for each answer, as the controller does.
// Pipelined: a batch of commands written at once on a raw connection, then their answers read.
// The journal is where TMPDIR says (/dev/shm: tmpfs; unset: /tmp on disk): every ENT-PATCH and
// DLT-PATCH waits for its line's fdatasync, RTRV-PATCH writes nothing.
void Tl1RetrievePatchesOneAtATime(benchmark::State& state) {
  BenchEmulator emulator;
  tl1::Tl1Client ocs(emulator.address(),
                     tl1::Tl1Credentials{ocs::kDefaultUser, ocs::kDefaultPassword});
  for (auto _ : state)
    benchmark::DoNotOptimize(ocs.patches());
  state.SetItemsProcessed(state.iterations());
}

void Tl1PatchOneAtATime(benchmark::State& state) {
  BenchEmulator emulator;
  tl1::Tl1Client ocs(emulator.address(),
                     tl1::Tl1Credentials{ocs::kDefaultUser, ocs::kDefaultPassword});
  for (auto _ : state) {
    ocs.connect_ports(1, 2);
    ocs.disconnect_port(1);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

// Writes `commands` at once and reads until every one is answered (a line ";" each).
void send_pipelined(tl1::TcpConnection& connection, const std::string& commands, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  connection.send(commands, deadline);
  int answered = 0;
  std::string tail;
  while (answered < count) {
    tail += connection.receive(1 << 16, deadline);
    std::size_t at = 0;
    while ((at = tail.find("\n;", at)) != std::string::npos) {
      ++answered;
      at += 2;
    }
    // Keep the last bytes: a terminator may be split between two reads.
    tail.erase(0, tail.size() > 1 ? tail.size() - 1 : 0);
  }
}

void tl1_pipelined(benchmark::State& state, bool patch) {
  BenchEmulator emulator;
  auto connection = tl1::TcpConnection::connect(
      emulator.address(), std::chrono::steady_clock::now() + std::chrono::seconds(5));
  send_pipelined(connection, "ACT-USER::admin:1::admin;", 1);
  // 64 commands per batch: the emulator refuses more than 64 waiting for their mirrors.
  constexpr int kBatch = 64;
  std::string batch;
  for (int k = 0; k < kBatch / 2; ++k) {
    const int a = 2 * k + 1;
    batch += patch ? "ENT-PATCH::" + std::to_string(a) + "," + std::to_string(a + 1) + ":" +
                         std::to_string(10 + 2 * k) + ":;"
                   : "RTRV-PATCH:::" + std::to_string(10 + 2 * k) + ":;";
    batch += patch ? "DLT-PATCH::" + std::to_string(a) + ":" + std::to_string(11 + 2 * k) + ":;"
                   : "RTRV-PATCH:::" + std::to_string(11 + 2 * k) + ":;";
  }
  for (auto _ : state)
    send_pipelined(connection, batch, kBatch);
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void Tl1RetrievePatchesPipelined(benchmark::State& state) {
  tl1_pipelined(state, false);
}
void Tl1PatchPipelined(benchmark::State& state) {
  tl1_pipelined(state, true);
}

BENCHMARK(Tl1RetrievePatchesOneAtATime)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Tl1PatchOneAtATime)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Tl1RetrievePatchesPipelined)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Tl1PatchPipelined)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
