// Presenting network cost: the text tables and the JSON object of `mfabric cost`.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/json_text.h"  // the JSON these functions return is printed with json_text()
#include "fabric/cost.h"
#include "fabric/topology.h"

namespace mfabric::report {

struct CostResult {
  std::string fabric;  // canonical spec text, e.g. "fat-tree:oversubscription=3"
  std::string kind;
  std::map<std::string, std::string> params;  // resolved builder parameters
  int servers = 0;
  Rate link;
  int tiers = 0;
  fabric::CostConvention convention = fabric::CostConvention::Built;
  fabric::BillOfMaterials bom;
  fabric::LinkPrices prices;
  double fibre_length_m = 0;
  fabric::CostBreakdown cost;
};

// Counts and prices `topology` under `convention`.
CostResult evaluate_cost(const fabric::Topology& topology, fabric::CostConvention convention,
                         const fabric::PriceBook& prices);

// {"fabric", "servers", "link_gbps", "convention", "bom": {...}, "cost_usd": {"total",
// "per_server", "by_component": {...}}, plus "kind", "params", "tiers", "fibre_length_m"}.
nlohmann::json cost_json(const CostResult& r);

// One row per fabric with the bill of materials, the total, the cost per server and the ratio
// to the first row.
std::string cost_comparison_table(const std::vector<CostResult>& results);
// One fabric: count, unit price and cost per component.
std::string cost_breakdown_table(const CostResult& r);

}  // namespace mfabric::report
