#include "report/topology_report.h"

#include <fmt/format.h>

#include <map>

#include "core/output_text.h"
#include "report/format.h"
#include "report/table.h"

namespace mfabric::report {
namespace {

using fabric::LinkKind;
using fabric::NicRole;
using fabric::NodeKind;

struct Counts {
  std::map<std::string, std::int64_t> nodes;
  std::map<std::string, std::int64_t> nics_by_role;
  std::map<int, std::int64_t> switches_by_tier;
  std::map<std::string, std::int64_t> links;
  std::int64_t switch_ports_used = 0;
};

Counts count(const fabric::Topology& t) {
  Counts c;
  for (const auto kind : {NodeKind::Gpu, NodeKind::NvSwitch, NodeKind::Nic, NodeKind::Switch,
                          NodeKind::Ocs, NodeKind::PatchPanel}) {
    c.nodes[fabric::to_string(kind)] = 0;
  }
  for (const auto kind : {LinkKind::NvLink, LinkKind::Pcie, LinkKind::Cable}) {
    c.links[fabric::to_string(kind)] = 0;
  }
  for (const fabric::Node& n : t.nodes()) {
    ++c.nodes[fabric::to_string(n.kind)];
    if (n.kind == NodeKind::Nic) ++c.nics_by_role[fabric::to_string(n.role)];
    if (n.kind == NodeKind::Switch) ++c.switches_by_tier[n.tier];
  }
  for (const fabric::Link& l : t.links()) {
    ++c.links[fabric::to_string(l.kind)];
    if (l.kind != LinkKind::Cable) continue;
    c.switch_ports_used += t.node(l.a).kind == NodeKind::Switch ? 1 : 0;
    c.switch_ports_used += t.node(l.b).kind == NodeKind::Switch ? 1 : 0;
  }
  return c;
}

// Text inside a Graphviz double-quoted string: valid UTF-8 without line breaks, with quotes and
// backslashes escaped.
std::string dot_string(const std::string& text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string tier_name(const fabric::Topology& t, int tier) {
  if (tier == 1) return "leaf";
  if (tier == 2) return t.tiers() >= 3 ? "aggregation" : "spine";
  return "core";
}

}  // namespace

nlohmann::json topology_json(const fabric::Topology& t) {
  const Counts c = count(t);
  nlohmann::json j;
  j["fabric"] = t.spec();
  j["kind"] = t.kind();
  j["params"] = t.params();
  j["servers"] = t.cluster().servers;
  j["gpus"] = c.nodes.at("gpu");
  j["link_gbps"] = t.cluster().link.gbps();
  j["tiers"] = t.tiers();
  j["circuit_degree"] = t.circuit_degree();
  j["reconfiguration_delay_s"] = t.reconfiguration_delay().seconds();
  j["nodes"] = c.nodes;
  j["nics_by_role"] = c.nics_by_role;
  nlohmann::json tiers = nlohmann::json::object();
  for (const auto& [tier, n] : c.switches_by_tier)
    tiers[tier_name(t, tier)] = n;
  j["switches_by_tier"] = tiers;
  j["switch_ports_used"] = c.switch_ports_used;
  j["links"] = c.links;
  nlohmann::json regions = {{"count", t.regions().size()}};
  if (!t.regions().empty()) {
    regions["servers_per_region"] = t.regions().front().servers;
    regions["ports_per_region"] = t.regions().front().ports;
    regions["ocs_devices"] = c.nodes.at("ocs");
  }
  j["regions"] = regions;
  return j;
}

std::string topology_text(const fabric::Topology& t) {
  const Counts c = count(t);
  std::string out =
      fmt::format("fabric {}: {} servers x {} GPUs, {} NICs of {} per server\n",
                  printable(t.spec()), t.cluster().servers, t.cluster().gpus_per_server,
                  t.cluster().nics_per_server, to_string(t.cluster().link));
  // Kinds in the order a reader walks the fabric: server inside, then the network.
  Table nodes({"nodes", "count"});
  auto add = [&](const std::string& label, std::int64_t n) {
    nodes.add_row({label, with_commas(n)});
  };
  add("gpu", c.nodes.at("gpu"));
  add("nvswitch", c.nodes.at("nvswitch"));
  add("nic", c.nodes.at("nic"));
  for (const auto& [role, n] : c.nics_by_role)
    add("  on " + role, n);
  if (c.nodes.at("switch") > 0) add("switch", c.nodes.at("switch"));
  for (const auto& [tier, n] : c.switches_by_tier)
    add("  " + tier_name(t, tier), n);
  if (c.nodes.at("ocs") > 0) add("ocs", c.nodes.at("ocs"));
  if (c.nodes.at("patch-panel") > 0) add("patch-panel", c.nodes.at("patch-panel"));
  out += "\n" + nodes.render();
  Table links({"links", "count"});
  for (const auto& [kind, n] : c.links)
    links.add_row({kind, with_commas(n)});
  out += "\n" + links.render();
  out += fmt::format("\nelectrical tiers: {}   switch ports used: {}\n", t.tiers(),
                     with_commas(c.switch_ports_used));
  if (t.circuit_degree() > 0) {
    out += fmt::format("optical circuit degree per server: {}\n", t.circuit_degree());
  }
  if (!t.regions().empty()) {
    const fabric::Region& r = t.regions().front();
    out += fmt::format(
        "regions: {} of {} servers, {} OCS ports each, on {} OCS device(s); reconfiguration {}\n",
        t.regions().size(), r.servers, r.ports, c.nodes.at("ocs"),
        to_string(t.reconfiguration_delay()));
  }
  if (!t.params().empty()) {
    std::string ps;
    for (const auto& [k, v] : t.params())
      ps += fmt::format("{}{}={}", ps.empty() ? "" : ", ", k, v);
    out += "parameters: " + printable(ps) + "\n";
  }
  return out;
}

std::string topology_dot(const fabric::Topology& t) {
  std::string out = fmt::format("// mfabric topology {} ({} servers)\ngraph \"{}\" {{\n",
                                printable(t.spec()), t.cluster().servers, dot_string(t.spec()));
  out += "  graph [rankdir=BT, splines=false, nodesep=0.1];\n  node [fontsize=9];\n";
  const int servers = t.cluster().servers;
  for (int s = 0; s < servers; ++s) {
    out += fmt::format("  subgraph cluster_s{} {{\n    label=\"server {}\";\n", s, s);
    for (int g = 0; g < t.cluster().gpus_per_server; ++g) {
      out += fmt::format("    n{} [label=\"gpu{}\", shape=box];\n", t.gpu(s, g), g);
    }
    out += fmt::format("    n{} [label=\"nvswitch\", shape=box, style=filled, fillcolor=gray90];\n",
                       t.nvswitch(s));
    for (int k = 0; k < t.cluster().nics_per_server; ++k) {
      const fabric::NodeId id = t.nic(s, k);
      out += fmt::format("    n{} [label=\"nic{}\\n{}\", shape=ellipse];\n", id, k,
                         fabric::to_string(t.node(id).role));
    }
    out += "  }\n";
  }
  std::map<int, std::vector<fabric::NodeId>> by_tier;
  for (fabric::NodeId id = 0; id < static_cast<fabric::NodeId>(t.nodes().size()); ++id) {
    const fabric::Node& n = t.node(id);
    if (n.kind == NodeKind::Switch) {
      by_tier[n.tier].push_back(id);
    } else if (n.kind == NodeKind::Ocs || n.kind == NodeKind::PatchPanel) {
      out += fmt::format(
          "  n{} [label=\"{}\", shape=doubleoctagon, style=filled, "
          "fillcolor=lightyellow];\n",
          id, dot_string(t.name(id)));
    }
  }
  for (const auto& [tier, ids] : by_tier) {
    out += "  { rank=same;";
    for (fabric::NodeId id : ids) {
      out += fmt::format(" n{} [label=\"{}\", shape=box3d];", id, dot_string(t.name(id)));
    }
    out += " }\n";
  }
  for (const fabric::Link& l : t.links()) {
    const char* color = "black";
    if (l.kind == LinkKind::NvLink) color = "darkgreen";
    if (l.kind == LinkKind::Pcie) color = "gray50";
    if (l.kind == LinkKind::Cable) {
      const NodeKind ka = t.node(l.a).kind;
      const NodeKind kb = t.node(l.b).kind;
      const bool optical = ka == NodeKind::Ocs || kb == NodeKind::Ocs ||
                           ka == NodeKind::PatchPanel || kb == NodeKind::PatchPanel;
      color = optical ? "orange" : "steelblue";
    }
    out += fmt::format("  n{} -- n{} [color={}];\n", l.a, l.b, color);
  }
  out += "}\n";
  return out;
}

}  // namespace mfabric::report
