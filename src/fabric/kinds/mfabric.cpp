#include "fabric/kinds/mfabric.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"
#include "fabric/ocs_params.h"
#include "fabric/paper_formulas.h"

namespace mfabric::fabric::kinds {
namespace {

constexpr int kDefaultAlpha = 6;
// Polatis piezo OCS (paper Table 2) and the reconfiguration time of the paper's simulations.
constexpr int kDefaultOcsPorts = 576;
constexpr Time kDefaultReconfiguration = Time::milliseconds(25);
constexpr const char* kDefaultPlanner = "greedy";
constexpr const char* kDefaultPolicy = "block";

std::vector<FabricParam> mfabric_params() {
  return {
      {"alpha", param_text(kDefaultAlpha),
       "OCS NICs per server (the last alpha NICs; 1 to NICs per server - 1); the rest go to the "
       "EPS fat-tree"},
      {"region", param_text(kDefaultMfabricRegion),
       "servers per region (one EP group), contiguous; must divide the server count; default "
       "8, or all servers if fewer"},
      radix_param(),
      {"oversubscription", param_text(kDefaultOversubscription),
       "leaf down:up port ratio of the EPS fat-tree, at least 1 (1 = non-blocking)"},
      {"ocs_ports", param_text(kDefaultOcsPorts),
       "ports per OCS device (576 = piezo OCS); at least alpha x region, since a region's "
       "ports sit on one device"},
      {"reconfiguration", to_string(kDefaultReconfiguration),
       "OCS reconfiguration time (a time such as 25ms, 10us; 0 for an ideal OCS, at most "
       "60min)"},
      {"planner", kDefaultPlanner,
       "circuit planner of each region controller (docs/control-plane.md)", "planner"},
      {"policy", kDefaultPolicy,
       "when regions reconfigure, and what an EP all-to-all does meanwhile (docs/control-plane.md)",
       "policy"},
      {"switching", "always",
       "when a region puts a new plan up: always (switching only the circuits that differ), "
       "when-faster (only when the new circuits would finish the demand's all-to-all sooner "
       "than those up by more than the reconfiguration time), or every (every circuit for "
       "every new plan, identical or not, as the paper's simulator)"},
      {"eps_link", "the cluster's link",
       "rate of the EPS NICs and of the EPS fat-tree's cables (e.g. 50G: lower than the OCS "
       "NICs' for the alpha study at equal cost)"},
      {"ocs_link", "the cluster's link",
       "rate of the OCS NICs and circuits (e.g. 3.6T for co-packaged optics)"},
      {"ocs_optics", "pluggable",
       "pluggable (a NIC and a transceiver per OCS NIC) or co-packaged (optics on the GPU "
       "package: one optical engine, priced as a transceiver of its rate, no NIC)"}};
}

// A rate parameter in the range of ClusterSpec's link.
Rate read_link_rate(Spec& spec, const char* key, Rate fallback) {
  const Rate r = spec.get_rate(key, fallback);
  if (!(r.bps() >= kMinLinkRate.bps() && r.bps() <= kMaxLinkRate.bps())) {
    throw Error("", key,
                fmt::format("must be a rate between {} and {} such as '100G', got {}",
                            to_string(kMinLinkRate), to_string(kMaxLinkRate), to_string(r)));
  }
  return r;
}

// The text of mFabric's parameters in Topology::params() (outputs: topology --json, cost --json),
// written from the typed ones.
void record_ocs_params(const OcsParams& ocs, Topology& t) {
  t.set_param("alpha", param_text(ocs.alpha));
  t.set_param("region", param_text(ocs.region));
  t.set_param("ocs_ports", param_text(ocs.ocs_ports));
  t.set_param("reconfiguration", to_string(ocs.reconfiguration));
  t.set_param("planner", ocs.planner);
  t.set_param("policy", ocs.policy);
  t.set_param("switching", to_string(ocs.switching));
  t.set_param("eps_link", to_string(ocs.eps_link));
  t.set_param("ocs_link", to_string(ocs.ocs_link));
  t.set_param("ocs_optics", to_string(ocs.optics));
}

struct EpsParams {
  int radix;
  double oversubscription;
};

// Reads every parameter (Spec::finish refuses others) and checks each against the cluster.
OcsParams read_mfabric_params(Spec& spec, const std::vector<FabricParam>& params,
                              const ClusterSpec& c, EpsParams& eps) {
  OcsParams ocs;
  ocs.alpha = spec.get_int("alpha", kDefaultAlpha);
  ocs.region = spec.get_int("region", std::min(kDefaultMfabricRegion, c.servers));
  eps.radix = spec.get_int("radix", kDefaultRadix);
  eps.oversubscription = spec.get_double("oversubscription", kDefaultOversubscription);
  ocs.ocs_ports = spec.get_int("ocs_ports", kDefaultOcsPorts);
  ocs.reconfiguration = spec.get_time("reconfiguration", kDefaultReconfiguration);
  ocs.eps_link = read_link_rate(spec, "eps_link", c.link);
  ocs.ocs_link = read_link_rate(spec, "ocs_link", c.link);
  const std::string optics = spec.get_string("ocs_optics", "pluggable");
  // Names checked by the control plane (sim::make_control_plane), whose registries are above
  // fabric.
  ocs.planner = spec.get_string("planner", kDefaultPlanner);
  ocs.policy = spec.get_string("policy", kDefaultPolicy);
  const std::string switching = spec.get_string("switching", "always");
  spec.finish(param_names(params));

  check_alpha(ocs.alpha, c.nics_per_server);
  if (ocs.region < 1 || c.servers % ocs.region != 0) {
    throw Error("", "region",
                fmt::format("must be a number of servers per region, at least 1, that divides "
                            "servers ({}), got {}",
                            c.servers, ocs.region));
  }
  detail::validate_clos_params(eps.radix, eps.oversubscription);
  const int region_ports = ocs.alpha * ocs.region;
  // A region's circuits are made inside one OCS device, so its ports must fit on one.
  if (ocs.ocs_ports > kMaxSwitchPorts) {
    throw Error("", "ocs_ports",
                fmt::format("must be at most {} ports per OCS device, got {}", kMaxSwitchPorts,
                            ocs.ocs_ports));
  }
  if (ocs.ocs_ports < region_ports) {
    throw Error("", "ocs_ports",
                fmt::format("must be at least alpha * region ({} * {} = {}) so that a region fits "
                            "on one OCS, got {}",
                            ocs.alpha, ocs.region, region_ports, ocs.ocs_ports));
  }
  // From 0 (an ideal OCS) through nanosecond PLZT and 10-25 ms piezo switches to a robotic patch
  // panel's minutes (paper Table 2); an hour bounds it well inside the picosecond clock.
  if (ocs.reconfiguration < Time::zero() || ocs.reconfiguration > Time::milliseconds(3600 * 1000)) {
    throw Error("", "reconfiguration",
                fmt::format("must be a time between 0 and 60min such as '25ms', got {}",
                            to_string(ocs.reconfiguration)));
  }
  const std::optional<SwitchRule> rule = parse_switch_rule(switching);
  if (!rule) {
    throw Error("", "switching",
                fmt::format("must be 'always', 'when-faster' or 'every', got '{}'", switching));
  }
  ocs.switching = *rule;
  const std::optional<OcsOptics> ocs_optics = parse_ocs_optics(optics);
  if (!ocs_optics) {
    throw Error("", "ocs_optics",
                fmt::format("must be 'pluggable' or 'co-packaged', got '{}'", optics));
  }
  ocs.optics = *ocs_optics;
  return ocs;
}

void build_mfabric(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  const ClusterSpec& c = t.cluster();
  const int n = c.nics_per_server;
  EpsParams eps{};
  const OcsParams ocs = read_mfabric_params(spec, params, c, eps);
  t.set_param("radix", param_text(eps.radix));
  t.set_param("oversubscription", param_text(eps.oversubscription));
  record_ocs_params(ocs, t);
  t.set_ocs(ocs);

  t.set_tiers(
      detail::build_eps_fat_tree(t, n - ocs.alpha, eps.radix, eps.oversubscription, ocs.eps_link));

  // Whole regions per OCS device, first fit in order: a region never spans two devices.
  const int region_ports = ocs.alpha * ocs.region;
  const int regions_per_ocs = ocs.ocs_ports / region_ports;
  NodeId device = kNoNode;
  for (int id = 0; id < c.servers / ocs.region; ++id) {
    const int slot = id % regions_per_ocs;
    if (slot == 0) {
      device = t.add_node(
          Node{.kind = NodeKind::Ocs, .index = id / regions_per_ocs, .radix = ocs.ocs_ports});
    }
    const int first_server = id * ocs.region;
    t.add_region(Region{.id = id,
                        .first_server = first_server,
                        .servers = ocs.region,
                        .ocs = device,
                        .first_port = slot * region_ports,
                        .ports = region_ports});
    for (int s = first_server; s < first_server + ocs.region; ++s) {
      for (int j = n - ocs.alpha; j < n; ++j) {
        const NodeId nic = t.nic(s, j);
        t.set_nic_role(nic, NicRole::Ocs);
        t.set_nic_rate(nic, ocs.ocs_link);
        t.set_group(nic, id);
        detail::add_cable(t, nic, device, ocs.ocs_link);
      }
    }
  }
}

// The paper's formulas: the EPS part a 1:1 fat-tree over the EPS NICs (6 switch ports per EPS
// NIC); like the calculator, an OCS port for every NIC (not only the alpha OCS NICs).
BillOfMaterials mfabric_paper_formula(const PaperCostInputs& in, CostConvention convention) {
  if (in.alpha < 0 || in.alpha > in.nics_per_server) {
    throw Error("", "alpha",
                fmt::format("expected between 0 and nics_per_server ({}) OCS NICs per server, "
                            "got {}",
                            in.nics_per_server, in.alpha));
  }
  const std::int64_t nics = std::int64_t{in.servers} * in.nics_per_server;
  const std::int64_t eps_nics = std::int64_t{in.servers} * (in.nics_per_server - in.alpha);
  const std::int64_t ocs_nics = std::int64_t{in.servers} * in.alpha;
  const std::int64_t eps_switch_ports = paper_fat_tree_switch_ports(eps_nics, 1.0, true);
  BillOfMaterials bom;
  bom.nics = nics;
  // The paper's figures include these ports; the authors' calculator leaves them out.
  bom.switch_ports = convention == CostConvention::Paper ? eps_switch_ports : 0;
  bom.transceivers = bom.switch_ports + nics;
  bom.ocs_ports = nics;
  bom.fibres = paper_fibres_for(eps_switch_ports + eps_nics) + ocs_nics;
  return bom;
}

// The paper's formulas split by rate: the EPS part at eps_link, the OCS part at ocs_link.
std::vector<RatedBill> mfabric_paper_bills(const Topology& topology, CostConvention convention) {
  if (topology.ocs() == nullptr) {
    throw Error(
        "", "alpha",
        fmt::format("fabric {} has no OCS parameters (alpha, links, optics)", topology.spec()));
  }
  const OcsParams& params = *topology.ocs();
  const ClusterSpec& cluster = topology.cluster();
  // mFabric's EPS is charged 1:1 by the paper's formula even if the builder recorded an
  // oversubscription parameter.
  const BillOfMaterials all = mfabric_paper_formula(
      {cluster.servers, cluster.nics_per_server, params.alpha, 1.0}, convention);
  const std::int64_t ocs_nics = std::int64_t{cluster.servers} * params.alpha;
  BillOfMaterials ocs;
  ocs.nics = params.optics == OcsOptics::CoPackaged ? 0 : ocs_nics;
  ocs.transceivers = ocs_nics;
  ocs.ocs_ports = ocs_nics;
  ocs.fibres = ocs_nics;
  BillOfMaterials eps = all;
  eps.nics -= ocs_nics;
  eps.transceivers -= ocs_nics;
  eps.ocs_ports -= ocs_nics;
  eps.fibres -= ocs_nics;
  // Parts at one rate are merged by the cost model (bills_by_rate).
  return {{params.eps_link, eps}, {params.ocs_link, ocs}};
}

}  // namespace

FabricKind mfabric_kind() {
  FabricKind kind;
  kind.params = mfabric_params();
  kind.traits.reconfigurable = true;
  kind.traits.all_to_all = "proxy";
  kind.traits.controller = "mfabric";
  kind.traits.label = "mFabric";
  kind.traits.region_param = "region";
  kind.traits.default_region = kDefaultMfabricRegion;
  kind.build = [params = kind.params](Spec& spec, Topology& t) { build_mfabric(spec, params, t); };
  kind.paper_formula = mfabric_paper_formula;
  kind.paper_bills = mfabric_paper_bills;
  return kind;
}

}  // namespace mfabric::fabric::kinds
