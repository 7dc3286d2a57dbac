// mfabric topology: what a fabric is made of, as text, JSON or Graphviz.
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "report/topology_report.h"

namespace mfabric::cli {
namespace {

struct TopologyOptions {
  ClusterOptions cluster;
  std::string fabric = "mfabric";
  bool json = false;
  bool dot = false;
};

int run_topology(const TopologyOptions& o) {
  const fabric::ClusterSpec cluster = o.cluster.to_spec();
  const fabric::Topology t = build_named_fabric(
      o.fabric, cluster, o.cluster.radix, max_memory_option(o.cluster.max_memory, "--max-memory"));
  if (o.json) {
    std::cout << json_text(report::topology_json(t)) << "\n";
  } else if (o.dot) {
    std::cout << report::topology_dot(t);
  } else {
    std::cout << report::topology_text(t);
  }
  return 0;
}

}  // namespace

Command register_topology(CLI::App& command) {
  auto o = std::make_shared<TopologyOptions>();
  CLI::App* app = &command;
  app->add_option("--fabric", o->fabric,
                  "Fabric, NAME or NAME:key=value,...; see 'mfabric fabrics'")
      ->capture_default_str();
  o->cluster.add_to(*app);
  auto* json = app->add_flag("--json", o->json, "Print the summary as JSON");
  app->add_flag("--dot", o->dot, "Print the whole topology as a Graphviz graph")->excludes(json);
  return Command{app, [o] { return run_topology(*o); }};
}

}  // namespace mfabric::cli
