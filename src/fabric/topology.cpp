#include "fabric/topology.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/error.h"
#include "fabric/ocs_params.h"

namespace mfabric::fabric {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Gpu:
      return "gpu";
    case NodeKind::NvSwitch:
      return "nvswitch";
    case NodeKind::Nic:
      return "nic";
    case NodeKind::Switch:
      return "switch";
    case NodeKind::Ocs:
      return "ocs";
    case NodeKind::PatchPanel:
      return "patch-panel";
  }
  return "?";
}

const char* to_string(NicRole r) {
  switch (r) {
    case NicRole::None:
      return "none";
    case NicRole::Eps:
      return "eps";
    case NicRole::Ocs:
      return "ocs";
    case NicRole::PatchPanel:
      return "patch-panel";
  }
  return "?";
}

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::NvLink:
      return "nvlink";
    case LinkKind::Pcie:
      return "pcie";
    case LinkKind::Cable:
      return "cable";
  }
  return "?";
}

void ClusterSpec::validate() const {
  if (servers < 1) throw Error("", "servers", fmt::format("must be at least 1, got {}", servers));
  if (gpus_per_server < 1) {
    throw Error("", "gpus_per_server", fmt::format("must be at least 1, got {}", gpus_per_server));
  }
  if (nics_per_server < 1) {
    throw Error("", "nics_per_server", fmt::format("must be at least 1, got {}", nics_per_server));
  }
  if (numa_nodes < 0 || numa_nodes > nics_per_server) {
    throw Error(
        "", "numa_nodes",
        fmt::format("must be between 1 and nics_per_server ({}), or 0 for automatic, got {}",
                    nics_per_server, numa_nodes));
  }
  // Rates and latencies are bounded so that every transfer time of a sane job fits the
  // picosecond clock (int64: about 106 days): at 1 Mbps even 1 TB takes 93 days.
  const auto check_rate = [](const char* field, Rate r, const char* example) {
    if (!(r.bps() >= kMinLinkRate.bps() && r.bps() <= kMaxLinkRate.bps())) {
      throw Error(
          "", field,
          fmt::format("must be a rate between {} and {} such as '{}', got {}",
                      to_string(kMinLinkRate), to_string(kMaxLinkRate), example, to_string(r)));
    }
  };
  check_rate("link", link, "400G");
  check_rate("nvswitch", nvswitch, "900GB/s");
  if (link_latency < Time::zero() || link_latency > kMaxLinkLatency) {
    throw Error("", "link_latency",
                fmt::format("must be between 0 and {}, got {}", to_string(kMaxLinkLatency),
                            to_string(link_latency)));
  }
  if (servers > kMaxServers) {
    throw Error(
        "", "servers",
        fmt::format("{} servers is more than mfabric can hold (at most {})", servers, kMaxServers));
  }
  if (gpus_per_server > kMaxPerServer || nics_per_server > kMaxPerServer) {
    throw Error("", gpus_per_server > kMaxPerServer ? "gpus_per_server" : "nics_per_server",
                fmt::format("must be at most {} per server", kMaxPerServer));
  }
}

std::int64_t estimate_topology_bytes(const ClusterSpec& c) {
  // Per node: the Node (32 bytes), its adjacency vector (24) and that vector's block (16-byte
  // header, 4 bytes per link with doubling slack). Per link: the Link (40) and two adjacency
  // entries (8, doubled for slack). Peak memory measured at 1024 and 8192 servers of 8 NICs and at
  // 1024 servers of 256: 55-80% of this (docs/reliability.md).
  constexpr double kNodeBytes = 32 + 24 + 16 + 16;
  constexpr double kLinkBytes = 40 + 16;
  const double servers = c.servers;
  const double nics = servers * c.nics_per_server;
  const double nodes = servers * (c.gpus_per_server + 1 + c.nics_per_server) + nics;
  const double links = servers * (c.gpus_per_server + c.nics_per_server) + 3 * nics;
  return static_cast<std::int64_t>(nodes * kNodeBytes + links * kLinkBytes);
}

Topology::Topology(std::string kind, std::string spec, ClusterSpec cluster)
    : kind_(std::move(kind)), spec_(std::move(spec)), cluster_(cluster) {}

NodeId Topology::add_node(const Node& node) {
  nodes_.push_back(node);
  adjacency_.emplace_back();
  return static_cast<NodeId>(nodes_.size() - 1);
}

LinkId Topology::add_link(NodeId a, NodeId b, Rate rate, Time latency, LinkKind kind) {
  links_.push_back(Link{a, b, rate, latency, kind});
  const auto id = static_cast<LinkId>(links_.size() - 1);
  adjacency_[static_cast<std::size_t>(a)].push_back(id);
  adjacency_[static_cast<std::size_t>(b)].push_back(id);
  return id;
}

