// Bill of materials and pricing; the conventions and formulas are explained in
// docs/cost-model.md.
#include "fabric/cost.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "fabric/fabric_kinds.h"
#include "fabric/ocs_params.h"

namespace mfabric::fabric {
namespace {

void check_price(double value, double max, const char* field) {
  if (!(value >= 0 && value <= max)) {
    throw Error("", field, fmt::format("expected a value in [0, {:g}], got {}", max, value));
  }
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

CostBreakdown& CostBreakdown::operator+=(const CostBreakdown& o) {
  nics += o.nics;
  transceivers += o.transceivers;
  switch_ports += o.switch_ports;
  ocs_ports += o.ocs_ports;
  patch_panel_ports += o.patch_panel_ports;
  fibres += o.fibres;
  return *this;
}

double CostBreakdown::total() const {
  return nics + transceivers + switch_ports + ocs_ports + patch_panel_ports + fibres;
}

BillOfMaterials count_bill_of_materials(const Topology& topology) {
  return bill_of_materials(topology, CostConvention::Built);
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
  const FabricKind* fabric = find_fabric_kind(kind);
  if (!fabric || !fabric->paper_formula) {
    std::string known;
    for (const auto& e : fabric_kinds().entries()) {
      if (e.factory.paper_formula) known += (known.empty() ? "" : ", ") + e.name;
    }
    throw Error("", "fabric",
                fmt::format("no paper cost formula for fabric kind '{}' (known: {}); use the "
                            "built convention",
                            kind, known));
  }
  return fabric->paper_formula({servers, nics_per_server, alpha, oversubscription}, convention);
}

namespace {

BillOfMaterials& operator+=(BillOfMaterials& a, const BillOfMaterials& b) {
  a.nics += b.nics;
  a.transceivers += b.transceivers;
  a.switch_ports += b.switch_ports;
  a.ocs_ports += b.ocs_ports;
  a.patch_panel_ports += b.patch_panel_ports;
  a.fibres += b.fibres;
  return a;
}

// Adds `bom` to the part at `rate`, keeping the parts in order of first appearance.
void add_part(std::vector<RatedBill>& parts, Rate rate, const BillOfMaterials& bom) {
  for (RatedBill& p : parts) {
    if (p.rate == rate) {
      p.bom += bom;
      return;
    }
  }
  parts.push_back({rate, bom});
}

bool co_packaged(const Topology& t) {
  return t.ocs() != nullptr && t.ocs()->optics == OcsOptics::CoPackaged;
}

std::vector<RatedBill> built_bills(const Topology& topology) {
  std::vector<RatedBill> parts;
  const bool cpo = co_packaged(topology);
  for (const Link& link : topology.links()) {
    if (link.kind != LinkKind::Cable) continue;
    BillOfMaterials bom;
    bom.fibres = 1;
    for (NodeId end : {link.a, link.b}) {
      const Node& node = topology.node(end);
      switch (node.kind) {
        case NodeKind::Nic:
          // A co-packaged optical engine stands for both the NIC and its transceiver.
          bom.transceivers += 1;
          if (!(cpo && node.role == NicRole::Ocs)) bom.nics += 1;
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
    add_part(parts, link.rate, bom);
  }
  // NICs without a cable (none in the built-in fabrics) still cost a NIC.
  for (NodeId id = 0; id < static_cast<NodeId>(topology.nodes().size()); ++id) {
    if (topology.node(id).kind != NodeKind::Nic) continue;
    bool cabled = false;
    for (LinkId l : topology.links_of(id))
      cabled = cabled || topology.link(l).kind == LinkKind::Cable;
    if (!cabled) add_part(parts, topology.nic_rate(id), BillOfMaterials{.nics = 1});
  }
  return parts;
}

// The paper's formulas for a built topology, by its kind: the kind's own split by rate, or its
// formula over the cluster at the cluster's link rate.
std::vector<RatedBill> paper_bills(const Topology& topology, CostConvention convention) {
  const FabricKind* kind = kind_of(topology);
  if (kind && kind->paper_bills) {
    std::vector<RatedBill> parts;
    for (const RatedBill& p : kind->paper_bills(topology, convention))
      add_part(parts, p.rate, p.bom);
    return parts;
  }
  const ClusterSpec& cluster = topology.cluster();
  // The oversubscription a kind records (fat-tree, rail-optimized) is the paper's o.
  const double oversubscription = topology.params().count("oversubscription") > 0
                                      ? topology.param_number("oversubscription")
                                      : 1.0;
  return {{cluster.link,
           paper_bill_of_materials(topology.kind(), cluster.servers, cluster.nics_per_server,
                                   /*alpha=*/0, oversubscription, convention)}};
}

}  // namespace

std::vector<RatedBill> bills_by_rate(const Topology& topology, CostConvention convention) {
  std::vector<RatedBill> parts = convention == CostConvention::Built
                                     ? built_bills(topology)
                                     : paper_bills(topology, convention);
  const FabricKind* kind = kind_of(topology);
  if (convention == CostConvention::Built && kind && kind->scale_built_count) {
    for (RatedBill& p : parts) {
      for (std::int64_t BillOfMaterials::*m :
           {&BillOfMaterials::nics, &BillOfMaterials::transceivers, &BillOfMaterials::switch_ports,
            &BillOfMaterials::ocs_ports, &BillOfMaterials::patch_panel_ports,
            &BillOfMaterials::fibres}) {
        p.bom.*m = kind->scale_built_count(p.bom.*m, topology);
      }
    }
  }
  return parts;
}

BillOfMaterials total_bill(const std::vector<RatedBill>& parts) {
  BillOfMaterials total;
  for (const RatedBill& p : parts)
    total += p.bom;
  return total;
}

BillOfMaterials bill_of_materials(const Topology& topology, CostConvention convention) {
  return total_bill(bills_by_rate(topology, convention));
}

CostBreakdown price_parts(const std::vector<RatedBill>& parts, const PriceBook& prices) {
  CostBreakdown total;
  for (const RatedBill& p : parts)
    total += price(p.bom, prices.price_at(p.rate), prices.fibre_length_m());
  return total;
}

CostBreakdown network_cost(const Topology& topology, CostConvention convention,
                           const PriceBook& prices) {
  return price_parts(bills_by_rate(topology, convention), prices);
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
