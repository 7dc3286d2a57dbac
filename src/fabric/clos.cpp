#include "fabric/clos.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "core/error.h"

namespace mfabric::fabric::detail {
namespace {

// Slack for floor/ceil of ratios that are whole numbers mathematically but may land just above
// one in floating point (64 / (3 + 1)); without it a leaf could lose a host port to rounding.
constexpr double kSlack = 1e-9;

}  // namespace

void validate_clos_params(int radix, double oversubscription) {
  if (radix < 4 || radix % 2 != 0 || radix > kMaxSwitchPorts) {
    // Even because pods take k/2 leaves and each aggregation switch splits its ports in half;
    // at least 4 so that a leaf has room for a host and an uplink at any oversubscription.
    throw Error("", "radix",
                fmt::format("must be an even number of switch ports from 4 to {}, got {}",
                            kMaxSwitchPorts, radix));
  }
  // Above radix - 1 a leaf still keeps one uplink (clos_hosts_per_leaf), so a larger ratio would
  // be accepted and silently built as radix - 1.
  const double most = static_cast<double>(radix - 1);
  if (!std::isfinite(oversubscription) || oversubscription < 1.0 || oversubscription > most) {
    throw Error("", "oversubscription",
                fmt::format("must be a leaf down:up ratio from 1 (non-blocking; 3 = 3:1) to "
                            "radix - 1 ({}: one uplink per leaf), got {}",
                            radix - 1, oversubscription));
  }
}

int clos_hosts_per_leaf(int radix, double oversubscription) {
  // floor(k*o/(o+1)) == k - ceil(k/(o+1)); the second form keeps at least one uplink port even
  // when o is so large that k*o/(o+1) rounds to k.
  const double uplinks = std::ceil(static_cast<double>(radix) / (oversubscription + 1.0) - kSlack);
  return radix - std::max(1, static_cast<int>(uplinks));
}

int clos_uplinks(int hosts, double oversubscription) {
  if (hosts <= 0) return 0;
  const double up = std::ceil(static_cast<double>(hosts) / oversubscription - kSlack);
  return std::max(1, static_cast<int>(up));
}

LinkId add_cable(Topology& t, NodeId a, NodeId b, Rate rate) {
  const Rate r = rate.bps() > 0 ? rate : t.cluster().link;
  return t.add_link(a, b, r, t.cluster().link_latency, LinkKind::Cable);
}

int build_clos(Topology& t, const std::vector<std::vector<NodeId>>& leaves,
               const ClosOptions& options) {
  const int k = options.radix;
  const double o = options.oversubscription;
  validate_clos_params(k, o);
  const int per_leaf = clos_hosts_per_leaf(k, o);
  if (!options.leaf_groups.empty() && options.leaf_groups.size() != leaves.size()) {
    throw std::logic_error("build_clos: leaf_groups must have one entry per leaf");
  }
  long long hosts = 0;
  for (const auto& leaf : leaves) {
    if (leaf.empty() || static_cast<int>(leaf.size()) > per_leaf) {
      throw std::logic_error(fmt::format("build_clos: a leaf holds {} hosts; expected 1 to {}",
                                         leaf.size(), per_leaf));
    }
    hosts += static_cast<long long>(leaf.size());
  }
  if (hosts == 0) return 0;

  const int num_leaves = static_cast<int>(leaves.size());
  const int half = k / 2;
  const int pods = (num_leaves + half - 1) / half;
  const int tiers = num_leaves == 1 ? 1 : num_leaves <= k ? 2 : 3;
  // A core switch takes one link from every pod.
  if (tiers == 3 && pods > k) {
    throw Error(
        "", "radix",
        fmt::format("{} hosts need more than 3 tiers at radix {}; use a larger radix", hosts, k));
  }

  // Continue the per-tier numbering of switches already in the topology (rail-only builds one
  // Clos per rail) so that "leaf12" names exactly one switch.
  std::array<int, 4> next{};
  for (const Node& n : t.nodes()) {
    if (n.kind == NodeKind::Switch && n.tier >= 1 && n.tier <= 3) ++next[n.tier];
  }
  auto add_switch = [&](int tier, int group) {
    return t.add_node(Node{
        .kind = NodeKind::Switch, .index = next[tier]++, .tier = tier, .group = group, .radix = k});
  };
  auto pod_group = [&](int pod) { return options.group >= 0 ? options.group : pod; };

  std::vector<NodeId> leaf_ids(leaves.size());
  std::vector<int> up(leaves.size());
  for (int l = 0; l < num_leaves; ++l) {
    const auto& leaf = leaves[l];
    const int group =
        options.leaf_groups.empty() ? pod_group(tiers == 3 ? l / half : 0) : options.leaf_groups[l];
    leaf_ids[l] = add_switch(1, group);
    for (NodeId host : leaf) {
      add_cable(t, host, leaf_ids[l], options.rate);
    }
    const int h = static_cast<int>(leaf.size());
    // The min only matters if rounding in clos_hosts_per_leaf ever went the wrong way; it keeps
    // the leaf within its radix.
    up[l] = std::min(clos_uplinks(h, o), k - h);
  }
  if (tiers == 1) return 1;

  if (tiers == 2) {
    const int spines = *std::max_element(up.begin(), up.end());
    std::vector<NodeId> spine_ids(static_cast<std::size_t>(spines));
    for (auto& s : spine_ids) {
      s = add_switch(2, pod_group(0));
    }
    for (int l = 0; l < num_leaves; ++l) {
      for (int j = 0; j < up[l]; ++j) {
        add_cable(t, leaf_ids[l], spine_ids[j], options.rate);
      }
    }
    return 2;
  }

  // m[p][j]: downlinks (= uplinks, non-blocking above the leaf) of aggregation switch j of pod p.
  const int max_up = *std::max_element(up.begin(), up.end());
  std::vector<std::vector<int>> m(static_cast<std::size_t>(pods));
  std::vector<int> cores_in_group(static_cast<std::size_t>(max_up), 0);
  for (int p = 0; p < pods; ++p) {
    const int first = p * half;
    const int last = std::min(num_leaves, first + half);
    const int aggs = *std::max_element(up.begin() + first, up.begin() + last);
    m[p].assign(static_cast<std::size_t>(aggs), 0);
    for (int l = first; l < last; ++l) {
      for (int j = 0; j < up[l]; ++j) {
        ++m[p][j];
      }
    }
    for (int j = 0; j < aggs; ++j) {
      cores_in_group[j] = std::max(cores_in_group[j], m[p][j]);
    }
  }

  std::vector<std::vector<NodeId>> agg_ids(static_cast<std::size_t>(pods));
  for (int p = 0; p < pods; ++p) {
    for (std::size_t j = 0; j < m[p].size(); ++j) {
      agg_ids[p].push_back(add_switch(2, pod_group(p)));
    }
    const int first = p * half;
    const int last = std::min(num_leaves, first + half);
    for (int l = first; l < last; ++l) {
      for (int j = 0; j < up[l]; ++j) {
        add_cable(t, leaf_ids[l], agg_ids[p][j], options.rate);
      }
    }
  }
  std::vector<std::vector<NodeId>> core_ids(static_cast<std::size_t>(max_up));
  for (int j = 0; j < max_up; ++j) {
    for (int c = 0; c < cores_in_group[j]; ++c) {
      core_ids[j].push_back(add_switch(3, options.group));
    }
  }
  for (int p = 0; p < pods; ++p) {
    for (std::size_t j = 0; j < m[p].size(); ++j) {
      for (int c = 0; c < m[p][j]; ++c) {
        add_cable(t, agg_ids[p][j], core_ids[j][c], options.rate);
      }
    }
  }
  return 3;
}

std::vector<std::vector<NodeId>> chunk_into_leaves(const std::vector<NodeId>& hosts, int per_leaf) {
  std::vector<std::vector<NodeId>> leaves;
  for (std::size_t i = 0; i < hosts.size(); i += static_cast<std::size_t>(per_leaf)) {
    const std::size_t end = std::min(hosts.size(), i + static_cast<std::size_t>(per_leaf));
    leaves.emplace_back(hosts.begin() + static_cast<std::ptrdiff_t>(i),
                        hosts.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return leaves;
}

int build_eps_fat_tree(Topology& t, int eps_nics, int radix, double oversubscription, Rate rate) {
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
  return build_clos(t, chunk_into_leaves(hosts, clos_hosts_per_leaf(radix, oversubscription)),
                    {.radix = radix, .oversubscription = oversubscription, .rate = rate});
}

}  // namespace mfabric::fabric::detail
