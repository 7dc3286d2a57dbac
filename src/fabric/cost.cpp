// Bill of materials and pricing; the conventions and formulas are explained in
// docs/cost-model.md.
#include "fabric/cost.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace mfabric::fabric {
namespace {

// The fabric kinds the paper's formulas cover, in the order tables list them.
constexpr const char* kPaperKinds = "fat-tree, rail-optimized, rail-only, topoopt, mfabric";

// ceil(ports / oversubscription). Dividing (rather than multiplying by 1/oversubscription) keeps
// exact quotients exact: 300 / 3.0 is exactly 100, while 300 * (1 / 3.0) may land just above 100
// and round up to 101. The small slack covers ratios that are not exact in binary (e.g. 2.2).
std::int64_t uplinks(std::int64_t down_ports, double oversubscription) {
  const double up = static_cast<double>(down_ports) / oversubscription;
  // Converting a double outside the int64 range is undefined; a ratio so small that the uplink
  // count leaves the range where doubles count exactly (2^53) is an input error, not a count.
  if (!(up <= 9007199254740992.0)) {
    throw Error("", "oversubscription",
                fmt::format("expected a positive down:up ratio such as 1 or 3, got {} (too small: "
                            "{} down ports would need {:g} uplinks)",
                            oversubscription, down_ports, up));
  }
  return static_cast<std::int64_t>(std::ceil(up - 1e-9 * up));
}

void check_price(double value, double max, const char* field) {
  if (!(value >= 0 && value <= max)) {
    throw Error("", field, fmt::format("expected a value in [0, {:g}], got {}", max, value));
  }
}

// Switch ports of a fat-tree whose edge layer has `edge_down` host-facing ports: edge-up =
// ceil(edge-down / oversubscription), aggregation = 2 x edge-up, and (with a core layer) core =
// aggregation. This is the paper's per-layer count, not a port-exact Clos (docs/cost-model.md).
std::int64_t fat_tree_switch_ports(std::int64_t edge_down, double oversubscription, bool core) {
  const std::int64_t edge_up = uplinks(edge_down, oversubscription);
  const std::int64_t aggregation = 2 * edge_up;
  return edge_down + edge_up + aggregation + (core ? aggregation : 0);
}

// Fibres for a set of transceivers: each fibre has one at both ends; an odd count rounds up.
std::int64_t fibres_for(std::int64_t transceivers) {
  return (transceivers + 1) / 2;
}

}  // namespace

const char* to_string(CostConvention c) {
  switch (c) {
    case CostConvention::Built:
      return "built";
    case CostConvention::Paper:
      return "paper";
    case CostConvention::Calculator:
      return "calculator";
  }
  return "?";
}

CostConvention parse_convention(const std::string& text) {
  if (text == "built") return CostConvention::Built;
  if (text == "paper") return CostConvention::Paper;
  if (text == "calculator") return CostConvention::Calculator;
  // No field: callers locate it (the CLI as "--convention", a YAML loader by its key).
  throw Error(fmt::format("unknown cost convention '{}' (known: built, paper, calculator)", text));
}

double CostBreakdown::total() const {
  return nics + transceivers + switch_ports + ocs_ports + patch_panel_ports + fibres;
}

BillOfMaterials count_bill_of_materials(const Topology& topology) {
  BillOfMaterials bom;
  bom.nics = topology.count(NodeKind::Nic);
  for (const Link& link : topology.links()) {
    // NvLink and Pcie links are inside a server; their cost is the server's, not the network's.
    if (link.kind != LinkKind::Cable) continue;
    bom.fibres += 1;
    for (NodeId end : {link.a, link.b}) {
      const Node& node = topology.node(end);
      switch (node.kind) {
        case NodeKind::Nic:
          bom.transceivers += 1;
          break;
        case NodeKind::Switch:
          bom.transceivers += 1;
          bom.switch_ports += 1;
          break;
        case NodeKind::Ocs:
          bom.ocs_ports += 1;  // optical all the way: no transceiver
          break;
        case NodeKind::PatchPanel:
          bom.patch_panel_ports += 1;
          break;
        case NodeKind::Gpu:
        case NodeKind::NvSwitch:
          // There is no price for a cable into a GPU or NVSwitch; under-counting silently would
          // make such a fabric look cheaper than it is.
          throw Error("", "fabric",
                      fmt::format("{}: cable {} - {} ends at a {}, which the cost model cannot "
                                  "price (cables end at NICs, switches, OCSes or patch panels)",
                                  topology.spec(), topology.name(link.a), topology.name(link.b),
                                  to_string(node.kind)));
      }
    }
  }
  return bom;
}

