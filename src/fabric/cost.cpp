// Bill of materials and pricing; the conventions and formulas are explained in
// docs/cost-model.md.
#include "fabric/cost.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "fabric/ocs_params.h"

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

// An mFabric topology's optical parameters; mfabric::Error naming alpha for one built without
// them.
const OcsParams& ocs_of(const Topology& t) {
  if (t.ocs() == nullptr) {
    throw Error("", "alpha",
                fmt::format("fabric {} has no OCS parameters (alpha, links, optics)", t.spec()));
  }
  return *t.ocs();
}

bool co_packaged(const Topology& t) {
  return t.ocs() != nullptr && t.ocs()->optics == OcsOptics::CoPackaged;
}

// NVL72-style domains: the cluster's servers hold the GPUs the job uses; the scale-out ports of
// the spare GPUs of each domain are charged in proportion (docs/cost-model.md).
std::int64_t scale_to_domain(std::int64_t count, const Topology& t) {
  if (t.kind() != "nvl72") return count;
  const auto domain = static_cast<std::int64_t>(t.param_number("domain"));
  const std::int64_t used = t.cluster().gpus_per_server;
  return (count * domain + used - 1) / used;
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

// The paper's formulas, split by rate for mFabric (EPS part at eps_link, OCS part at ocs_link).
std::vector<RatedBill> paper_bills(const Topology& topology, CostConvention convention) {
  const std::string& kind = topology.kind();
  const ClusterSpec& cluster = topology.cluster();
  if (kind == "nvl72") {
    // The scale-out network is a fat-tree over one NIC per GPU of every whole domain.
    const auto domain = static_cast<int>(topology.param_number("domain"));
    const double o = topology.param_number("oversubscription");
    return {{cluster.link,
             paper_bill_of_materials("fat-tree", cluster.servers, domain, 0, o, convention)}};
  }
  if (kind != "mfabric") {
    const int alpha = 0;
    // Only fat-tree and rail-optimized take the paper's o.
    double oversubscription = 1.0;
    if ((kind == "fat-tree" || kind == "rail-optimized") &&
        topology.params().count("oversubscription") > 0) {
      oversubscription = topology.param_number("oversubscription");
    }
    return {{cluster.link, paper_bill_of_materials(kind, cluster.servers, cluster.nics_per_server,
                                                   alpha, oversubscription, convention)}};
  }
  // mFabric's EPS is charged 1:1 by the paper's formula even if the builder recorded an
  // oversubscription parameter.
  const OcsParams& params = ocs_of(topology);
  const int alpha = params.alpha;
  const BillOfMaterials all = paper_bill_of_materials(
      kind, cluster.servers, cluster.nics_per_server, alpha, 1.0, convention);
  const std::int64_t ocs_nics = std::int64_t{cluster.servers} * alpha;
  BillOfMaterials ocs;
  ocs.nics = co_packaged(topology) ? 0 : ocs_nics;
  ocs.transceivers = ocs_nics;
  ocs.ocs_ports = ocs_nics;
  ocs.fibres = ocs_nics;
  BillOfMaterials eps = all;
  eps.nics -= ocs_nics;
  eps.transceivers -= ocs_nics;
  eps.ocs_ports -= ocs_nics;
  eps.fibres -= ocs_nics;
  std::vector<RatedBill> parts;
  add_part(parts, params.eps_link, eps);
  add_part(parts, params.ocs_link, ocs);
  return parts;
}

}  // namespace

std::vector<RatedBill> bills_by_rate(const Topology& topology, CostConvention convention) {
  std::vector<RatedBill> parts = convention == CostConvention::Built
                                     ? built_bills(topology)
                                     : paper_bills(topology, convention);
  if (convention == CostConvention::Built) {
    for (RatedBill& p : parts) {
      for (std::int64_t BillOfMaterials::*m :
           {&BillOfMaterials::nics, &BillOfMaterials::transceivers, &BillOfMaterials::switch_ports,
            &BillOfMaterials::ocs_ports, &BillOfMaterials::patch_panel_ports,
            &BillOfMaterials::fibres}) {
        p.bom.*m = scale_to_domain(p.bom.*m, topology);
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
