// Size checks of experiment loading (issue 24): the network's memory is estimated from the
// cluster before the fabric is built, against simulation.max_memory or the caller's override.
#include <gtest/gtest.h>

#include <string>

#include "config/experiment.h"
#include "core/error.h"
#include "fabric/topology.h"

namespace mfabric::config {
namespace {

const std::string kJob =
    "cluster: {servers: 1024}\nworkload: {collective: all-reduce, bytes: 1MiB, group: "
    "per-server}\n";

TEST(ExperimentLimits, TheNetworkIsEstimatedBeforeTheFabricIsBuilt) {
  fabric::ClusterSpec c;
  c.servers = 1024;
  const double network =
      kNetworkBytesPerTopologyByte * static_cast<double>(fabric::estimate_topology_bytes(c));
  // 1024 servers of 8 GPUs and 8 NICs: about 36 MB of network by the estimate.
  EXPECT_GT(network, 20e6);
  EXPECT_LT(network, 60e6);
  try {
    read_experiment(kJob + "simulation: {max_memory: 16MiB}\n", "e.yaml");
    ADD_FAILURE() << "expected the network estimate to be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.max_memory");
    EXPECT_NE(e.message().find("simulating the cluster's 1024 servers x (8 GPUs + 8 NICs) needs "
                               "about"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(read_experiment(kJob, "e.yaml"));
}

TEST(ExperimentLimits, ACallersLimitReplacesTheFilesBeforeTheChecks) {
  // simulate --max-memory: raises the file's limit for the size checks, and lowers it.
  EXPECT_NO_THROW(
      read_experiment(kJob + "simulation: {max_memory: 16MiB}\n", "e.yaml", Bytes::gib(1)));
  EXPECT_THROW(read_experiment(kJob, "e.yaml", Bytes::mib(16)), Error);
}

TEST(ExperimentLimits, NameAndDescriptionAreText) {
  EXPECT_THROW(read_experiment("name: {a: 1}\n" + kJob, "e.yaml"), Error);
  EXPECT_THROW(read_experiment("description: [x]\n" + kJob, "e.yaml"), Error);
  EXPECT_NO_THROW(read_experiment("name: a job\ndescription: two words\n" + kJob, "e.yaml"));
}

}  // namespace
}  // namespace mfabric::config