BillOfMaterials paper_bill_of_materials(const std::string& kind, int servers, int nics_per_server,
                                        int alpha, double oversubscription,
                                        CostConvention convention) {
  if (convention == CostConvention::Built) {
    throw Error("", "convention",
                "the built convention counts a built topology (count_bill_of_materials); "
                "paper_bill_of_materials takes the paper or calculator convention");
  }
  if (servers < 1) throw Error("", "servers", fmt::format("must be at least 1, got {}", servers));
  if (nics_per_server < 1) {
    throw Error("", "nics_per_server", fmt::format("must be at least 1, got {}", nics_per_server));
  }
  const std::int64_t nics = std::int64_t{servers} * nics_per_server;
  BillOfMaterials bom;
  bom.nics = nics;

  if (kind == "fat-tree" || kind == "rail-optimized" || kind == "rail-only") {
    // Rail-only has no core layer and, without a spine across rails, no oversubscription knob.
    const bool core = kind != "rail-only";
    const double ratio = core ? oversubscription : 1.0;
    if (!(ratio > 0) || !std::isfinite(ratio)) {
      throw Error("", "oversubscription",
                  fmt::format("expected a positive down:up ratio such as 1 or 3, got {}", ratio));
    }
    bom.switch_ports = fat_tree_switch_ports(nics, ratio, core);
    bom.transceivers = bom.switch_ports + nics;
    bom.fibres = fibres_for(bom.transceivers);
  } else if (kind == "topoopt") {
    bom.transceivers = nics;
    bom.patch_panel_ports = nics;
    bom.fibres = nics;
  } else if (kind == "mfabric") {
    if (alpha < 0 || alpha > nics_per_server) {
      throw Error("", "alpha",
                  fmt::format("expected between 0 and nics_per_server ({}) OCS NICs per server, "
                              "got {}",
                              nics_per_server, alpha));
    }
    const std::int64_t eps_nics = std::int64_t{servers} * (nics_per_server - alpha);
    const std::int64_t ocs_nics = std::int64_t{servers} * alpha;
    // The EPS part is a 1:1 fat-tree over the EPS NICs: 6 switch ports per EPS NIC.
    const std::int64_t eps_switch_ports = fat_tree_switch_ports(eps_nics, 1.0, true);
    // The paper's figures include these ports; the authors' calculator leaves them out.
    bom.switch_ports = convention == CostConvention::Paper ? eps_switch_ports : 0;
    bom.transceivers = bom.switch_ports + nics;
    // Like the calculator, charge an OCS port for every NIC (not only the alpha OCS NICs).
    bom.ocs_ports = nics;
    bom.fibres = fibres_for(eps_switch_ports + eps_nics) + ocs_nics;
  } else {
    throw Error("", "fabric",
                fmt::format("no paper cost formula for fabric kind '{}' (known: {}); use the "
                            "built convention",
                            kind, kPaperKinds));
  }
  return bom;
}

BillOfMaterials bill_of_materials(const Topology& topology, CostConvention convention) {
  if (convention == CostConvention::Built) return count_bill_of_materials(topology);
  const std::string& kind = topology.kind();
  const ClusterSpec& cluster = topology.cluster();
  const int alpha = kind == "mfabric" ? static_cast<int>(topology.param_number("alpha")) : 0;
  // Only fat-tree and rail-optimized take the paper's o; mFabric's EPS is charged 1:1 by the
  // paper's formula even if the builder recorded an oversubscription parameter.
  double oversubscription = 1.0;
  if ((kind == "fat-tree" || kind == "rail-optimized") &&
      topology.params().count("oversubscription") > 0) {
    oversubscription = topology.param_number("oversubscription");
  }
  return paper_bill_of_materials(kind, cluster.servers, cluster.nics_per_server, alpha,
                                 oversubscription, convention);
}

CostBreakdown price(const BillOfMaterials& bom, const LinkPrices& prices, double fibre_length_m) {
  check_price(prices.transceiver, kMaxUnitPriceUsd, "transceiver");
  check_price(prices.nic, kMaxUnitPriceUsd, "nic");
  check_price(prices.switch_port, kMaxUnitPriceUsd, "switch_port");
  check_price(prices.ocs_port, kMaxUnitPriceUsd, "ocs_port");
  check_price(prices.patch_panel_port, kMaxUnitPriceUsd, "patch_panel_port");
  check_price(prices.fibre_per_m, kMaxUnitPriceUsd, "fibre_per_m");
  check_price(fibre_length_m, kMaxFibreLengthM, "fibre_length_m");
  CostBreakdown cost;
  cost.nics = static_cast<double>(bom.nics) * prices.nic;
  cost.transceivers = static_cast<double>(bom.transceivers) * prices.transceiver;
  cost.switch_ports = static_cast<double>(bom.switch_ports) * prices.switch_port;
  cost.ocs_ports = static_cast<double>(bom.ocs_ports) * prices.ocs_port;
  cost.patch_panel_ports = static_cast<double>(bom.patch_panel_ports) * prices.patch_panel_port;
  cost.fibres = static_cast<double>(bom.fibres) * fibre_length_m * prices.fibre_per_m;
  return cost;
}

}  // namespace mfabric::fabric
