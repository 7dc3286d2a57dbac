#include "study/run_json.h"

namespace mfabric::study {

nlohmann::json cost_components_json(const fabric::CostBreakdown& c) {
  return {{"nics", c.nics},
          {"transceivers", c.transceivers},
          {"switch_ports", c.switch_ports},
          {"ocs_ports", c.ocs_ports},
          {"patch_panel_ports", c.patch_panel_ports},
          {"fibres", c.fibres}};
}

fabric::CostBreakdown cost_components_from_json(const nlohmann::json& j) {
  fabric::CostBreakdown c;
  c.nics = j.at("nics").get<double>();
  c.transceivers = j.at("transceivers").get<double>();
  c.switch_ports = j.at("switch_ports").get<double>();
  c.ocs_ports = j.at("ocs_ports").get<double>();
  c.patch_panel_ports = j.at("patch_panel_ports").get<double>();
  c.fibres = j.at("fibres").get<double>();
  return c;
}

nlohmann::json reconfiguration_json(const ReconfigurationSummary& r) {
  return {
      {"policy", r.policy},      {"planner", r.planner},         {"count", r.count},
      {"time_s", r.time_s},      {"held_time_s", r.held_time_s}, {"circuit_bytes", r.circuit_bytes},
      {"eps_bytes", r.eps_bytes}};
}

ReconfigurationSummary reconfiguration_from_json(const nlohmann::json& j) {
  ReconfigurationSummary r;
  r.policy = j.at("policy").get<std::string>();
  r.planner = j.at("planner").get<std::string>();
  r.count = j.at("count").get<std::int64_t>();
  r.time_s = j.at("time_s").get<double>();
  r.held_time_s = j.at("held_time_s").get<double>();
  r.circuit_bytes = j.at("circuit_bytes").get<double>();
  r.eps_bytes = j.at("eps_bytes").get<double>();
  return r;
}

}  // namespace mfabric::study
