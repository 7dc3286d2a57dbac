// mfabric cost: bill of materials and network cost of one or more fabrics.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/output_text.h"
#include "fabric/builders.h"
#include "fabric/cost.h"
#include "report/cost_report.h"

namespace mfabric::cli {
namespace {

struct CostOptions {
  ClusterOptions cluster;
  std::vector<std::string> fabrics{"all"};
  std::string prices;
  std::string convention = "paper";
  bool json = false;
};

int run_cost(const CostOptions& o) {
  const fabric::CostConvention convention =
      with_context("", "--convention", [&] { return fabric::parse_convention(o.convention); });
  const fabric::PriceBook prices =
      o.prices.empty() ? fabric::PriceBook::paper_defaults() : fabric::PriceBook::load(o.prices);
  const fabric::ClusterSpec cluster = o.cluster.to_spec();
  // Fail on a missing link speed before building anything.
  try {
    prices.at(cluster.link);
  } catch (const Error& e) {
    throw Error("", "--link", e.message());
  }

  std::vector<report::CostResult> results;
  for (const std::string& name : expand_fabric_names(list_values(o.fabrics, "--fabric"))) {
    const fabric::Topology t = build_named_fabric(
        name, cluster, o.cluster.radix, max_memory_option(o.cluster.max_memory, "--max-memory"));
    results.push_back(report::evaluate_cost(t, convention, prices));
  }

  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results)
      out.push_back(report::cost_json(r));
    std::cout << json_text(results.size() == 1 ? out.front() : out) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "network cost: {} servers x {} GPUs, {} NICs per server at {}; {} convention; prices: {}\n\n",
      cluster.servers, cluster.gpus_per_server, cluster.nics_per_server, link_label(cluster.link),
      fabric::to_string(convention), o.prices.empty() ? "paper Table 4" : printable(o.prices));
  if (results.size() == 1) {
    std::cout << results.front().fabric << "\n" << report::cost_breakdown_table(results.front());
  } else {
    std::cout << report::cost_comparison_table(results);
  }
  return 0;
}

}  // namespace

Command register_cost(CLI::App& command) {
  auto o = std::make_shared<CostOptions>();
  CLI::App* app = &command;
  app->add_option("--fabric,--fabrics", o->fabrics,
                  fmt::format("Fabric to cost, NAME or NAME:key=value,... (repeatable); 'all' = "
                              "{}. See 'mfabric fabrics'",
                              fmt::join(fabric::default_comparison_fabrics(), ", ")))
      ->capture_default_str();
  o->cluster.add_to(*app);
  app->add_option("--prices", o->prices,
                  "YAML price file overriding the paper's Table 4 (docs/formats.md)");
  app->add_option("--convention", o->convention,
                  "How to count: paper (the paper's formulas, as compare and sweep count), built "
                  "(what the built topology holds), calculator (the authors' public calculator); "
                  "docs/cost-model.md")
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON: one object for one fabric, an array for several");
  return Command{app, [o] { return run_cost(*o); }};
}

}  // namespace mfabric::cli
