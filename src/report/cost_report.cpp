#include "report/cost_report.h"

#include <fmt/format.h>

#include "report/format.h"
#include "report/table.h"

namespace mfabric::report {

CostResult evaluate_cost(const fabric::Topology& topology, fabric::CostConvention convention,
                         const fabric::PriceBook& prices) {
  CostResult r;
  r.fabric = topology.spec();
  r.kind = topology.kind();
  r.params = topology.params();
  r.servers = topology.cluster().servers;
  r.link = topology.cluster().link;
  r.tiers = topology.tiers();
  r.convention = convention;
  const std::vector<fabric::RatedBill> parts = fabric::bills_by_rate(topology, convention);
  r.bom = fabric::total_bill(parts);
  r.fibre_length_m = prices.fibre_length_m();
  r.cost = fabric::price_parts(parts, prices);
  r.prices = prices.at(topology.cluster().link);
  if (parts.size() != 1 || parts.front().rate != topology.cluster().link) {
    // Parts at several rates: the unit price of a component is its mean over the parts.
    const auto mean = [](double cost, std::int64_t count, double fallback) {
      return count > 0 ? cost / static_cast<double>(count) : fallback;
    };
    fabric::LinkPrices& p = r.prices;
    p.nic = mean(r.cost.nics, r.bom.nics, p.nic);
    p.transceiver = mean(r.cost.transceivers, r.bom.transceivers, p.transceiver);
    p.switch_port = mean(r.cost.switch_ports, r.bom.switch_ports, p.switch_port);
    p.ocs_port = mean(r.cost.ocs_ports, r.bom.ocs_ports, p.ocs_port);
    p.patch_panel_port =
        mean(r.cost.patch_panel_ports, r.bom.patch_panel_ports, p.patch_panel_port);
  }
  return r;
}

nlohmann::json cost_json(const CostResult& r) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : r.params)
    params[k] = v;
  const double total = r.cost.total();
  return {
      {"fabric", r.fabric},
      {"kind", r.kind},
      {"params", params},
      {"servers", r.servers},
      {"link_gbps", r.link.gbps()},
      {"tiers", r.tiers},
      {"convention", fabric::to_string(r.convention)},
      {"fibre_length_m", r.fibre_length_m},
      {"bom",
       {{"nics", r.bom.nics},
        {"transceivers", r.bom.transceivers},
        {"switch_ports", r.bom.switch_ports},
        {"ocs_ports", r.bom.ocs_ports},
        {"patch_panel_ports", r.bom.patch_panel_ports},
        {"fibres", r.bom.fibres}}},
      {"cost_usd",
       {{"total", total},
        {"per_server", r.servers > 0 ? total / r.servers : 0.0},
        {"by_component",
         {{"nics", r.cost.nics},
          {"transceivers", r.cost.transceivers},
          {"switch_ports", r.cost.switch_ports},
          {"ocs_ports", r.cost.ocs_ports},
          {"patch_panel_ports", r.cost.patch_panel_ports},
          {"fibres", r.cost.fibres}}}}},
  };
}

std::string cost_comparison_table(const std::vector<CostResult>& results) {
  if (results.empty()) return "";
  const std::string base = results.front().fabric;
  Table t({"fabric", "tiers", "NICs", "transceivers", "switch ports", "OCS ports", "panel ports",
           "fibres", "cost", "per server", "vs " + base});
  const double base_total = results.front().cost.total();
  for (const CostResult& r : results) {
    const double total = r.cost.total();
    t.add_row({r.fabric, std::to_string(r.tiers), with_commas(r.bom.nics),
               with_commas(r.bom.transceivers), with_commas(r.bom.switch_ports),
               with_commas(r.bom.ocs_ports), with_commas(r.bom.patch_panel_ports),
               with_commas(r.bom.fibres), dollars(total), dollars(total / r.servers),
               base_total > 0 ? ratio(total / base_total) : "-"});
  }
  return t.render();
}

std::string cost_breakdown_table(const CostResult& r) {
  Table t({"component", "count", "unit price", "cost"});
  auto row = [&](const char* name, std::int64_t count, double unit, double cost) {
    t.add_row({name, with_commas(count), dollars_and_cents(unit), dollars(cost)});
  };
  row("NICs", r.bom.nics, r.prices.nic, r.cost.nics);
  row("transceivers", r.bom.transceivers, r.prices.transceiver, r.cost.transceivers);
  row("switch ports", r.bom.switch_ports, r.prices.switch_port, r.cost.switch_ports);
  row("OCS ports", r.bom.ocs_ports, r.prices.ocs_port, r.cost.ocs_ports);
  row("patch-panel ports", r.bom.patch_panel_ports, r.prices.patch_panel_port,
      r.cost.patch_panel_ports);
  row("fibres", r.bom.fibres, r.prices.fibre_per_m * r.fibre_length_m, r.cost.fibres);
  t.add_row({"total", "", "", dollars(r.cost.total())});
  return t.render();
}

}  // namespace mfabric::report
