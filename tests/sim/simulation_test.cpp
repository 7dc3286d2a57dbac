// sim::simulate as a library call: the backend by name, and concurrent runs on threads giving
// the same results as the same runs one after the other (no shared mutable state).
#include "sim/simulation.h"
#include "config/workload_builder.h"
#include "sim/load_experiment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/backends.h"
#include "report/simulation_report.h"

namespace mfabric::sim {
namespace {

const char* const kTraining = R"(
seed: 3
cluster: {servers: 4, link: 200G}
fabric: {kind: fat-tree, radix: 16}
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 4, global_batch: 8, micro_batch: 2, seq: 256}
)";

const char* const kAllReduce = R"(
cluster: {servers: 8, gpus_per_server: 1, nics_per_server: 1, link: 100G}
fabric: fat-tree
workload: {collective: all-reduce, bytes: 64MiB, algorithm: ring}
)";

std::string results(const std::string& yaml) {
  return report::results_json(report::report_of(simulate(parse_experiment(yaml, "t.yaml"))), false)
      .dump();
}

TEST(Simulation, ConcurrentRunsEqualSerialRuns) {
  const std::vector<std::string> inputs = {kTraining, kAllReduce, kTraining, kAllReduce};
  std::vector<std::string> serial;
  for (const auto& y : inputs)
    serial.push_back(results(y));
  std::vector<std::string> parallel(inputs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    threads.emplace_back([&, i] { parallel[i] = results(inputs[i]); });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(parallel, serial);
  EXPECT_EQ(serial[0], serial[2]);
}

TEST(Simulation, BackendIsChosenByName) {
  EXPECT_EQ(net::backends().names(), (std::vector<std::string>{"flow", "packet"}));
  try {
    parse_experiment(std::string(kAllReduce) + "simulation: {backend: fluid}\n", "t.yaml");
    FAIL() << "an unknown backend was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("simulation.backend"), std::string::npos) << what;
    EXPECT_NE(what.find("known: flow, packet"), std::string::npos) << what;
  }
  // The library call checks the name too (an config::Experiment built in code skips the parser).
  config::Experiment e = parse_experiment(kAllReduce, "t.yaml");
  e.backend = "fluid";
  EXPECT_THROW(simulate(e), Error);
  // And both backends run the same job, to the same bytes.
  e.backend = "packet";
  const Simulation packet = simulate(e);
  e.backend = "flow";
  const Simulation flow = simulate(e);
  EXPECT_EQ(packet.result.transfers.bytes_delivered, flow.result.transfers.bytes_delivered);
  EXPECT_EQ(packet.result.transfers.bytes_sent, packet.result.transfers.bytes_delivered);
  ASSERT_TRUE(packet.result.packets.has_value());
  EXPECT_FALSE(flow.result.packets.has_value());
  EXPECT_NEAR(packet.result.mean_iteration_time().seconds(),
              flow.result.mean_iteration_time().seconds(),
              0.1 * flow.result.mean_iteration_time().seconds());
}

TEST(Simulation, MicroBenchmarkAlgorithmOverridesItsCollectiveOnly) {
  const config::Experiment e = parse_experiment(kAllReduce, "t.yaml");
  const collective::AlgorithmChoice a = algorithms_of(e);
  EXPECT_EQ(a.all_reduce, "ring");
  EXPECT_EQ(a.all_to_all, collective::AlgorithmChoice{}.all_to_all);
}

}  // namespace
}  // namespace mfabric::sim

namespace mfabric::sim {
namespace {

TEST(Simulation, ResultsCountEveryByteSentAndDelivered) {
  // 8 GPUs ring all-reduce of 64 MiB: 8 transfers of 2 x 7/8 x 64 MiB each.
  const Simulation run = simulate(parse_experiment(kAllReduce, "t.yaml"));
  const auto j = report::results_json(report::report_of(run), false).at("transfers");
  EXPECT_EQ(j.at("started").get<std::int64_t>(), 8);
  EXPECT_EQ(j.at("delivered").get<std::int64_t>(), 8);
  const std::int64_t per_edge = 2 * 7 * (std::int64_t{64} << 20) / 8;
  EXPECT_EQ(j.at("bytes_sent").get<std::int64_t>(), 8 * per_edge);
  EXPECT_EQ(j.at("bytes_delivered").get<std::int64_t>(), 8 * per_edge);
}

}  // namespace
}  // namespace mfabric::sim

namespace mfabric::sim {
namespace {

// Every example experiment loads, and its fabric and workload build (a renamed field or a
// removed model would otherwise only show when a user runs it).
TEST(Examples, EveryExampleLoadsAndBuilds) {
  // tests/sim/data (which need not exist) -> the project root.
  const std::filesystem::path root =
      std::filesystem::path(MFABRIC_TEST_DATA_DIR).parent_path().parent_path().parent_path() /
      "examples";
  int experiments = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    // Sweep files are not experiments (tests/study/sweep_test.cpp loads them).
    if (entry.path().extension() != ".yaml" || entry.path().filename() == "prices.yaml" ||
        entry.path().parent_path().filename() == "sweeps")
      continue;
    SCOPED_TRACE(entry.path().string());
    const config::Experiment e = load_experiment(entry.path().string());
    EXPECT_NO_THROW(fabric::build_fabric(e.fabric, e.cluster));
    if (e.micro) {
      EXPECT_GT(config::build_workload(e).size(), 0u);
    }
    ++experiments;
  }
  EXPECT_GE(experiments, 8);
}

}  // namespace
}  // namespace mfabric::sim
