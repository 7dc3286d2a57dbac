// A fabric kind registered by a test, the way docs/architecture.md ("Adding a fabric kind") adds
// one: a FabricKind (parameters, traits, builder, paper formula) plus one registry line. Nothing
// else changes, and topology, cost and simulate all work on it.
#include <gtest/gtest.h>

#include <string>

#include "collective/lowering.h"
#include "config/experiment.h"
#include "core/error.h"
#include "fabric/builders.h"
#include "fabric/cost.h"
#include "fabric/fabric_kinds.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

using fabric::BillOfMaterials;
using fabric::CostConvention;
using fabric::FabricKind;
using fabric::NodeId;
using fabric::NodeKind;
using fabric::Topology;

// "star": every NIC on one electrical crossbar as large as it needs to be. Parameter `latency`,
// the crossbar's cable latency (default: the cluster's link latency).
FabricKind star_kind(const std::string& all_to_all = "direct") {
  FabricKind kind;
  kind.params = {{"latency", "the cluster's link latency", "latency of every cable, e.g. 2us"}};
  kind.traits.label = "star";
  kind.traits.all_to_all = all_to_all;
  kind.build = [](Spec& spec, Topology& t) {
    const fabric::ClusterSpec& c = t.cluster();
    const Time latency = spec.get_time("latency", c.link_latency);
    spec.finish({"latency"});
    if (latency < Time::zero()) throw Error("", "latency", "must not be negative");
    t.set_param("latency", to_string(latency));
    const NodeId crossbar = t.add_node(
        {.kind = NodeKind::Switch, .tier = 1, .group = 0, .radix = c.servers * c.nics_per_server});
    for (int s = 0; s < c.servers; ++s) {
      for (int j = 0; j < c.nics_per_server; ++j) {
        t.set_nic_role(t.nic(s, j), fabric::NicRole::Eps);
        t.add_link(t.nic(s, j), crossbar, c.link, latency, fabric::LinkKind::Cable);
      }
    }
    t.set_tiers(1);
  };
  // By the paper's way of counting: a switch port, two transceivers and a fibre per NIC.
  kind.paper_formula = [](const fabric::PaperCostInputs& in, CostConvention) {
    const std::int64_t nics = std::int64_t{in.servers} * in.nics_per_server;
    return BillOfMaterials{
        .nics = nics, .transceivers = 2 * nics, .switch_ports = nics, .fibres = nics};
  };
  return kind;
}

class ToyFabricKind : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The registry line. Tests in one process (the sanitizer build's shards) register it once.
    if (!fabric::fabric_kinds().contains("star"))
      fabric::fabric_kinds().add({"star", "every NIC on one crossbar switch", star_kind()});
    if (!fabric::fabric_kinds().contains("star-pxn"))
      fabric::fabric_kinds().add({"star-pxn", "the star, with PXN all-to-alls", star_kind("pxn")});
  }
};

fabric::ClusterSpec cluster(int servers, int gpus, int nics) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  c.link = Rate::gbps(100);
  return c;
}

