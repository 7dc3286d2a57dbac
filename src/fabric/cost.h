// Bill of materials and network cost (CAPEX only, no power), after the paper's Table 4.
//
// Two counting conventions (docs/cost-model.md):
//  - built:      count what the built Topology actually holds: one NIC per NIC node, one
//                transceiver at each electrical end (NIC or switch) of every cable, the electrical
//                switch ports in use, the OCS and patch-panel ports in use, one fibre per cable.
//  - paper:      the per-component formulas of the paper's cost calculator (reference section 6):
//                fat-tree/rail-optimized edge-down = NICs, edge-up = edge-down x o, aggregation =
//                2 x edge-up, core = aggregation; rail-only without core; TopoOpt one NIC,
//                transceiver, patch port and fibre per NIC; mFabric the same fat-tree over the EPS
//                NICs with its switch ports charged, an OCS port for every NIC, one fibre per OCS
//                NIC.
//  - calculator: as paper, but mFabric's EPS switch ports are not charged (what the authors'
//                public calculator does; it does not reproduce the paper's figures).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

struct BillOfMaterials {
  std::int64_t nics = 0;
  std::int64_t transceivers = 0;
  std::int64_t switch_ports = 0;
  std::int64_t ocs_ports = 0;
  std::int64_t patch_panel_ports = 0;
  std::int64_t fibres = 0;
  bool operator==(const BillOfMaterials&) const = default;
};

// Sane maxima for price files (docs/cost-model.md): no network part costs a billion dollars, no
// fibre run in a data centre is 100 km. With them, every cost mfabric computes for any fabric it
// can build stays finite and exact to the cent; price() refuses prices beyond them.
inline constexpr double kMaxUnitPriceUsd = 1e9;  // per item, and per metre of fibre
inline constexpr double kMaxFibreLengthM = 1e5;

// Prices in US dollars for one link speed.
struct LinkPrices {
  double transceiver = 0;
  double nic = 0;
  double switch_port = 0;  // one electrical switch port
  double ocs_port = 0;
  double patch_panel_port = 0;
  double fibre_per_m = 0;
};

class PriceBook {
 public:
  // The paper's Table 4 for 100G, 200G, 400G and 800G; fibre 500 m.
  static PriceBook paper_defaults();
  // The defaults overridden by a YAML file (format in docs/formats.md). Throws mfabric::Error
  // naming the file and field on an unreadable file, unknown key, or bad value.
  static PriceBook load(const std::string& path);

  // Prices at `link`; throws mfabric::Error listing the known speeds when absent.
  const LinkPrices& at(Rate link) const;
  // Prices at any rate, for fabric parts that run at another rate than the cluster's link
  // (mFabric's eps_link and ocs_link): a known speed's prices; between two known speeds, each
  // price interpolated linearly in the rate; beyond them, the NIC, transceiver and switch port
  // of the nearest speed scaled in proportion to the rate (a 50G port is half a 100G port, as
  // a breakout shares one; 3.2T is four 800G), the passive OCS and patch-panel ports and the
  // fibre at the nearest speed's price (docs/cost-model.md, "Parts at other rates").
  LinkPrices price_at(Rate rate) const;
  double fibre_length_m() const { return fibre_length_m_; }
  // Known link speeds in bits per second, ascending.
  std::map<double, LinkPrices> const& speeds() const { return speeds_; }

  void set(Rate link, const LinkPrices& prices) { speeds_[link.bps()] = prices; }
  void set_fibre_length_m(double m) { fibre_length_m_ = m; }

 private:
  std::map<double, LinkPrices> speeds_;
  double fibre_length_m_ = 500;
};

enum class CostConvention { Built, Paper, Calculator };
const char* to_string(CostConvention c);
// Throws mfabric::Error for anything but "built", "paper" or "calculator".
CostConvention parse_convention(const std::string& text);

// Per-component cost in US dollars.
struct CostBreakdown {
  double nics = 0;
  double transceivers = 0;
  double switch_ports = 0;
  double ocs_ports = 0;
  double patch_panel_ports = 0;
  double fibres = 0;
  double total() const;
  CostBreakdown& operator+=(const CostBreakdown& o);
};

// The built convention: counted from the topology's nodes and links.
BillOfMaterials count_bill_of_materials(const Topology& topology);
// The paper / calculator conventions for a fabric kind; alpha is used by mfabric only,
// oversubscription (down:up, e.g. 3 for 3:1) by fat-tree and rail-optimized.
BillOfMaterials paper_bill_of_materials(const std::string& kind, int servers, int nics_per_server,
                                        int alpha, double oversubscription,
                                        CostConvention convention);
// Dispatches on the convention, reading kind and parameters from the topology: the sum of the
// parts below.
BillOfMaterials bill_of_materials(const Topology& topology, CostConvention convention);

// The part of a fabric's bill of materials whose items run at one rate. Most fabrics are one
// part at the cluster's link rate; mFabric with eps_link or ocs_link has an EPS and an OCS
// part.
struct RatedBill {
  Rate rate;
  BillOfMaterials bom;
};
std::vector<RatedBill> bills_by_rate(const Topology& topology, CostConvention convention);
// The parts summed, and priced (each at its rate, PriceBook::price_at) and summed.
BillOfMaterials total_bill(const std::vector<RatedBill>& parts);
CostBreakdown price_parts(const std::vector<RatedBill>& parts, const PriceBook& prices);

// The network's cost: every part priced at its rate (PriceBook::price_at), summed.
CostBreakdown network_cost(const Topology& topology, CostConvention convention,
                           const PriceBook& prices);

// Throws mfabric::Error naming the field for a price outside [0, kMaxUnitPriceUsd] or a fibre
// length outside [0, kMaxFibreLengthM] (a PriceBook filled in code rather than from a file).
CostBreakdown price(const BillOfMaterials& bom, const LinkPrices& prices, double fibre_length_m);

}  // namespace mfabric::fabric
