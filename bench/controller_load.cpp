// A load test of the region controller (docs/performance.md, "Region controller (issue 28)"): an
// OCS emulator (0 ms switching, its journal in --state-dir) and a controller with its gRPC API,
// both in this process on loopback, and --clients threads, each with its own gRPC channel (its own
// TCP connection), calling the API for --seconds. Client k works on region k mod --regions, so
// with more clients than regions several clients submit to the same region at once. Each client
// repeats: SubmitDemand of the next of its region's two demands, SubmitDemand of the same demand
// again, GetCircuits. A submit counts as "new plan" when the generation it answers differs from
// the one the client saw last (its circuits changed), "in force" otherwise.
//
// Prints requests/s and latency percentiles (p50, p99, max) per kind of call, and stops by itself.
//   mfabric_controller_load --clients 8 --regions 4 --servers 16 --seconds 10 --state-dir /dev/shm
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "control/demand.h"
#include "control/synthetic_demand.h"
#include "controller/controller.grpc.pb.h"
#include "controller/controller_rpc.h"
#include "controller/region_service.h"
#include "controller/regions_file.h"
#include "core/rng.h"
#include "ocs/ocs_emulator.h"
#include "tl1/tl1_client.h"

namespace {

using namespace mfabric;
namespace api = mfabric::controller;
using Clock = std::chrono::steady_clock;

struct LoadOptions {
  int clients = 8;
  int regions = 4;
  int servers = 16;  // per region, 6 OCS NICs each
  double seconds = 10;
  std::string state_dir = "/dev/shm";
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "%s\nusage: mfabric_controller_load [--clients N] [--regions N] [--servers N] "
               "[--seconds S] [--state-dir DIR]\n",
               problem.c_str());
  std::exit(2);
}

LoadOptions parse(int argc, char** argv) {
  LoadOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + ": expected a value");
    const std::string value = argv[++i];
    try {
      if (flag == "--clients") {
        o.clients = std::stoi(value);
      } else if (flag == "--regions") {
        o.regions = std::stoi(value);
      } else if (flag == "--servers") {
        o.servers = std::stoi(value);
      } else if (flag == "--seconds") {
        o.seconds = std::stod(value);
      } else if (flag == "--state-dir") {
        o.state_dir = value;
      } else {
        usage("unknown option " + flag);
      }
    } catch (const std::logic_error&) {
      usage(flag + ": not a number: " + value);
    }
  }
  // Bounded on purpose: at most 64 connections, a minute, the 64-server regions of the paper.
  if (o.clients < 1 || o.clients > 64) usage("--clients: 1 to 64");
  if (o.regions < 1 || o.regions > 16) usage("--regions: 1 to 16");
  if (o.servers < 2 || o.servers > 64) usage("--servers: 2 to 64");
  if (!(o.seconds > 0 && o.seconds <= 60)) usage("--seconds: more than 0, at most 60");
  return o;
}

constexpr int kOcsNicsPerServer = 6;
constexpr const char* kToken = "controller-load-test-token-0123456789";

std::string region_name(int r) {
  return "r" + std::to_string(r);
}

api::DemandRequest demand_request(int region, int servers, std::uint64_t seed) {
  Rng rng = Rng(seed).derive("controller-load");
  const control::ServerDemand demand =
      control::synthetic_demand({.servers = servers, .density = 1.0, .skew = 1.0}, rng);
  api::DemandRequest request;
  request.set_region(region_name(region));
  request.set_servers(servers);
  for (int i = 0; i < servers; ++i) {
    for (int j = 0; j < servers; ++j)
      request.add_bytes(demand.at(i, j));
  }
  return request;
}

enum Kind { kSubmitNewPlan, kSubmitInForce, kGetCircuits, kKinds };
const char* const kKindNames[kKinds] = {"SubmitDemand, new plan", "SubmitDemand, in force",
                                        "GetCircuits"};

struct ClientRecord {
  std::vector<double> micros[kKinds];
  std::int64_t failures = 0;
  std::string first_failure;
};

void run_client(const std::string& address, int region,
                const std::vector<api::DemandRequest>& demands, Clock::time_point end, int client,
                ClientRecord& record) {
  // A channel argument of its own keeps gRPC from sharing one connection among the clients.
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  arguments.SetInt("mfabric.load_client", client);
  auto stub = api::RegionController::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments));
  auto context = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    c->AddMetadata("authorization", std::string("Bearer ") + kToken);
    return c;
  };
  auto timed = [&](auto&& call) {
    const auto start = Clock::now();
    const grpc::Status status = call();
    const double micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!status.ok()) {
      if (record.failures++ == 0) record.first_failure = status.error_message();
    }
    return std::make_pair(status.ok(), micros);
  };
  std::int64_t generation = -1;
  for (std::size_t cycle = static_cast<std::size_t>(client); Clock::now() < end; ++cycle) {
    api::DemandRequest request = demands[cycle % demands.size()];
    request.set_layer(static_cast<int>(cycle));
    for (int again = 0; again < 2; ++again) {
      api::Circuits circuits;
      const auto [ok, micros] =
          timed([&] { return stub->SubmitDemand(context().get(), request, &circuits); });
      if (!ok) continue;
      record.micros[circuits.generation() != generation ? kSubmitNewPlan : kSubmitInForce]
          .push_back(micros);
      generation = circuits.generation();
    }
    api::CircuitsRequest circuits_request;
    circuits_request.set_region(region_name(region));
    api::Circuits circuits;
    const auto [ok, micros] =
        timed([&] { return stub->GetCircuits(context().get(), circuits_request, &circuits); });
    if (ok) {
      record.micros[kGetCircuits].push_back(micros);
      generation = circuits.generation();
    }
  }
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