TEST_F(ToyFabricKind, BuildsItsTopologyAndChecksItsParameters) {
  const Topology t = fabric::build_fabric("star:latency=2us", cluster(4, 2, 2));
  EXPECT_EQ(t.kind(), "star");
  EXPECT_EQ(t.spec(), "star:latency=2us");
  EXPECT_EQ(t.params().at("latency"), "2us");
  EXPECT_EQ(t.tiers(), 1);
  int switches = 0, cables = 0;
  for (const auto& n : t.nodes())
    switches += n.kind == NodeKind::Switch ? 1 : 0;
  for (const auto& l : t.links()) {
    if (l.kind != fabric::LinkKind::Cable) continue;
    ++cables;
    EXPECT_EQ(l.latency, Time::microseconds(2));
  }
  EXPECT_EQ(switches, 1);
  EXPECT_EQ(cables, 8);
  // Its own checks, and the unknown parameter that Spec::finish refuses, name the parameter.
  try {
    fabric::build_fabric("star:radix=4", cluster(4, 2, 2));
    FAIL() << "an unknown parameter was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("radix"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fabric::build_fabric("star:latency=-1us", cluster(4, 2, 2)), Error);
  // Traits come from the kind; a kind without a controller, not reconfigurable.
  EXPECT_EQ(fabric::traits_of(t).label, "star");
  EXPECT_FALSE(fabric::traits_of(t).reconfigurable);
  EXPECT_TRUE(fabric::traits_of(t).controller.empty());
}

TEST_F(ToyFabricKind, CostsItsBuiltTopologyAndItsPaperFormula) {
  const Topology t = fabric::build_fabric("star", cluster(4, 2, 2));
  // Built: per cable a fibre, a NIC and a transceiver at the NIC, a switch port and a
  // transceiver at the crossbar: 8 cables.
  EXPECT_EQ(fabric::bill_of_materials(t, CostConvention::Built),
            (BillOfMaterials{.nics = 8, .transceivers = 16, .switch_ports = 8, .fibres = 8}));
  // Paper: the kind's own formula, through the same entry point as the built-in kinds'.
  EXPECT_EQ(fabric::bill_of_materials(t, CostConvention::Paper),
            (BillOfMaterials{.nics = 8, .transceivers = 16, .switch_ports = 8, .fibres = 8}));
  EXPECT_EQ(fabric::paper_bill_of_materials("star", 10, 4, 0, 1, CostConvention::Paper).fibres, 40);
  const fabric::PriceBook prices = fabric::PriceBook::paper_defaults();
  const fabric::CostBreakdown cost = fabric::network_cost(t, CostConvention::Built, prices);
  const fabric::LinkPrices& p = prices.at(Rate::gbps(100));
  EXPECT_DOUBLE_EQ(cost.total(), 8 * p.nic + 16 * p.transceiver + 8 * p.switch_port +
                                     8 * prices.fibre_length_m() * p.fibre_per_m);
}

// One switch joining every NIC is one network, whoever builds it: the star and a fat-tree small
// enough for a single leaf give the same run, byte for byte. And the ring all-reduce's time is
// the formula's: 2 (n-1)/n S / B plus the ring's 2 (n-1) steps of two 1 us hops.
TEST_F(ToyFabricKind, SimulatesLikeTheSameSwitchBuiltAsAFatTree) {
  const std::string job = R"(
cluster: {servers: 8, gpus_per_server: 1, nics_per_server: 1, link: 100G}
workload: {collective: all-reduce, bytes: 64MiB, algorithm: ring}
)";
  const Simulation star = simulate(parse_experiment(job + "fabric: star\n", "star.yaml"));
  const Simulation fat_tree =
      simulate(parse_experiment(job + "fabric: {kind: fat-tree, radix: 16}\n", "ft.yaml"));
  ASSERT_EQ(fat_tree.topology.tiers(), 1);
  const Time t = star.result.mean_iteration_time();
  EXPECT_EQ(t, fat_tree.result.mean_iteration_time());
  const double bytes = 2.0 * 7.0 / 8.0 * 64.0 * 1024 * 1024;
  const double expected_s = bytes * 8 / 100e9;
  EXPECT_NEAR(t.seconds(), expected_s, 2 * 7 * 2e-6 + 1e-6) << t.seconds();
  EXPECT_FALSE(star.control.has_value());
  EXPECT_FALSE(star.topoopt.has_value());
}

// The kind's traits, not its name, pick what `all_to_all: auto` lowers to.
TEST_F(ToyFabricKind, ItsTraitsPickTheAllToAll) {
  const std::string job = R"(
cluster: {servers: 4, gpus_per_server: 4, nics_per_server: 4, link: 100G}
workload: {collective: all-to-all, bytes: 16MiB}
)";
  const auto time_of = [&](const std::string& fabric, const std::string& algorithm) {
    std::string yaml = job + "fabric: " + fabric + "\n";
    if (!algorithm.empty()) yaml += "simulation: {algorithms: {all_to_all: " + algorithm + "}}\n";
    return simulate(parse_experiment(yaml, "t.yaml")).result.mean_iteration_time();
  };
  EXPECT_EQ(time_of("star-pxn", ""), time_of("star-pxn", "pxn"));
  EXPECT_EQ(time_of("star", ""), time_of("star", "direct"));
  EXPECT_NE(time_of("star-pxn", ""), time_of("star", ""));
}

}  // namespace
}  // namespace mfabric::sim
