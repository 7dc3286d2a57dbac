// Bill of materials and cost. Every expected count and dollar figure is worked out by hand here
// from the paper's formulas and Table 4 (reference section 6), never by calling the code under
// test, so that a wrong formula cannot agree with itself.
#include "fabric/cost.h"

#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "fabric/builders.h"
#include "fabric/ocs_params.h"

namespace mfabric::fabric {
namespace {

// Table 4, copied here on purpose (not read from PriceBook::paper_defaults()).
// Order: transceiver, nic, switch_port, ocs_port, patch_panel_port, fibre_per_m.
const LinkPrices kTable4_100G{99, 659, 187, 520, 100, 0.3};
const LinkPrices kTable4_200G{239, 1079, 374, 520, 100, 0.3};
const LinkPrices kTable4_400G{659, 1499, 1090, 520, 100, 0.3};
const LinkPrices kTable4_800G{1399, 2248, 1400, 520, 100, 0.3};
// 500 m x $0.3/m.
constexpr double kFibre = 150;

struct PaperCase {
  const char* name;
  const char* kind;
  double oversubscription;
  int alpha;
  CostConvention convention;
  BillOfMaterials bom;
  std::array<double, 4> totals;  // 100G, 200G, 400G, 800G
};

// 128 servers x 8 NICs = 1024 NICs throughout.
//
// fat-tree 1:1: edge-down 1024, edge-up 1024, aggregation 2048, core 2048 -> 6144 switch ports;
//   transceivers 6144 + 1024 = 7168; fibres 7168 / 2 = 3584.
// fat-tree 3:1: edge-up ceil(1024 / 3) = ceil(341.33) = 342, aggregation 684, core 684 ->
//   1024 + 342 + 684 + 684 = 2734 switch ports; transceivers 3758; fibres 1879.
// rail-optimized: the paper charges it exactly like the fat-tree.
// rail-only: no core: 1024 + 1024 + 2048 = 4096 switch ports; transceivers 5120; fibres 2560.
// topoopt: 1024 NICs, transceivers, patch-panel ports and fibres.
// mfabric (alpha 6): EPS NICs E = 128 x 2 = 256; EPS switch ports 256 + 256 + 512 + 512 = 1536;
//   transceivers 1536 + 1024 = 2560; OCS ports 1024; fibres (1536 + 256) / 2 + 128 x 6 =
//   896 + 768 = 1664. The calculator convention drops the 1536 switch ports and their
//   transceivers (transceivers 1024) and keeps the fibres.
const std::vector<PaperCase>& paper_cases() {
  static const std::vector<PaperCase> cases{
      {"fat-tree 1:1",
       "fat-tree",
       1,
       0,
       CostConvention::Paper,
       {.nics = 1024, .transceivers = 7168, .switch_ports = 6144, .fibres = 3584},
       {1024 * 659.0 + 7168 * 99.0 + 6144 * 187.0 + 3584 * kFibre,        // 3,070,976
        1024 * 1079.0 + 7168 * 239.0 + 6144 * 374.0 + 3584 * kFibre,      // 5,653,504
        1024 * 1499.0 + 7168 * 659.0 + 6144 * 1090.0 + 3584 * kFibre,     // 13,493,248
        1024 * 2248.0 + 7168 * 1399.0 + 6144 * 1400.0 + 3584 * kFibre}},  // 21,469,184
      {"fat-tree 3:1",
       "fat-tree",
       3,
       0,
       CostConvention::Paper,
       {.nics = 1024, .transceivers = 3758, .switch_ports = 2734, .fibres = 1879},
       {1024 * 659.0 + 3758 * 99.0 + 2734 * 187.0 + 1879 * kFibre,
        1024 * 1079.0 + 3758 * 239.0 + 2734 * 374.0 + 1879 * kFibre,
        1024 * 1499.0 + 3758 * 659.0 + 2734 * 1090.0 + 1879 * kFibre,
        1024 * 2248.0 + 3758 * 1399.0 + 2734 * 1400.0 + 1879 * kFibre}},
      {"rail-optimized",
       "rail-optimized",
       1,
       0,
       CostConvention::Paper,
       {.nics = 1024, .transceivers = 7168, .switch_ports = 6144, .fibres = 3584},
       {1024 * 659.0 + 7168 * 99.0 + 6144 * 187.0 + 3584 * kFibre,
        1024 * 1079.0 + 7168 * 239.0 + 6144 * 374.0 + 3584 * kFibre,
        1024 * 1499.0 + 7168 * 659.0 + 6144 * 1090.0 + 3584 * kFibre,
        1024 * 2248.0 + 7168 * 1399.0 + 6144 * 1400.0 + 3584 * kFibre}},
      {"rail-only",
       "rail-only",
       1,
       0,
       CostConvention::Paper,
       {.nics = 1024, .transceivers = 5120, .switch_ports = 4096, .fibres = 2560},
       {1024 * 659.0 + 5120 * 99.0 + 4096 * 187.0 + 2560 * kFibre,
        1024 * 1079.0 + 5120 * 239.0 + 4096 * 374.0 + 2560 * kFibre,
        1024 * 1499.0 + 5120 * 659.0 + 4096 * 1090.0 + 2560 * kFibre,
        1024 * 2248.0 + 5120 * 1399.0 + 4096 * 1400.0 + 2560 * kFibre}},
      {"topoopt",
       "topoopt",
       1,
       0,
       CostConvention::Paper,
       {.nics = 1024, .transceivers = 1024, .patch_panel_ports = 1024, .fibres = 1024},
       {1024 * (659.0 + 99.0 + 100.0 + kFibre), 1024 * (1079.0 + 239.0 + 100.0 + kFibre),
        1024 * (1499.0 + 659.0 + 100.0 + kFibre), 1024 * (2248.0 + 1399.0 + 100.0 + kFibre)}},
      {"mfabric paper",
       "mfabric",
       1,
       6,
       CostConvention::Paper,
       {.nics = 1024,
        .transceivers = 2560,
        .switch_ports = 1536,
        .ocs_ports = 1024,
        .fibres = 1664},
       {1024 * 659.0 + 2560 * 99.0 + 1536 * 187.0 + 1024 * 520.0 + 1664 * kFibre,
        1024 * 1079.0 + 2560 * 239.0 + 1536 * 374.0 + 1024 * 520.0 + 1664 * kFibre,
        1024 * 1499.0 + 2560 * 659.0 + 1536 * 1090.0 + 1024 * 520.0 + 1664 * kFibre,  // 5,678,336
        1024 * 2248.0 + 2560 * 1399.0 + 1536 * 1400.0 + 1024 * 520.0 + 1664 * kFibre}},
      {"mfabric calculator",
       "mfabric",
       1,
       6,
       CostConvention::Calculator,
       {.nics = 1024, .transceivers = 1024, .ocs_ports = 1024, .fibres = 1664},
       {1024 * 659.0 + 1024 * 99.0 + 1024 * 520.0 + 1664 * kFibre,
        1024 * 1079.0 + 1024 * 239.0 + 1024 * 520.0 + 1664 * kFibre,
        1024 * 1499.0 + 1024 * 659.0 + 1024 * 520.0 + 1664 * kFibre,
        1024 * 2248.0 + 1024 * 1399.0 + 1024 * 520.0 + 1664 * kFibre}},
  };
  return cases;
}

TEST(PaperBillOfMaterials, CountsAndDollarsForEveryKindAndSpeed) {
  const std::array<LinkPrices, 4> table4{kTable4_100G, kTable4_200G, kTable4_400G, kTable4_800G};
  const std::array<const char*, 4> speeds{"100G", "200G", "400G", "800G"};
  for (const PaperCase& c : paper_cases()) {
    SCOPED_TRACE(c.name);
    const BillOfMaterials bom =
        paper_bill_of_materials(c.kind, 128, 8, c.alpha, c.oversubscription, c.convention);
    EXPECT_EQ(bom, c.bom);
    EXPECT_EQ(bom.nics, c.bom.nics);
    EXPECT_EQ(bom.transceivers, c.bom.transceivers);
    EXPECT_EQ(bom.switch_ports, c.bom.switch_ports);
    EXPECT_EQ(bom.ocs_ports, c.bom.ocs_ports);
    EXPECT_EQ(bom.patch_panel_ports, c.bom.patch_panel_ports);
    EXPECT_EQ(bom.fibres, c.bom.fibres);
    for (std::size_t s = 0; s < speeds.size(); ++s) {
      SCOPED_TRACE(speeds[s]);
      EXPECT_DOUBLE_EQ(price(bom, table4[s], 500).total(), c.totals[s]);
    }
  }
}

TEST(PaperBillOfMaterials, HeadlineFiguresAt400G) {
  const LinkPrices& p = kTable4_400G;
  const CostBreakdown fat_tree =
      price(paper_bill_of_materials("fat-tree", 128, 8, 0, 1, CostConvention::Paper), p, 500);
  // 1024 x 1499 = 1,534,976; 7168 x 659 = 4,723,712; 6144 x 1090 = 6,696,960;
  // 3584 x 150 = 537,600.
  EXPECT_DOUBLE_EQ(fat_tree.nics, 1'534'976);
  EXPECT_DOUBLE_EQ(fat_tree.transceivers, 4'723'712);
  EXPECT_DOUBLE_EQ(fat_tree.switch_ports, 6'696'960);
  EXPECT_DOUBLE_EQ(fat_tree.ocs_ports, 0);
  EXPECT_DOUBLE_EQ(fat_tree.patch_panel_ports, 0);
  EXPECT_DOUBLE_EQ(fat_tree.fibres, 537'600);
  EXPECT_DOUBLE_EQ(fat_tree.total(), 13'493'248);

  const CostBreakdown mfabric =
      price(paper_bill_of_materials("mfabric", 128, 8, 6, 1, CostConvention::Paper), p, 500);
  // 1,534,976 + 2560 x 659 = 1,687,040 + 1536 x 1090 = 1,674,240 + 1024 x 520 = 532,480
  // + 1664 x 150 = 249,600.
  EXPECT_DOUBLE_EQ(mfabric.nics, 1'534'976);
  EXPECT_DOUBLE_EQ(mfabric.transceivers, 1'687'040);
  EXPECT_DOUBLE_EQ(mfabric.switch_ports, 1'674'240);
  EXPECT_DOUBLE_EQ(mfabric.ocs_ports, 532'480);
  EXPECT_DOUBLE_EQ(mfabric.fibres, 249'600);
  EXPECT_DOUBLE_EQ(mfabric.total(), 5'678'336);
  // About 2.4x cheaper at 400G (the paper: about 2.0x averaged over the four speeds).
  EXPECT_NEAR(fat_tree.total() / mfabric.total(), 2.376, 0.001);

  // TopoOpt: 1024 x (1499 + 659 + 100 + 150) = 1024 x 2408.
  const CostBreakdown topoopt =
      price(paper_bill_of_materials("topoopt", 128, 8, 0, 1, CostConvention::Paper), p, 500);
  EXPECT_DOUBLE_EQ(topoopt.patch_panel_ports, 102'400);
  EXPECT_DOUBLE_EQ(topoopt.total(), 2'465'792);
}

TEST(PaperBillOfMaterials, MfabricIsAboutTwiceCheaperOnAverage) {
  // Paper: "network cost about 2.0x lower than fat-tree on average" over 100-800G.
  const std::array<LinkPrices, 4> table4{kTable4_100G, kTable4_200G, kTable4_400G, kTable4_800G};
  double sum = 0;
  for (const LinkPrices& p : table4) {
    const double ft =
        price(paper_bill_of_materials("fat-tree", 128, 8, 0, 1, CostConvention::Paper), p, 500)
            .total();
    const double mf =
        price(paper_bill_of_materials("mfabric", 128, 8, 6, 1, CostConvention::Paper), p, 500)
            .total();
    sum += ft / mf;
  }
  EXPECT_NEAR(sum / 4, 2.0, 0.1);
}

TEST(PaperBillOfMaterials, OversubscriptionRoundsUplinksUp) {
  // 10 servers x 1 NIC, 3:1: edge-up = ceil(10 / 3) = 4, aggregation 8, core 8 -> 30 ports;
  // transceivers 30 + 10 = 40; fibres 20.
  EXPECT_EQ(paper_bill_of_materials("fat-tree", 10, 1, 0, 3, CostConvention::Paper),
            (BillOfMaterials{.nics = 10, .transceivers = 40, .switch_ports = 30, .fibres = 20}));
  // An exact quotient must not be rounded up: 300 / 3 = 100 -> 300 + 100 + 200 + 200 = 800.
  EXPECT_EQ(paper_bill_of_materials("fat-tree", 300, 1, 0, 3, CostConvention::Paper).switch_ports,
            800);
  // 1.5:1 on 9 NICs: edge-up 6, aggregation 12, core 12 -> 39 ports.
  EXPECT_EQ(
      paper_bill_of_materials("rail-optimized", 9, 1, 0, 1.5, CostConvention::Paper).switch_ports,
      39);
  // Odd transceiver count: 1 NIC, 3:1: edge-up 1, aggregation 2, core 2 -> 6 ports; 7
  // transceivers -> ceil(7 / 2) = 4 fibres.
  EXPECT_EQ(paper_bill_of_materials("fat-tree", 1, 1, 0, 3, CostConvention::Paper),
            (BillOfMaterials{.nics = 1, .transceivers = 7, .switch_ports = 6, .fibres = 4}));
}

TEST(PaperBillOfMaterials, RailOnlyIgnoresOversubscription) {
  EXPECT_EQ(paper_bill_of_materials("rail-only", 128, 8, 0, 3, CostConvention::Paper),
            paper_bill_of_materials("rail-only", 128, 8, 0, 1, CostConvention::Paper));
}

TEST(PaperBillOfMaterials, PaperAndCalculatorDifferOnlyForMfabric) {
  for (const char* kind : {"fat-tree", "rail-optimized", "rail-only", "topoopt"}) {
    EXPECT_EQ(paper_bill_of_materials(kind, 16, 8, 0, 1, CostConvention::Paper),
              paper_bill_of_materials(kind, 16, 8, 0, 1, CostConvention::Calculator))
        << kind;
  }
  // mfabric, 4 servers, alpha 3: E = 4 x 5 = 20 EPS NICs; EPS ports 6 x 20 = 120.
  // Paper: transceivers 120 + 32 = 152; calculator: 32. Both: OCS ports 32, fibres
  // (120 + 20) / 2 + 4 x 3 = 70 + 12 = 82.
  EXPECT_EQ(
      paper_bill_of_materials("mfabric", 4, 8, 3, 1, CostConvention::Paper),
      (BillOfMaterials{
          .nics = 32, .transceivers = 152, .switch_ports = 120, .ocs_ports = 32, .fibres = 82}));
  EXPECT_EQ(paper_bill_of_materials("mfabric", 4, 8, 3, 1, CostConvention::Calculator),
            (BillOfMaterials{.nics = 32, .transceivers = 32, .ocs_ports = 32, .fibres = 82}));
}

TEST(PaperBillOfMaterials, MfabricEpsIsChargedOneToOne) {
  EXPECT_EQ(paper_bill_of_materials("mfabric", 128, 8, 6, 3, CostConvention::Paper),
            paper_bill_of_materials("mfabric", 128, 8, 6, 1, CostConvention::Paper));
}

TEST(PaperBillOfMaterials, MfabricExtremeAlpha) {
  // alpha 8: no EPS at all; alpha 0: the EPS fat-tree plus an (idle) OCS port per NIC.
  EXPECT_EQ(paper_bill_of_materials("mfabric", 2, 8, 8, 1, CostConvention::Paper),
            (BillOfMaterials{.nics = 16, .transceivers = 16, .ocs_ports = 16, .fibres = 16}));
  // alpha 0: E = 16, ports 96, transceivers 112, fibres 56.
  EXPECT_EQ(
      paper_bill_of_materials("mfabric", 2, 8, 0, 1, CostConvention::Paper),
      (BillOfMaterials{
          .nics = 16, .transceivers = 112, .switch_ports = 96, .ocs_ports = 16, .fibres = 56}));
}

void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << e.what() << "' lacks '" << part << "'";
    }
  }
}

TEST(PaperBillOfMaterials, Errors) {
  expect_error([] { paper_bill_of_materials("dragonfly", 128, 8, 0, 1, CostConvention::Paper); },
               {"dragonfly", "fat-tree, rail-optimized, rail-only, topoopt, mfabric"});
  expect_error([] { paper_bill_of_materials("fat-tree", 128, 8, 0, 1, CostConvention::Built); },
               {"convention", "built", "count_bill_of_materials"});
  expect_error([] { paper_bill_of_materials("fat-tree", 0, 8, 0, 1, CostConvention::Paper); },
               {"servers", "at least 1"});
  expect_error([] { paper_bill_of_materials("fat-tree", 4, 0, 0, 1, CostConvention::Paper); },
               {"nics_per_server", "at least 1"});
  expect_error([] { paper_bill_of_materials("fat-tree", 4, 8, 0, 0, CostConvention::Paper); },
               {"oversubscription", "positive"});
  expect_error([] { paper_bill_of_materials("mfabric", 4, 8, 9, 1, CostConvention::Paper); },
               {"alpha", "between 0 and", "9"});
  expect_error([] { paper_bill_of_materials("mfabric", 4, 8, -1, 1, CostConvention::Paper); },
               {"alpha"});
}

TEST(CostConvention, ParseAndPrint) {
  for (CostConvention c :
       {CostConvention::Built, CostConvention::Paper, CostConvention::Calculator}) {
    EXPECT_EQ(parse_convention(to_string(c)), c);
  }
  EXPECT_STREQ(to_string(CostConvention::Built), "built");
  EXPECT_STREQ(to_string(CostConvention::Paper), "paper");
  EXPECT_STREQ(to_string(CostConvention::Calculator), "calculator");
  expect_error([] { parse_convention("Paper"); }, {"'Paper'", "built, paper, calculator"});
  expect_error([] { parse_convention(""); }, {"built, paper, calculator"});
}

TEST(Price, EachComponentTimesItsPrice) {
  const BillOfMaterials bom{.nics = 2,
                            .transceivers = 3,
                            .switch_ports = 5,
                            .ocs_ports = 7,
                            .patch_panel_ports = 11,
                            .fibres = 13};
  const LinkPrices prices{.transceiver = 10,
                          .nic = 100,
                          .switch_port = 1000,
                          .ocs_port = 10000,
                          .patch_panel_port = 100000,
                          .fibre_per_m = 2};
  const CostBreakdown cost = price(bom, prices, 40);
  EXPECT_DOUBLE_EQ(cost.nics, 200);
  EXPECT_DOUBLE_EQ(cost.transceivers, 30);
  EXPECT_DOUBLE_EQ(cost.switch_ports, 5000);
  EXPECT_DOUBLE_EQ(cost.ocs_ports, 70000);
  EXPECT_DOUBLE_EQ(cost.patch_panel_ports, 1100000);
  EXPECT_DOUBLE_EQ(cost.fibres, 13 * 40 * 2);
  EXPECT_DOUBLE_EQ(cost.total(), 200 + 30 + 5000 + 70000 + 1100000 + 1040);
  EXPECT_DOUBLE_EQ(price(bom, prices, 0).fibres, 0);
}

// --- built convention, on hand-made topologies (independent of the builders) ---

ClusterSpec tiny_cluster(int servers, int nics) {
  ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = 2;
  c.nics_per_server = nics;
  c.numa_nodes = 1;
  return c;
}

NodeId add_switch(Topology& t, int tier, int index) {
  return t.add_node(Node{.kind = NodeKind::Switch, .index = index, .tier = tier, .radix = 64});
}

void cable(Topology& t, NodeId a, NodeId b) {
  t.add_link(a, b, t.cluster().link, t.cluster().link_latency, LinkKind::Cable);
}

TEST(CountBillOfMaterials, OneSwitchStar) {
  // 2 servers x 2 NICs on one switch: 4 cables, 4 NIC + 4 switch transceivers, 4 switch ports.
  Topology t("star", "star", tiny_cluster(2, 2));
  t.add_servers();
  const NodeId sw = add_switch(t, 1, 0);
  for (int s = 0; s < 2; ++s) {
    for (int j = 0; j < 2; ++j)
      cable(t, t.nic(s, j), sw);
  }
  EXPECT_EQ(count_bill_of_materials(t),
            (BillOfMaterials{.nics = 4, .transceivers = 8, .switch_ports = 4, .fibres = 4}));
  EXPECT_EQ(bill_of_materials(t, CostConvention::Built), count_bill_of_materials(t));
}

TEST(CountBillOfMaterials, TwoTierClosHasThreePortsPerHost) {
  // 2 servers x 2 NICs; leaf s takes server s's NICs and has one uplink to each of 2 spines.
  // Host cables 4, leaf-spine cables 4 -> 8 fibres. Switch ports: leaf down 4 + leaf up 4 +
  // spine 4 = 12 = 3 per NIC (the paper's formula charges 6 per NIC: 24). Transceivers: 4 NIC
  // ends + 12 switch ends = 16.
  Topology t("fat-tree", "fat-tree", tiny_cluster(2, 2));
  t.add_servers();
  const NodeId leaf[2] = {add_switch(t, 1, 0), add_switch(t, 1, 1)};
  const NodeId spine[2] = {add_switch(t, 2, 0), add_switch(t, 2, 1)};
  for (int s = 0; s < 2; ++s) {
    for (int j = 0; j < 2; ++j)
      cable(t, t.nic(s, j), leaf[s]);
    for (NodeId sp : spine)
      cable(t, leaf[s], sp);
  }
  EXPECT_EQ(count_bill_of_materials(t),
            (BillOfMaterials{.nics = 4, .transceivers = 16, .switch_ports = 12, .fibres = 8}));
  EXPECT_EQ(paper_bill_of_materials("fat-tree", 2, 2, 0, 1, CostConvention::Paper).switch_ports,
            24);
}

TEST(CountBillOfMaterials, OpticalEndsArePassive) {
  // Server 0: NIC 0 to a switch, NIC 1 to an OCS. Server 1: NIC 0 to the switch, NIC 1 to a patch
  // panel. OCS and patch-panel ends carry no transceiver and no switch port.
  Topology t("mixed", "mixed", tiny_cluster(2, 2));
  t.add_servers();
  const NodeId sw = add_switch(t, 1, 0);
  const NodeId ocs = t.add_node(Node{.kind = NodeKind::Ocs, .index = 0, .radix = 16});
  const NodeId panel = t.add_node(Node{.kind = NodeKind::PatchPanel, .index = 0, .radix = 16});
  cable(t, t.nic(0, 0), sw);
  cable(t, t.nic(0, 1), ocs);
  cable(t, t.nic(1, 0), sw);
  cable(t, t.nic(1, 1), panel);
  // NICs 4; fibres 4; transceivers: 4 NIC ends + 2 switch ends = 6; switch ports 2; OCS 1;
  // patch panel 1.
  EXPECT_EQ(count_bill_of_materials(t), (BillOfMaterials{.nics = 4,
                                                         .transceivers = 6,
                                                         .switch_ports = 2,
                                                         .ocs_ports = 1,
                                                         .patch_panel_ports = 1,
                                                         .fibres = 4}));
}

TEST(CountBillOfMaterials, UnconnectedNicsStillCostANic) {
  Topology t("none", "none", tiny_cluster(3, 2));
  t.add_servers();
  // Only the internal NvLink and Pcie links exist; they are not network cost.
  EXPECT_EQ(count_bill_of_materials(t), (BillOfMaterials{.nics = 6}));
}

TEST(CountBillOfMaterials, CableIntoAGpuIsAnError) {
  Topology t("odd", "odd", tiny_cluster(1, 1));
  t.add_servers();
  const NodeId sw = add_switch(t, 1, 0);
  cable(t, t.gpu(0, 0), sw);
  expect_error([&] { count_bill_of_materials(t); }, {"s0.gpu0", "gpu", "cannot price"});
}

// --- bill_of_materials() reads kind and parameters from the topology ---

TEST(BillOfMaterials, PaperConventionReadsTopologyParameters) {
  ClusterSpec cluster;  // 128 servers x 8 NICs
  Topology ft("fat-tree", "fat-tree:oversubscription=3", cluster);
  ft.set_param("oversubscription", "3");
  ft.set_param("radix", "64");
  EXPECT_EQ(bill_of_materials(ft, CostConvention::Paper).switch_ports, 2734);

  Topology ro("rail-optimized", "rail-optimized", cluster);
  ro.set_param("oversubscription", "1");
  EXPECT_EQ(bill_of_materials(ro, CostConvention::Paper).switch_ports, 6144);

  // Without a recorded oversubscription the fat-tree is charged 1:1.
  Topology bare("fat-tree", "fat-tree", cluster);
  EXPECT_EQ(bill_of_materials(bare, CostConvention::Paper).switch_ports, 6144);

  Topology mf("mfabric", "mfabric:alpha=4", cluster);
  OcsParams ocs;
  ocs.alpha = 4;
  ocs.eps_link = ocs.ocs_link = cluster.link;
  mf.set_ocs(ocs);
  mf.set_param("oversubscription", "3");  // not used by the paper's mFabric formula
  // E = 128 x 4 = 512; ports 3072; transceivers 3072 + 1024 = 4096; fibres (3072 + 512) / 2 +
  // 512 = 1792 + 512 = 2304.
  EXPECT_EQ(bill_of_materials(mf, CostConvention::Paper), (BillOfMaterials{.nics = 1024,
                                                                           .transceivers = 4096,
                                                                           .switch_ports = 3072,
                                                                           .ocs_ports = 1024,
                                                                           .fibres = 2304}));
  EXPECT_EQ(bill_of_materials(mf, CostConvention::Calculator).switch_ports, 0);

  Topology topoopt("topoopt", "topoopt", cluster);
  EXPECT_EQ(bill_of_materials(topoopt, CostConvention::Paper).patch_panel_ports, 1024);

  Topology no_alpha("mfabric", "mfabric", cluster);
  expect_error([&] { bill_of_materials(no_alpha, CostConvention::Paper); }, {"alpha"});
}

// --- the comparison table in docs/cost-model.md ---

// 13493248 -> "13,493,248".
std::string dollars(double amount) {
  std::string digits = fmt::format("{:.0f}", amount);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return "$" + digits;
}

// The paper-convention comparison at 128 servers, as markdown. docs/cost-model.md must contain
// exactly this text, so the document cannot drift from the code.
std::string comparison_table() {
  struct Column {
    const char* title;
    const char* kind;
    double oversubscription;
    int alpha;
    CostConvention convention;
  };
  const std::vector<Column> columns{
      {"fat-tree 1:1", "fat-tree", 1, 0, CostConvention::Paper},
      {"fat-tree 3:1", "fat-tree", 3, 0, CostConvention::Paper},
      {"rail-optimized", "rail-optimized", 1, 0, CostConvention::Paper},
      {"rail-only", "rail-only", 1, 0, CostConvention::Paper},
      {"topoopt", "topoopt", 1, 0, CostConvention::Paper},
      {"mfabric (paper)", "mfabric", 1, 6, CostConvention::Paper},
      {"mfabric (calculator)", "mfabric", 1, 6, CostConvention::Calculator},
  };
  const PriceBook book = PriceBook::paper_defaults();
  std::string out = "| link |";
  std::string rule = "|---|";
  for (const Column& c : columns) {
    out += fmt::format(" {} |", c.title);
    rule += "---:|";
  }
  out += "\n" + rule + "\n";
  for (double gbps : {100.0, 200.0, 400.0, 800.0}) {
    const Rate rate = Rate::gbps(gbps);
    const LinkPrices& p = book.at(rate);
    double fat_tree = 0;
    out += fmt::format("| {} |", link_label(rate));
    for (const Column& c : columns) {
      const double total =
          price(paper_bill_of_materials(c.kind, 128, 8, c.alpha, c.oversubscription, c.convention),
                p, book.fibre_length_m())
              .total();
      if (fat_tree == 0) fat_tree = total;
      out += fmt::format(" {} ({:.2f}x) |", dollars(total), fat_tree / total);
    }
    out += "\n";
  }
  return out;
}

// --- parts at other rates (mFabric's eps_link and ocs_link, co-packaged optics, NVL72) ---

ClusterSpec small_cluster(int servers, Rate link, int gpus = 8, int nics = 8) {
  ClusterSpec c;
  c.servers = servers;
  c.link = link;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  return c;
}

TEST(RatedBills, MfabricEpsAtAnotherRateIsPricedAtThatRate) {
  const Topology t =
      build_fabric("mfabric:alpha=6,region=4,eps_link=100G", small_cluster(16, Rate::gbps(400)));
  // Paper convention, by hand. EPS part at 100G: 32 NICs, 32 + 32 + 64 + 64 = 192 switch
  // ports, 224 transceivers, 112 fibres, and (the calculator's convention) 32 OCS ports:
  // 32 x 659 + 224 x 99 + 192 x 187 + 32 x 520 + 112 x 150 = 112,608.
  // OCS part at 400G: 96 NICs, transceivers, OCS ports and fibres:
  // 96 x (1499 + 659 + 520 + 150) = 271,488.
  const std::vector<RatedBill> parts = bills_by_rate(t, CostConvention::Paper);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].rate, Rate::gbps(100));
  EXPECT_EQ(
      parts[0].bom,
      (BillOfMaterials{
          .nics = 32, .transceivers = 224, .switch_ports = 192, .ocs_ports = 32, .fibres = 112}));
  EXPECT_EQ(parts[1].rate, Rate::gbps(400));
  const PriceBook book = PriceBook::paper_defaults();
  EXPECT_DOUBLE_EQ(network_cost(t, CostConvention::Paper, book).total(), 112608 + 271488);
  // Built: the EPS is one leaf (32 hosts): 32 cables at 100G with a NIC, two transceivers, a
  // switch port and a fibre each: 32 x (659 + 2 x 99 + 187 + 150) = 38,208; the OCS cables as
  // above without the EPS NICs' OCS ports: 271,488.
  EXPECT_DOUBLE_EQ(network_cost(t, CostConvention::Built, book).total(), 38208 + 271488);
  // The link rates follow: EPS cables and PCIe links at 100G, OCS cables at 400G.
  for (const Link& l : t.links()) {
    if (l.kind == LinkKind::NvLink) continue;
    const NodeId nic = t.node(l.a).kind == NodeKind::Nic ? l.a : l.b;
    const bool eps = t.node(nic).kind == NodeKind::Switch || t.node(nic).role == NicRole::Eps;
    EXPECT_EQ(l.rate, eps ? Rate::gbps(100) : Rate::gbps(400)) << t.name(l.a) << "-" << t.name(l.b);
  }
}

TEST(RatedBills, OneRateIsOnePartAndTheSameCostAsBefore) {
  const Topology t = build_fabric("mfabric:alpha=6,region=4", small_cluster(16, Rate::gbps(400)));
  EXPECT_EQ(bills_by_rate(t, CostConvention::Paper).size(), 1u);
  EXPECT_EQ(bills_by_rate(t, CostConvention::Built).size(), 1u);
  const PriceBook book = PriceBook::paper_defaults();
  EXPECT_DOUBLE_EQ(network_cost(t, CostConvention::Paper, book).total(),
                   price(bill_of_materials(t, CostConvention::Paper), kTable4_400G, 500).total());
}

TEST(RatedBills, CoPackagedOpticsHaveNoNicAndAnEngineAtTheirRate) {
  // 8 GPUs, 16 NICs: 8 EPS NICs at 800G and 8 co-packaged optical ports of 3.6T per server.
  const Topology t = build_fabric("mfabric:alpha=8,region=4,ocs_link=3.6T,ocs_optics=co-packaged",
                                  small_cluster(16, Rate::gbps(800), 8, 16));
  // Every GPU has one EPS and one OCS NIC.
  for (int g = 0; g < 8; ++g) {
    int eps = 0, ocs = 0;
    for (LinkId l : t.links_of(t.gpu(0, g))) {
      const Link& k = t.link(l);
      if (k.kind != LinkKind::Pcie) continue;
      const Node& n = t.node(k.a == t.gpu(0, g) ? k.b : k.a);
      (n.role == NicRole::Eps ? eps : ocs) += 1;
    }
    EXPECT_EQ(eps, 1);
    EXPECT_EQ(ocs, 1);
  }
  // Paper convention by hand. EPS at 800G: 128 NICs, 768 switch ports, 896 transceivers, 448
  // fibres, 128 OCS ports: 128 x 2248 + 896 x 1399 + 768 x 1400 + 128 x 520 + 448 x 150 =
  // 2,750,208. OCS at 3.6T: no NIC, 128 engines priced as 4.5 800G transceivers (6,295.50),
  // 128 OCS ports, 128 fibres: 805,824 + 66,560 + 19,200 = 891,584.
  const PriceBook book = PriceBook::paper_defaults();
  EXPECT_DOUBLE_EQ(network_cost(t, CostConvention::Paper, book).total(), 2750208 + 891584);
  EXPECT_EQ(bill_of_materials(t, CostConvention::Built).nics, 128);
}

TEST(RatedBills, Nvl72ChargesTheSpareGpusOfEachDomain) {
  // 2 domains of 6 GPUs of which the job uses 4, one 400G NIC per GPU.
  const Topology t = build_fabric("nvl72:domain=6", small_cluster(2, Rate::gbps(400), 4, 4));
  // Built: one leaf, 8 cables; scaled by 6 / 4: 12 NICs, 24 transceivers, 12 ports, 12 fibres.
  EXPECT_EQ(bill_of_materials(t, CostConvention::Built),
            (BillOfMaterials{.nics = 12, .transceivers = 24, .switch_ports = 12, .fibres = 12}));
  // Paper: the fat-tree formula over 2 x 6 = 12 NICs: 72 switch ports, 84 transceivers, 42
  // fibres.
  EXPECT_EQ(bill_of_materials(t, CostConvention::Paper),
            (BillOfMaterials{.nics = 12, .transceivers = 84, .switch_ports = 72, .fibres = 42}));
}

TEST(CostComparison, DocsTableMatchesTheCode) {
  const std::string table = comparison_table();
  const std::string path = std::string(MFABRIC_TEST_DATA_DIR) + "/../../../docs/cost-model.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::ostringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(table), std::string::npos)
      << path << " does not contain the computed comparison table; replace it with:\n"
      << table;
}

}  // namespace
}  // namespace mfabric::fabric
