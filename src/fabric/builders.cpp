#include "fabric/builders.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mfabric::fabric {

std::vector<std::string> default_comparison_fabrics() {
  return {"fat-tree", "fat-tree:oversubscription=3", "rail-optimized", "rail-only", "topoopt",
          "mfabric"};
}

Topology build_fabric(Spec spec, const ClusterSpec& cluster, std::int64_t max_memory) {
  cluster.validate();
  // Before anything is built: 65,536 servers of 1,024 GPUs and NICs are each in range, but
  // their topology alone would take tens of gigabytes.
  if (const std::int64_t bytes = estimate_topology_bytes(cluster); bytes > max_memory) {
    throw Error("", "",
                fmt::format("the cluster's {} servers x ({} GPUs + {} NICs) make a topology of "
                            "about {} in memory, more than the limit of {} (simulation.max_memory "
                            "or --max-memory); use fewer servers, GPUs or NICs",
                            cluster.servers, cluster.gpus_per_server, cluster.nics_per_server,
                            to_string(Bytes(bytes)), to_string(Bytes(max_memory))));
  }
  const FabricKind& kind = fabric_kinds().at(spec.name()).factory;
  Topology t(spec.name(), spec.to_string(), cluster);
  t.add_servers();
  kind.build(spec, t);
  return t;
}

Topology build_fabric(const std::string& spec_text, const ClusterSpec& cluster,
                      std::int64_t max_memory) {
  return build_fabric(Spec::parse(spec_text), cluster, max_memory);
}

}  // namespace mfabric::fabric
