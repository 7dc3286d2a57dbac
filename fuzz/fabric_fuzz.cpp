// Fabric specs on a small cluster (fabric::build_fabric, fabric/builders.h), then the bill of
// materials in every convention and its price. Input: two lines,
//   servers=16,gpus=8,nics=8,numa=0,link=400G,latency=1us,nvswitch=900GB/s
//   mfabric:alpha=6,region=8
// The first is read with a Spec (every key optional, defaults as above); the second is the fabric
// spec text exactly as --fabric takes it. The input's repeat markers are expanded first
// (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/spec.h"
#include "fabric/builders.h"
#include "fabric/cost.h"
#include "fuzz_support.h"

namespace {

// The builders' own bound is a memory estimate (8 GiB by default), far more than an execution
// can spend; larger clusters are skipped so that an execution stays in milliseconds. Inputs over
// the bound are not run at all.
constexpr int kMaxServers = 256;
constexpr int kMaxPerServer = 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> text = fuzz::expanded_text(data, size);
  if (!text) return -1;
  const auto lines = fuzz::split(*text, "\n", 2);
  if (lines.size() != 2) return -1;

  fabric::ClusterSpec cluster;
  cluster.servers = 16;
  bool too_big = false;
  fuzz::expect_only_mfabric_errors([&] {
    Spec c =
        lines[0].empty() ? Spec("cluster", {}) : Spec::parse("cluster:" + std::string(lines[0]));
    cluster.servers = c.get_int("servers", cluster.servers);
    cluster.gpus_per_server = c.get_int("gpus", cluster.gpus_per_server);
    cluster.nics_per_server = c.get_int("nics", cluster.nics_per_server);
    cluster.numa_nodes = c.get_int("numa", cluster.numa_nodes);
    cluster.link = c.get_rate("link", cluster.link);
    cluster.link_latency = c.get_time("latency", cluster.link_latency);
    cluster.nvswitch = c.get_rate("nvswitch", cluster.nvswitch);
    c.finish({"servers", "gpus", "nics", "numa", "link", "latency", "nvswitch"});
    too_big = cluster.servers > kMaxServers || cluster.gpus_per_server > kMaxPerServer ||
              cluster.nics_per_server > kMaxPerServer;
    if (too_big) return;
    const fabric::Topology t = fabric::build_fabric(std::string(lines[1]), cluster);
    const fabric::PriceBook prices = fabric::PriceBook::paper_defaults();
    double total =
        fabric::price(fabric::count_bill_of_materials(t), fabric::LinkPrices{1, 1, 1, 1, 1, 1}, 1)
            .total();
    for (const auto convention : {fabric::CostConvention::Built, fabric::CostConvention::Paper,
                                  fabric::CostConvention::Calculator}) {
      const fabric::BillOfMaterials bom = fabric::bill_of_materials(t, convention);
      total += fabric::price(bom, prices.at(cluster.link), prices.fibre_length_m()).total();
    }
    volatile double sink = total;
    (void)sink;
  });
  return too_big ? -1 : 0;
}
