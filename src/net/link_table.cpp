#include "net/link_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "core/error.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NicRole;
using fabric::NodeId;
using fabric::NodeKind;

LinkTable::LinkTable(const fabric::Topology& topology)
    : t_(&topology), circuit_at_(topology.nodes().size(), -1) {
  std::size_t optical = 0;
  for (const fabric::Node& n : topology.nodes()) {
    if (n.kind == NodeKind::Nic && (n.role == NicRole::Ocs || n.role == NicRole::PatchPanel)) {
      ++optical;
    }
  }
  slots_.resize(optical / 2);
  for (fabric::Link& s : slots_) {
    s.a = s.b = fabric::kNoNode;
    s.kind = fabric::LinkKind::Cable;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i)
    free_.push_back(i);
  std::make_heap(free_.begin(), free_.end(), std::greater<>{});
}

LinkId LinkTable::optical_cable(NodeId nic) const {
  for (LinkId l : t_->links_of(nic)) {
    const NodeKind other = t_->node(t_->other_end(l, nic)).kind;
    if (other == NodeKind::Ocs || other == NodeKind::PatchPanel) return l;
  }
  return -1;
}

LinkId LinkTable::connect(NodeId a, NodeId b) {
  const auto nodes = static_cast<NodeId>(t_->nodes().size());
  for (NodeId v : {a, b}) {
    if (v < 0 || v >= nodes || t_->node(v).kind != NodeKind::Nic) {
      throw Error("", "circuit",
                  fmt::format("a circuit joins two NICs; node {} is {}", v,
                              v < 0 || v >= nodes ? "not in the topology" : t_->name(v)));
    }
  }
  const fabric::Node& na = t_->node(a);
  const fabric::Node& nb = t_->node(b);
  const LinkId ca = optical_cable(a);
  const LinkId cb = optical_cable(b);
  if (ca < 0 || cb < 0) {
    throw Error("", "circuit",
                fmt::format("{} is not cabled to an optical switch", t_->name(ca < 0 ? a : b)));
  }
  if (na.server == nb.server) {
    throw Error("", "circuit",
                fmt::format("{} and {} are in the same server", t_->name(a), t_->name(b)));
  }
  if (t_->other_end(ca, a) != t_->other_end(cb, b) || na.role != nb.role ||
      (na.role == NicRole::Ocs && na.group != nb.group)) {
    throw Error("", "circuit",
                fmt::format("{} and {} are not in the same region of one optical switch",
                            t_->name(a), t_->name(b)));
  }
  for (NodeId v : {a, b}) {
    if (circuit_at(v) >= 0) {
      throw Error("", "circuit", fmt::format("{} already holds a circuit", t_->name(v)));
    }
  }
  if (free_.empty()) {
    throw std::logic_error("LinkTable::connect: no free circuit slot");  // cannot happen
  }
  std::pop_heap(free_.begin(), free_.end(), std::greater<>{});
  const std::size_t slot = free_.back();
  free_.pop_back();
  fabric::Link& k = slots_[slot];
  k.a = std::min(a, b);
  k.b = std::max(a, b);
  k.rate = std::min(t_->link(ca).rate, t_->link(cb).rate);
  k.latency = t_->link(ca).latency + t_->link(cb).latency;
  k.kind = fabric::LinkKind::Cable;
  const auto id = static_cast<LinkId>(t_->links().size() + slot);
  circuit_at_[static_cast<std::size_t>(a)] = id;
  circuit_at_[static_cast<std::size_t>(b)] = id;
  ++connected_;
  return id;
}

void LinkTable::disconnect(LinkId circuit) {
  if (!connected(circuit)) {
    throw Error("", "circuit", fmt::format("link {} is not a connected circuit", circuit));
  }
  const std::size_t slot = static_cast<std::size_t>(circuit) - t_->links().size();
  fabric::Link& k = slots_[slot];
  circuit_at_[static_cast<std::size_t>(k.a)] = -1;
  circuit_at_[static_cast<std::size_t>(k.b)] = -1;
  k.a = k.b = fabric::kNoNode;
  k.rate = Rate{};
  free_.push_back(slot);
  std::push_heap(free_.begin(), free_.end(), std::greater<>{});
  --connected_;
}

}  // namespace mfabric::net
