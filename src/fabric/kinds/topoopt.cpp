#include "fabric/kinds/topoopt.h"

#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"

namespace mfabric::fabric::kinds {
namespace {

void build_topoopt(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  spec.finish(param_names(params));
  const ClusterSpec& c = t.cluster();
  const NodeId panel = t.add_node(
      Node{.kind = NodeKind::PatchPanel, .index = 0, .radix = c.servers * c.nics_per_server});
  for (int s = 0; s < c.servers; ++s) {
    for (int j = 0; j < c.nics_per_server; ++j) {
      t.set_nic_role(t.nic(s, j), NicRole::PatchPanel);
      detail::add_cable(t, t.nic(s, j), panel);
    }
  }
  t.set_circuit_degree(c.nics_per_server);
  t.set_tiers(0);
  // Not a parameter (TopoOpt has none); recorded so that reports show the circuit degree.
  t.set_param("degree", param_text(c.nics_per_server));
}

}  // namespace

FabricKind topoopt_kind() {
  FabricKind kind;
  kind.traits.controller = "topoopt";
  kind.traits.label = "TopoOpt";
  kind.traits.host_forwarding = true;
  kind.build = [](Spec& spec, Topology& t) { build_topoopt(spec, {}, t); };
  // One NIC, transceiver, patch-panel port and fibre per NIC.
  kind.paper_formula = [](const PaperCostInputs& in, CostConvention) {
    const std::int64_t nics = std::int64_t{in.servers} * in.nics_per_server;
    BillOfMaterials bom;
    bom.nics = nics;
    bom.transceivers = nics;
    bom.patch_panel_ports = nics;
    bom.fibres = nics;
    return bom;
  };
  return kind;
}

}  // namespace mfabric::fabric::kinds