int run(const LoadOptions& o) {
  const std::filesystem::path dir = std::filesystem::path(o.state_dir) /
                                    ("mfabric_controller_load_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ocs::OcsEmulatorOptions emulator_options;
  emulator_options.ports = o.regions * o.servers * kOcsNicsPerServer;
  emulator_options.switching = Time::milliseconds(0);
  emulator_options.state_file = (dir / "ocs.state").string();
  // Stops by itself even if this program hangs.
  emulator_options.run_for =
      Time::milliseconds(static_cast<std::int64_t>(o.seconds * 1000) + 120'000);
  ocs::OcsEmulator emulator(emulator_options);
  std::thread emulator_thread([&] { emulator.run(); });

  std::string regions_yaml = "regions:\n";
  for (int r = 0; r < o.regions; ++r) {
    regions_yaml += "  - {name: " + region_name(r) + ", servers: " + std::to_string(o.servers) +
                    ", first_port: " + std::to_string(1 + r * o.servers * kOcsNicsPerServer) +
                    "}\n";
  }
  int exit_code = 0;
  {
    controller::RegionControllerService controller(
        controller::parse_regions(regions_yaml, "load"),
        std::make_unique<tl1::Tl1Client>(
            emulator.address(), tl1::Tl1Credentials{ocs::kDefaultUser, ocs::kDefaultPassword}));
    controller.start();
    controller::ControllerRpcServer server(controller, "127.0.0.1:0",
                                           controller::ControllerAuth{kToken, "", "", ""});

    std::vector<std::vector<api::DemandRequest>> demands(static_cast<std::size_t>(o.regions));
    for (int r = 0; r < o.regions; ++r) {
      for (std::uint64_t d = 0; d < 2; ++d) {
        demands[static_cast<std::size_t>(r)].push_back(
            demand_request(r, o.servers, static_cast<std::uint64_t>(r) * 2 + d + 1));
      }
    }
    std::vector<ClientRecord> records(static_cast<std::size_t>(o.clients));
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(o.seconds));
    std::vector<std::thread> clients;
    for (int k = 0; k < o.clients; ++k) {
      const int region = k % o.regions;
      clients.emplace_back([&, k, region] {
        run_client(server.address(), region, demands[static_cast<std::size_t>(region)], end, k,
                   records[static_cast<std::size_t>(k)]);
      });
    }
    for (auto& t : clients)
      t.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const controller::ControllerHealth health = controller.health();
    server.shutdown();

    std::printf(
        "controller load: %d clients, %d regions of %d servers (%d OCS ports), %.1f s, "
        "journal in %s\n",
        o.clients, o.regions, o.servers, emulator_options.ports, elapsed, o.state_dir.c_str());
    std::printf("%-24s %9s %10s %10s %10s %10s\n", "call", "requests", "per s", "p50 ms", "p99 ms",
                "max ms");
    std::int64_t total = 0;
    std::int64_t failures = 0;
    for (int kind = 0; kind < kKinds; ++kind) {
      std::vector<double> all;
      for (const auto& r : records) {
        all.insert(all.end(), r.micros[kind].begin(), r.micros[kind].end());
      }
      std::sort(all.begin(), all.end());
      total += static_cast<std::int64_t>(all.size());
      std::printf("%-24s %9zu %10.1f %10.3f %10.3f %10.3f\n", kKindNames[kind], all.size(),
                  static_cast<double>(all.size()) / elapsed, percentile(all, 0.50) / 1000,
                  percentile(all, 0.99) / 1000, all.empty() ? 0.0 : all.back() / 1000);
    }
    for (const auto& r : records) {
      if (r.failures > 0 && failures == 0) {
        std::printf("first failure: %s\n", r.first_failure.c_str());
      }
      failures += r.failures;
    }
    std::printf(
        "all calls: %lld in %.1f s, %.1f/s; failed: %lld; TL1 changes: %lld, "
        "reconfigurations: %lld\n",
        static_cast<long long>(total), elapsed, static_cast<double>(total) / elapsed,
        static_cast<long long>(failures), static_cast<long long>(health.commands),
        static_cast<long long>(health.reconfigurations));
    if (failures > 0) exit_code = 1;
  }
  emulator.request_stop();
  emulator_thread.join();
  std::filesystem::remove_all(dir);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mfabric_controller_load: %s\n", e.what());
    return 1;
  }
}