void Topology::add_servers() {
  const int g = cluster_.gpus_per_server;
  const int n = cluster_.nics_per_server;
  server_base_.reserve(static_cast<std::size_t>(cluster_.servers));
  for (int s = 0; s < cluster_.servers; ++s) {
    const NodeId base = static_cast<NodeId>(nodes_.size());
    server_base_.push_back(base);
    for (int k = 0; k < g; ++k)
      add_node(Node{.kind = NodeKind::Gpu, .server = s, .index = k});
    const NodeId nvs = add_node(Node{.kind = NodeKind::NvSwitch, .server = s, .index = 0});
    for (int j = 0; j < n; ++j) {
      add_node(
          Node{.kind = NodeKind::Nic, .server = s, .index = j, .numa = j * cluster_.numa() / n});
    }
    for (int k = 0; k < g; ++k) {
      add_link(base + k, nvs, cluster_.nvswitch, Time::zero(), LinkKind::NvLink);
    }
    if (n >= g) {
      // With a whole number of NICs per GPU, NIC j hangs off GPU j mod g, so that every GPU
      // has one NIC of each block of g (mFabric with 16 NICs: one EPS and one OCS NIC per GPU).
      for (int j = 0; j < n; ++j) {
        const int gpu = n % g == 0 ? j % g : j * g / n;
        add_link(base + gpu, base + g + 1 + j, cluster_.link, Time::zero(), LinkKind::Pcie);
      }
    } else {
      for (int k = 0; k < g; ++k) {
        add_link(base + k, base + g + 1 + k * n / g, cluster_.link, Time::zero(), LinkKind::Pcie);
      }
    }
  }
}

void Topology::set_nic_rate(NodeId nic, Rate rate) {
  for (LinkId l : links_of(nic)) {
    if (links_[static_cast<std::size_t>(l)].kind == LinkKind::Pcie) {
      links_[static_cast<std::size_t>(l)].rate = rate;
    }
  }
}

Rate Topology::nic_rate(NodeId nic) const {
  for (LinkId l : links_of(nic)) {
    if (link(l).kind == LinkKind::Pcie) return link(l).rate;
  }
  return cluster_.link;
}

void Topology::set_nic_role(NodeId nic, NicRole role) {
  nodes_[static_cast<std::size_t>(nic)].role = role;
}

void Topology::set_group(NodeId node, int group) {
  nodes_[static_cast<std::size_t>(node)].group = group;
}

double Topology::param_number(const std::string& key) const {
  auto it = params_.find(key);
  if (it == params_.end()) {
    throw Error(fmt::format("fabric {} has no parameter '{}'", spec_, key));
  }
  return std::strtod(it->second.c_str(), nullptr);
}

NodeId Topology::other_end(LinkId l, NodeId from) const {
  const Link& k = link(l);
  return k.a == from ? k.b : k.a;
}

NodeId Topology::gpu(int server, int local) const {
  return server_base_[static_cast<std::size_t>(server)] + local;
}

NodeId Topology::nvswitch(int server) const {
  return server_base_[static_cast<std::size_t>(server)] + cluster_.gpus_per_server;
}

NodeId Topology::nic(int server, int local) const {
  return server_base_[static_cast<std::size_t>(server)] + cluster_.gpus_per_server + 1 + local;
}

int Topology::count(NodeKind kind) const {
  int c = 0;
  for (const Node& n : nodes_)
    c += n.kind == kind ? 1 : 0;
  return c;
}

std::string Topology::name(NodeId id) const {
  const Node& n = node(id);
  switch (n.kind) {
    case NodeKind::Gpu:
      return fmt::format("s{}.gpu{}", n.server, n.index);
    case NodeKind::NvSwitch:
      return fmt::format("s{}.nvswitch", n.server);
    case NodeKind::Nic:
      return fmt::format("s{}.nic{}", n.server, n.index);
    case NodeKind::Switch: {
      const char* tier = n.tier == 1   ? "leaf"
                         : n.tier == 2 ? (tiers_ >= 3 ? "agg" : "spine")
                         : n.tier == 3 ? "core"
                                       : "switch";
      return fmt::format("{}{}", tier, n.index);
    }
    case NodeKind::Ocs:
      return fmt::format("ocs{}", n.index);
    case NodeKind::PatchPanel:
      return fmt::format("panel{}", n.index);
  }
  return "?";
}

void Topology::set_ocs(const OcsParams& ocs) {
  ocs_ = std::make_shared<const OcsParams>(ocs);
}

int Topology::circuit_degree() const {
  return ocs_ ? ocs_->alpha : circuit_degree_;
}

Time Topology::reconfiguration_delay() const {
  return ocs_ ? ocs_->reconfiguration : Time::zero();
}

}  // namespace mfabric::fabric
