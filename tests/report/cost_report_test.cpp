// Cost output (report/cost_report.h): the largest prices a price file may hold give exact totals
// in the table and in JSON; prices beyond the cap are refused by name before any arithmetic.
#include "report/cost_report.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "fabric/builders.h"
#include "report/format.h"

namespace mfabric::report {
namespace {

fabric::Topology small_fat_tree() {
  fabric::ClusterSpec cluster;
  cluster.servers = 4;
  cluster.gpus_per_server = 1;
  cluster.nics_per_server = 1;
  return fabric::build_fabric(Spec::parse("fat-tree"), cluster);
}

TEST(CostReport, MaximumPricesPrintExactly) {
  const fabric::Topology t = small_fat_tree();
  fabric::PriceBook book;
  const double max = fabric::kMaxUnitPriceUsd;
  book.set(t.cluster().link, fabric::LinkPrices{max, max, max, max, max, max});
  book.set_fibre_length_m(fabric::kMaxFibreLengthM);
  const CostResult r = evaluate_cost(t, fabric::CostConvention::Built, book);
  // Every count times $1e9, plus fibres x 1e5 m x $1e9/m: whole dollars, exactly.
  const double expected = static_cast<double>(r.bom.nics + r.bom.transceivers + r.bom.switch_ports +
                                              r.bom.ocs_ports + r.bom.patch_panel_ports) *
                              max +
                          static_cast<double>(r.bom.fibres) * fabric::kMaxFibreLengthM * max;
  EXPECT_DOUBLE_EQ(r.cost.total(), expected);
  const std::string table = cost_breakdown_table(r);
  EXPECT_EQ(table.find("-$"), std::string::npos) << table;
  EXPECT_NE(table.find(dollars(expected)), std::string::npos) << table;
  const nlohmann::json j = nlohmann::json::parse(json_text(cost_json(r)));
  EXPECT_DOUBLE_EQ(j.at("cost_usd").at("total").get<double>(), expected);
}

TEST(CostReport, PricesBeyondTheCapAreRefusedByName) {
  const fabric::Topology t = small_fat_tree();
  fabric::PriceBook book = fabric::PriceBook::paper_defaults();
  fabric::LinkPrices prices = book.at(t.cluster().link);
  prices.nic = 1e16;
  book.set(t.cluster().link, prices);
  try {
    evaluate_cost(t, fabric::CostConvention::Built, book);
    FAIL() << "priced a $1e16 NIC";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "nic");
  }
  book = fabric::PriceBook::paper_defaults();
  book.set_fibre_length_m(1e300);
  EXPECT_THROW(evaluate_cost(t, fabric::CostConvention::Built, book), Error);
}

}  // namespace
}  // namespace mfabric::report
