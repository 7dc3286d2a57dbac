// mfabric plan: the circuits a region controller would set up for one demand matrix, on which
// NICs, and the OCS commands (docs/control-plane.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "control/demand_file.h"
#include "control/nic_mapping.h"
#include "control/ocs_commands.h"
#include "control/planner.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/units.h"
#include "report/format.h"
#include "report/table.h"

namespace mfabric::cli {

namespace {

struct PlanOptions {
  std::string demand;
  int alpha = 6;
  std::string algorithm = control::kDefaultPlanner;
  int numa = 2;
  int nics = 8;
  std::string link = "400G";
  bool json = false;
  bool tl1 = false;
};

struct Setup {
  control::ServerNics nics;
  Rate link;
};

Setup checked_setup(const PlanOptions& o) {
  Setup s;
  s.nics = control::ServerNics{.nics = o.nics, .alpha = o.alpha, .numa = o.numa};
  with_option_names([&] { s.nics.validate(); });
  s.link = with_context("", "--link", [&] { return parse_rate(o.link); });
  if (!(s.link.bps() >= fabric::kMinLinkRate.bps() && s.link.bps() <= fabric::kMaxLinkRate.bps())) {
    throw Error(
        "", "--link",
        fmt::format("expected a link rate from {} to {}, got {}", to_string(fabric::kMinLinkRate),
                    to_string(fabric::kMaxLinkRate), o.link));
  }
  return s;
}

std::vector<std::string> tl1_from_empty(const std::vector<control::PortCircuit>& ports,
                                        const control::ServerNics& nics, int servers) {
  const control::RegionPorts region{.first_port = 0, .servers = servers, .nics = nics};
  const control::OcsConfiguration target = control::configuration_of(ports, region, region.ports());
  return control::tl1_commands(
      control::reconfiguration(control::OcsConfiguration(region.ports()), target));
}

void print_text(const control::ServerDemand& demand, const control::CircuitPlan& plan,
                const std::vector<control::PortCircuit>& ports, const control::PlanLimits& limits,
                const std::string& algorithm, double finish, double wall) {
  std::cout << fmt::format(
      "plan: {}, {} servers, alpha {}, circuits of {}, EPS {} per pair without a circuit\n",
      algorithm, demand.servers(), limits.alpha, to_string(limits.circuit_rate),
      to_string(limits.eps_rate));
  std::cout << fmt::format("circuits: {}, ports used {} of {}\n", plan.total_circuits(),
                           2 * plan.total_circuits(), demand.servers() * limits.alpha);
  std::cout << fmt::format("max finish: {} (planned in {})\n\n", seconds_text(finish),
                           seconds_text(wall));
  using Align = report::Table::Align;
  report::Table pairs({"pair", "demand", "circuits", "finish"},
                      {Align::Left, Align::Right, Align::Right, Align::Right});
  for (const control::DemandPair& p : demand.pairs()) {
    const int c = plan.circuits_between(p.i, p.j);
    pairs.add_row({fmt::format("{}-{}", p.i, p.j),
                   report::traffic_bytes(static_cast<double>(p.bytes)),
                   c > 0 ? std::to_string(c) : "EPS",
                   seconds_text(control::pair_finish(p.bytes, c, limits))});
  }
  for (const control::Circuit& c : plan.circuits) {
    if (demand.at(c.i, c.j) == 0) {
      pairs.add_row({fmt::format("{}-{}", c.i, c.j), "0 B", std::to_string(c.count), "0 s"});
    }
  }
  std::cout << pairs.render() << "\n";
  report::Table nic_table({"server", "nic", "peer server", "peer nic"},
                          {Align::Right, Align::Right, Align::Right, Align::Right});
  for (const control::PortCircuit& c : ports) {
    nic_table.add_row({std::to_string(c.server), std::to_string(c.nic),
                       std::to_string(c.peer_server), std::to_string(c.peer_nic)});
  }
  std::cout << nic_table.render();
}

int run_plan(const PlanOptions& o) {
  if (o.demand.empty()) throw Error("", "--demand", "give --demand FILE (a JSON demand file)");
  const Setup setup = checked_setup(o);
  const auto planner = with_option_names([&] { return control::make_planner(o.algorithm); });
  const control::ServerDemand demand = control::read_demand_file(o.demand);
  const control::PlanLimits limits =
      control::region_limits(o.alpha, o.nics, setup.link, demand.servers());

  const auto start = std::chrono::steady_clock::now();
  const control::CircuitPlan plan =
      with_option_names([&] { return planner->plan(demand, limits); });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<control::PortCircuit> ports = control::map_to_nics(plan, setup.nics);
  const double finish = control::max_finish(demand, plan, limits);

  if (o.json) {
    nlohmann::json circuits = nlohmann::json::array();
    for (const control::Circuit& c : plan.circuits)
      circuits.push_back({c.i, c.j, c.count});
    nlohmann::json port_list = nlohmann::json::array();
    for (const control::PortCircuit& c : ports) {
      port_list.push_back({{"server", c.server},
                           {"nic", c.nic},
                           {"peer_server", c.peer_server},
                           {"peer_nic", c.peer_nic}});
    }
    nlohmann::json out = {{"algorithm", planner->name()},
                          {"servers", demand.servers()},
                          {"alpha", limits.alpha},
                          {"circuit_rate_bps", limits.circuit_rate.bps()},
                          {"eps_rate_bps", limits.eps_rate.bps()},
                          {"circuits", circuits},
                          {"ports", port_list},
                          {"max_finish", finish},
                          {"wall_time_s", wall}};
    if (o.tl1) out["tl1"] = tl1_from_empty(ports, setup.nics, demand.servers());
    std::cout << json_text(out) << "\n";
    return 0;
  }
  if (o.tl1) {
    for (const std::string& line : tl1_from_empty(ports, setup.nics, demand.servers()))
      std::cout << line << "\n";
    return 0;
  }
  print_text(demand, plan, ports, limits, planner->name(), finish, wall);
  return 0;
}

}  // namespace

Command register_plan(CLI::App& command) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* app = &command;
  app->add_option("--demand", o->demand,
                  "JSON demand file: {\"demand_bytes\": [[...]]} or {\"tokens\": [[...]], "
                  "\"ep_ranks_per_server\", \"experts_per_rank\", \"bytes_per_token\"}")
      ->required();
  app->add_option("--alpha", o->alpha, "OCS NICs (circuits) per server, 1 to nics - 1")
      ->capture_default_str();
  app->add_option("--algorithm", o->algorithm,
                  fmt::format("Planner: {} (docs/control-plane.md)",
                              fmt::join(control::planner_names(), ", ")))
      ->capture_default_str();
  app->add_option("--numa", o->numa, "NUMA nodes per server the NICs are split over")
      ->capture_default_str();
  app->add_option("--nics", o->nics, "NICs per server (the last alpha are on the OCS)")
      ->capture_default_str();
  app->add_option("--link", o->link, "NIC link rate (one circuit)")->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON");
  app->add_flag("--tl1", o->tl1,
                "Print the TL1 commands that set the plan up on an empty OCS (with --json: "
                "as \"tl1\")");
  return Command{app, [o] { return run_plan(*o); }};
}

std::string seconds_text(double s) {
  if (s == 0.0) return "0 s";
  if (s < 1e-6) return fmt::format("{:.4g} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.4g} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

}  // namespace mfabric::cli
