#include "report/link_classes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace mfabric::report {
namespace {

using fabric::LinkKind;
using fabric::Node;
using fabric::NodeKind;

// A switch tier's name, as Topology::name() gives it to its switches.
std::string switch_tier_name(const fabric::Topology& t, int tier) {
  switch (tier) {
    case 1:
      return "leaf";
    case 2:
      return t.tiers() >= 3 ? "agg" : "spine";
    case 3:
      return "core";
    default:
      return fmt::format("tier{}", tier);
  }
}

// A link's class: its place in the order, id and label.
struct Key {
  int order = 0;
  std::string id;
  std::string label;
};

Key key_of(const fabric::Topology& t, const fabric::Link& link) {
  if (link.kind == LinkKind::NvLink) return {0, "nvlink", "NVLink (GPU-NVSwitch)"};
  if (link.kind == LinkKind::Pcie) return {1, "pcie", "PCIe (GPU-NIC)"};
  const Node* a = &t.node(link.a);
  const Node* b = &t.node(link.b);
  if (b->kind == NodeKind::Nic) std::swap(a, b);  // a NIC first
  if (a->kind == NodeKind::Nic && b->kind == NodeKind::Switch) {
    const std::string tier = switch_tier_name(t, b->tier);
    return {10 + b->tier, "nic-" + tier, fmt::format("NIC-{} cables", tier)};
  }
  if (a->kind == NodeKind::Nic && b->kind == NodeKind::Ocs) {
    return {40, "ocs", "OCS circuits (NIC-OCS fibres)"};
  }
  if (a->kind == NodeKind::Nic && b->kind == NodeKind::PatchPanel) {
    return {41, "patch-panel", "patch-panel circuits (NIC-panel fibres)"};
  }
  if (a->kind == NodeKind::Switch && b->kind == NodeKind::Switch && a->tier != b->tier) {
    const int low = std::min(a->tier, b->tier);
    const int high = std::max(a->tier, b->tier);
    const std::string id = switch_tier_name(t, low) + "-" + switch_tier_name(t, high);
    return {20 + 4 * low + high, id, id + " cables"};
  }
  return {50, "other", "other cables"};
}

}  // namespace

LinkClasses classify_links(const fabric::Topology& t) {
  std::vector<Key> keys;
  keys.reserve(t.links().size());
  std::map<int, LinkClass> present;
  for (const fabric::Link& link : t.links()) {
    keys.push_back(key_of(t, link));
    LinkClass& c = present[keys.back().order];
    c.id = keys.back().id;
    c.label = keys.back().label;
    ++c.links;
    c.capacity_bytes_per_s += 2 * link.rate.bps() / 8.0;
  }
  LinkClasses out;
  std::map<int, std::int32_t> index;
  for (auto& [order, c] : present) {
    index[order] = static_cast<std::int32_t>(out.classes.size());
    out.classes.push_back(std::move(c));
  }
  out.of_link.reserve(keys.size());
  for (const Key& k : keys)
    out.of_link.push_back(index[k.order]);
  return out;
}

}  // namespace mfabric::report
