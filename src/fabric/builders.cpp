#include "fabric/builders.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "fabric/clos.h"
#include "fabric/ocs_params.h"

namespace mfabric::fabric {
namespace {

constexpr int kDefaultRadix = 64;
constexpr double kDefaultOversubscription = 1.0;
constexpr int kDefaultAlpha = 6;
// Polatis piezo OCS (paper Table 2) and the reconfiguration time of the paper's simulations.
constexpr int kDefaultOcsPorts = 576;
constexpr Time kDefaultReconfiguration = Time::milliseconds(25);
constexpr const char* kDefaultPlanner = "greedy";
constexpr const char* kDefaultPolicy = "block";
// GB200 NVL72: 72 GPUs per NVLink domain.
constexpr int kDefaultNvlDomain = 72;

// Parameters are recorded as text exactly as a user could write them back ("3", "1.5", "25ms").
std::string plain(double v) {
  return fmt::format("{}", v);
}
std::string plain(int v) {
  return fmt::format("{}", v);
}

using BuildFn = void (*)(Spec& spec, const FabricKind& kind, Topology& t);

struct Entry {
  FabricKind kind;
  BuildFn build;
};

std::vector<std::string> param_names(const FabricKind& kind) {
  std::vector<std::string> names;
  for (const auto& p : kind.params) {
    names.push_back(p.name);
  }
  return names;
}

FabricParam radix_param() {
  return {"radix", plain(kDefaultRadix),
          "ports per electrical switch (even, at least 4); decides 1, 2 or 3 tiers"};
}

FabricParam oversubscription_param() {
  return {"oversubscription", plain(kDefaultOversubscription),
          "leaf down:up port ratio, at least 1 (1 = non-blocking, 3 = 3:1); above the leaves the "
          "Clos is non-blocking"};
}

// Groups hosts into leaves of `per_leaf` consecutive hosts.
std::vector<std::vector<NodeId>> chunk(const std::vector<NodeId>& hosts, int per_leaf) {
  std::vector<std::vector<NodeId>> leaves;
  for (std::size_t i = 0; i < hosts.size(); i += static_cast<std::size_t>(per_leaf)) {
    const std::size_t end = std::min(hosts.size(), i + static_cast<std::size_t>(per_leaf));
    leaves.emplace_back(hosts.begin() + static_cast<std::ptrdiff_t>(i),
                        hosts.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return leaves;
}

// The first `eps_nics` NICs of every server, server-major, as EPS hosts of one Clos; its NICs
// and cables at `rate` (zero: the cluster's link rate).
int build_eps_fat_tree(Topology& t, int eps_nics, int radix, double oversubscription,
                       Rate rate = Rate{}) {
  const ClusterSpec& c = t.cluster();
  std::vector<NodeId> hosts;
  hosts.reserve(static_cast<std::size_t>(c.servers) * static_cast<std::size_t>(eps_nics));
  for (int s = 0; s < c.servers; ++s) {
    for (int j = 0; j < eps_nics; ++j) {
      t.set_nic_role(t.nic(s, j), NicRole::Eps);
      if (rate.bps() > 0) t.set_nic_rate(t.nic(s, j), rate);
      hosts.push_back(t.nic(s, j));
    }
  }
  return detail::build_clos(t, chunk(hosts, detail::clos_hosts_per_leaf(radix, oversubscription)),
                            {.radix = radix, .oversubscription = oversubscription, .rate = rate});
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

struct ClosParams {
  int radix;
  double oversubscription;
};

// Reads, checks and records radix and oversubscription, the only parameters of the fat-tree and
// rail-optimized builders.
ClosParams read_clos_params(Spec& spec, const FabricKind& kind, Topology& t) {
  const int radix = spec.get_int("radix", kDefaultRadix);
  const double o = spec.get_double("oversubscription", kDefaultOversubscription);
  spec.finish(param_names(kind));
  detail::validate_clos_params(radix, o);
  t.set_param("radix", plain(radix));
  t.set_param("oversubscription", plain(o));
  return {radix, o};
}

void build_fat_tree(Spec& spec, const FabricKind& kind, Topology& t) {
  const auto [radix, o] = read_clos_params(spec, kind, t);
  t.set_tiers(build_eps_fat_tree(t, t.cluster().nics_per_server, radix, o));
}

void build_rail_optimized(Spec& spec, const FabricKind& kind, Topology& t) {
  const auto [radix, o] = read_clos_params(spec, kind, t);

  const ClusterSpec& c = t.cluster();
  const int per_leaf = detail::clos_hosts_per_leaf(radix, o);
  // Leaf (block b, rail r) holds NIC r of the servers of block b; rails are the inner loop so
  // that a pod holds every rail of a few server blocks.
  detail::ClosOptions options{.radix = radix, .oversubscription = o};
  std::vector<std::vector<NodeId>> leaves;
  for (int first = 0; first < c.servers; first += per_leaf) {
    const int last = std::min(c.servers, first + per_leaf);
    for (int r = 0; r < c.nics_per_server; ++r) {
      std::vector<NodeId> leaf;
      for (int s = first; s < last; ++s) {
        t.set_nic_role(t.nic(s, r), NicRole::Eps);
        leaf.push_back(t.nic(s, r));
      }
      leaves.push_back(std::move(leaf));
      options.leaf_groups.push_back(r);
    }
  }
  t.set_tiers(detail::build_clos(t, leaves, options));
}

void build_rail_only(Spec& spec, const FabricKind& kind, Topology& t) {
  const int radix = spec.get_int("radix", kDefaultRadix);
  spec.finish(param_names(kind));
  // No oversubscription parameter: with no spine joining rails there is nothing above the rail
  // to oversubscribe into that would not also cut the rail's own bandwidth.
  detail::validate_clos_params(radix, 1.0);
  t.set_param("radix", plain(radix));

  const ClusterSpec& c = t.cluster();
  const int per_leaf = detail::clos_hosts_per_leaf(radix, 1.0);
  int tiers = 0;
  for (int r = 0; r < c.nics_per_server; ++r) {
    std::vector<NodeId> hosts;
    for (int s = 0; s < c.servers; ++s) {
      t.set_nic_role(t.nic(s, r), NicRole::Eps);
      hosts.push_back(t.nic(s, r));
    }
    tiers =
        std::max(tiers, detail::build_clos(t, chunk(hosts, per_leaf),
                                           {.radix = radix, .oversubscription = 1.0, .group = r}));
  }
  t.set_tiers(tiers);
}

void build_topoopt(Spec& spec, const FabricKind& kind, Topology& t) {
  spec.finish(param_names(kind));
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
  t.set_param("degree", plain(c.nics_per_server));
}

// NVLink domains as servers: one scale-out NIC per GPU on a fat-tree.
void build_nvl72(Spec& spec, const FabricKind& kind, Topology& t) {
  const ClusterSpec& c = t.cluster();
  const int radix = spec.get_int("radix", kDefaultRadix);
  const double o = spec.get_double("oversubscription", kDefaultOversubscription);
  const int domain = spec.get_int("domain", kDefaultNvlDomain);
  spec.finish(param_names(kind));
  detail::validate_clos_params(radix, o);
  if (c.nics_per_server != c.gpus_per_server) {
    throw Error("", "fabric",
                fmt::format("nvl72 gives every GPU its own scale-out NIC: the cluster needs "
                            "nics_per_server = gpus_per_server, got {} NICs and {} GPUs",
                            c.nics_per_server, c.gpus_per_server));
  }
  if (domain < c.gpus_per_server || domain > kMaxPerServer) {
    throw Error("", "domain",
                fmt::format("must be the GPUs of one NVLink domain, at least gpus_per_server "
                            "({}, the GPUs the job uses) and at most {}, got {}",
                            c.gpus_per_server, kMaxPerServer, domain));
  }
  t.set_param("radix", plain(radix));
  t.set_param("oversubscription", plain(o));
  t.set_param("domain", plain(domain));
  t.set_tiers(build_eps_fat_tree(t, c.nics_per_server, radix, o));
}

// The text of mFabric's parameters in Topology::params() (outputs: topology --json, cost --json),
// written from the typed ones.
void record_ocs_params(const OcsParams& ocs, Topology& t) {
  t.set_param("alpha", plain(ocs.alpha));
  t.set_param("region", plain(ocs.region));
  t.set_param("ocs_ports", plain(ocs.ocs_ports));
  t.set_param("reconfiguration", to_string(ocs.reconfiguration));
  t.set_param("planner", ocs.planner);
  t.set_param("policy", ocs.policy);
  t.set_param("switching", to_string(ocs.switching));
  t.set_param("eps_link", to_string(ocs.eps_link));
  t.set_param("ocs_link", to_string(ocs.ocs_link));
  t.set_param("ocs_optics", to_string(ocs.optics));
}

void build_mfabric(Spec& spec, const FabricKind& kind, Topology& t) {
  const ClusterSpec& c = t.cluster();
  const int n = c.nics_per_server;
  OcsParams params;
  const int alpha = params.alpha = spec.get_int("alpha", kDefaultAlpha);
  const int region = params.region =
      spec.get_int("region", std::min(kDefaultMfabricRegion, c.servers));
  const int radix = spec.get_int("radix", kDefaultRadix);
  const double o = spec.get_double("oversubscription", kDefaultOversubscription);
  const int ocs_ports = params.ocs_ports = spec.get_int("ocs_ports", kDefaultOcsPorts);
  const Time reconfiguration = params.reconfiguration =
      spec.get_time("reconfiguration", kDefaultReconfiguration);
  const Rate eps_link = params.eps_link = read_link_rate(spec, "eps_link", c.link);
  const Rate ocs_link = params.ocs_link = read_link_rate(spec, "ocs_link", c.link);
  const std::string optics = spec.get_string("ocs_optics", "pluggable");
  // Names checked by the control plane (sim/control_spec.h), whose registries are above fabric.
  params.planner = spec.get_string("planner", kDefaultPlanner);
  params.policy = spec.get_string("policy", kDefaultPolicy);
  const std::string switching = spec.get_string("switching", "always");
  spec.finish(param_names(kind));

  check_alpha(alpha, n);
  if (region < 1 || c.servers % region != 0) {
    throw Error("", "region",
                fmt::format("must be a number of servers per region, at least 1, that divides "
                            "servers ({}), got {}",
                            c.servers, region));
  }
  detail::validate_clos_params(radix, o);
  const int region_ports = alpha * region;
  // A region's circuits are made inside one OCS device, so its ports must fit on one.
  if (ocs_ports > kMaxSwitchPorts) {
    throw Error(
        "", "ocs_ports",
        fmt::format("must be at most {} ports per OCS device, got {}", kMaxSwitchPorts, ocs_ports));
  }
  if (ocs_ports < region_ports) {
    throw Error("", "ocs_ports",
                fmt::format("must be at least alpha * region ({} * {} = {}) so that a region fits "
                            "on one OCS, got {}",
                            alpha, region, region_ports, ocs_ports));
  }
  // From 0 (an ideal OCS) through nanosecond PLZT and 10-25 ms piezo switches to a robotic patch
  // panel's minutes (paper Table 2); an hour bounds it well inside the picosecond clock.
  if (reconfiguration < Time::zero() || reconfiguration > Time::milliseconds(3600 * 1000)) {
    throw Error("", "reconfiguration",
                fmt::format("must be a time between 0 and 60min such as '25ms', got {}",
                            to_string(reconfiguration)));
  }
  const std::optional<SwitchRule> rule = parse_switch_rule(switching);
  if (!rule) {
    throw Error("", "switching",
                fmt::format("must be 'always', 'when-faster' or 'every', got '{}'", switching));
  }
  params.switching = *rule;
  const std::optional<OcsOptics> ocs_optics = parse_ocs_optics(optics);
  if (!ocs_optics) {
    throw Error("", "ocs_optics",
                fmt::format("must be 'pluggable' or 'co-packaged', got '{}'", optics));
  }
  params.optics = *ocs_optics;
  t.set_param("radix", plain(radix));
  t.set_param("oversubscription", plain(o));
  record_ocs_params(params, t);
  t.set_ocs(params);

  t.set_tiers(build_eps_fat_tree(t, n - alpha, radix, o, eps_link));

  // Whole regions per OCS device, first fit in order: a region never spans two devices.
  const int regions_per_ocs = ocs_ports / region_ports;
  NodeId ocs = kNoNode;
  for (int id = 0; id < c.servers / region; ++id) {
    const int slot = id % regions_per_ocs;
    if (slot == 0) {
      ocs = t.add_node(
          Node{.kind = NodeKind::Ocs, .index = id / regions_per_ocs, .radix = ocs_ports});
    }
    const int first_server = id * region;
    t.add_region(Region{.id = id,
                        .first_server = first_server,
                        .servers = region,
                        .ocs = ocs,
                        .first_port = slot * region_ports,
                        .ports = region_ports});
    for (int s = first_server; s < first_server + region; ++s) {
      for (int j = n - alpha; j < n; ++j) {
        const NodeId nic = t.nic(s, j);
        t.set_nic_role(nic, NicRole::Ocs);
        t.set_nic_rate(nic, ocs_link);
        t.set_group(nic, id);
        detail::add_cable(t, nic, ocs, ocs_link);
      }
    }
  }
}

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {{"fat-tree",
        "every NIC is a host of a 1-, 2- or 3-tier Clos (leaf/spine/core) of electrical switches",
        {radix_param(), oversubscription_param()}},
       build_fat_tree},
      {{"rail-optimized",
        "NIC i of every server on rail i's leaves; spines (and cores) join the rails",
        {radix_param(), oversubscription_param()}},
       build_rail_optimized},
      {{"rail-only",
        "one non-blocking Clos per rail (NIC i of every server); no switch joins two rails",
        {radix_param()}},
       build_rail_only},
      {{"topoopt",
        "every NIC on one optical patch panel; topology fixed before training; circuit degree = "
        "NICs per server",
        {}},
       build_topoopt},
      {{"mfabric",
        "alpha NICs per server on a regional optical circuit switch (OCS) reconfigured during "
        "training, the other NICs on an EPS fat-tree",
        {{"alpha", plain(kDefaultAlpha),
          "OCS NICs per server (the last alpha NICs; 1 to NICs per server - 1); the rest go to the "
          "EPS fat-tree"},
         {"region", plain(kDefaultMfabricRegion),
          "servers per region (one EP group), contiguous; must divide the server count; default "
          "8, or all servers if fewer"},
         radix_param(),
         {"oversubscription", plain(kDefaultOversubscription),
          "leaf down:up port ratio of the EPS fat-tree, at least 1 (1 = non-blocking)"},
         {"ocs_ports", plain(kDefaultOcsPorts),
          "ports per OCS device (576 = piezo OCS); at least alpha x region, since a region's "
          "ports sit on one device"},
         {"reconfiguration", to_string(kDefaultReconfiguration),
          "OCS reconfiguration time (a time such as 25ms, 10us; 0 for an ideal OCS, at most "
          "60min)"},
         {"planner", kDefaultPlanner,
          "circuit planner of each region controller: greedy (Algorithm 1), greedy-paper, "
          "optimal, exact (docs/control-plane.md)"},
         {"policy", kDefaultPolicy,
          "when regions reconfigure: block (each layer's forward dispatch all-to-all waits for its "
          "circuits; backward plans go up under the compute of the layer before), reuse-previous "
          "(the dispatch runs on the circuits up, the plan follows under expert compute), "
          "eps-during-switch (the dispatch starts over the EPS, moves to the circuits when they "
          "come up), predict (Copilot forecasts the next layer's plan under attention compute), "
          "oracle (block with no delay: an upper bound), paper-sim (the paper's simulator: every "
          "new layer's dispatch waits for a whole-region switch; switching every)"},
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
          "package: one optical engine, priced as a transceiver of its rate, no NIC)"}}},
       build_mfabric},
      {{"nvl72",
        "NVLink domains (each server is one domain: gpus_per_server GPUs on its NVSwitch) with one "
        "scale-out NIC per GPU on a fat-tree, as GB200 NVL72",
        {radix_param(),
         oversubscription_param(),
         {"domain", plain(kDefaultNvlDomain),
          "GPUs per NVLink domain; the cluster's gpus_per_server are the ones the job uses (64 "
          "of 72), the spare GPUs' scale-out ports are charged in the cost"}}},
       build_nvl72},
  };
  return entries;
}

}  // namespace

const std::vector<FabricKind>& fabric_kinds() {
  static const std::vector<FabricKind> kinds = [] {
    std::vector<FabricKind> out;
    for (const auto& e : registry()) {
      out.push_back(e.kind);
    }
    return out;
  }();
  return kinds;
}

const FabricKind* find_fabric_kind(const std::string& name) {
  for (const auto& k : fabric_kinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

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
  const Entry* entry = nullptr;
  for (const auto& e : registry()) {
    if (e.kind.name == spec.name()) entry = &e;
  }
  if (!entry) {
    std::string known;
    for (const auto& e : registry()) {
      known += (known.empty() ? "" : ", ") + e.kind.name;
    }
    throw Error(fmt::format("unknown fabric '{}' (known: {})", spec.name(), known));
  }
  Topology t(spec.name(), spec.to_string(), cluster);
  t.add_servers();
  entry->build(spec, entry->kind, t);
  return t;
}

Topology build_fabric(const std::string& spec_text, const ClusterSpec& cluster,
                      std::int64_t max_memory) {
  return build_fabric(Spec::parse(spec_text), cluster, max_memory);
}

}  // namespace mfabric::fabric
