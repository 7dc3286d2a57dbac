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

nlohmann::json reconfiguration_json(const ReconfigurationSummary& r) {
  return {
      {"policy", r.policy},      {"planner", r.planner},         {"count", r.count},
      {"time_s", r.time_s},      {"held_time_s", r.held_time_s}, {"circuit_bytes", r.circuit_bytes},
      {"eps_bytes", r.eps_bytes}};
}

nlohmann::json shortcuts_json(const std::vector<sim::Shortcut>& shortcuts) {
  nlohmann::json out = nlohmann::json::array();
  for (const sim::Shortcut& s : shortcuts) {
    nlohmann::json j = {{"name", s.name}, {"used", s.used}};
    if (s.used) j["bound"] = s.bound;
    j["detail"] = s.detail;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace mfabric::study
