// Built-fabric probes and invariants shared by the tests of the fabric builders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"

// Helpers in a namespace of their own: test files are compiled several to a translation unit.
namespace mfabric::fabric::builders_test {

inline ClusterSpec cluster(int servers, int nics = 8, int gpus = 8) {
  ClusterSpec c;
  c.servers = servers;
  c.nics_per_server = nics;
  c.gpus_per_server = gpus;
  c.numa_nodes = std::min(2, nics);
  return c;
}

inline bool is_switch(const Topology& t, NodeId n) {
  return t.node(n).kind == NodeKind::Switch;
}

// Electrical switch ports in use: the switch ends of all cables.
inline int switch_port_ends(const Topology& t) {
  int ends = 0;
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::Cable) continue;
    ends += is_switch(t, l.a) ? 1 : 0;
    ends += is_switch(t, l.b) ? 1 : 0;
  }
  return ends;
}

inline int cables_at(const Topology& t, NodeId n) {
  int c = 0;
  for (LinkId l : t.links_of(n)) {
    c += t.link(l).kind == LinkKind::Cable ? 1 : 0;
  }
  return c;
}

inline std::vector<NodeId> nodes_of(const Topology& t, NodeKind kind, int tier = 0) {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes().size()); ++n) {
    if (t.node(n).kind == kind && (tier == 0 || t.node(n).tier == tier)) out.push_back(n);
  }
  return out;
}

// Cable neighbours of `n` that satisfy `pred`.
inline std::vector<NodeId> neighbours(const Topology& t, NodeId n,
                                      const std::function<bool(const Node&)>& pred) {
  std::vector<NodeId> out;
  for (LinkId l : t.links_of(n)) {
    if (t.link(l).kind != LinkKind::Cable) continue;
    const NodeId o = t.other_end(l, n);
    if (pred(t.node(o))) out.push_back(o);
  }
  return out;
}

inline int nic_neighbours(const Topology& t, NodeId n) {
  return static_cast<int>(
      neighbours(t, n, [](const Node& x) { return x.kind == NodeKind::Nic; }).size());
}

inline int tier_neighbours(const Topology& t, NodeId n, int tier) {
  return static_cast<int>(neighbours(t, n, [tier](const Node& x) {
                            return x.kind == NodeKind::Switch && x.tier == tier;
                          }).size());
}

// Invariants every built fabric satisfies.
inline void expect_well_formed(const Topology& t) {
  const ClusterSpec& c = t.cluster();
  for (int s = 0; s < c.servers; ++s) {
    for (int j = 0; j < c.nics_per_server; ++j) {
      const NodeId nic = t.nic(s, j);
      ASSERT_EQ(cables_at(t, nic), 1) << t.name(nic);
      const NodeId peer = neighbours(t, nic, [](const Node&) { return true; }).front();
      const Node& p = t.node(peer);
      switch (t.node(nic).role) {
        case NicRole::Eps:
          ASSERT_EQ(p.kind, NodeKind::Switch) << t.name(nic);
          ASSERT_EQ(p.tier, 1) << t.name(nic);
          break;
        case NicRole::Ocs:
          ASSERT_EQ(p.kind, NodeKind::Ocs) << t.name(nic);
          break;
        case NicRole::PatchPanel:
          ASSERT_EQ(p.kind, NodeKind::PatchPanel) << t.name(nic);
          break;
        case NicRole::None:
          FAIL() << t.name(nic) << " has no role";
      }
    }
  }
  std::set<std::string> names;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes().size()); ++n) {
    const Node& node = t.node(n);
    ASSERT_TRUE(names.insert(t.name(n)).second) << "duplicate name " << t.name(n);
    if (node.kind == NodeKind::Switch || node.kind == NodeKind::Ocs ||
        node.kind == NodeKind::PatchPanel) {
      ASSERT_LE(cables_at(t, n), node.radix) << t.name(n);
      ASSERT_GE(cables_at(t, n), 1) << t.name(n) << " is unused";
    }
    if (node.kind == NodeKind::Switch) {
      ASSERT_GE(node.tier, 1);
      ASSERT_LE(node.tier, t.tiers());
    }
  }
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::Cable) continue;
    EXPECT_EQ(l.rate, c.link);
    EXPECT_EQ(l.latency, c.link_latency);
    // Switch-to-switch cables join adjacent tiers only.
    if (is_switch(t, l.a) && is_switch(t, l.b)) {
      ASSERT_EQ(std::abs(t.node(l.a).tier - t.node(l.b).tier), 1);
    }
  }
}

// The error build_fabric throws for `spec`, or a failure if it does not throw one.
inline Error build_error(const std::string& spec, const ClusterSpec& c) {
  try {
    build_fabric(spec, c);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << spec << " built without an error";
  return Error("no error");
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace mfabric::fabric::builders_test
