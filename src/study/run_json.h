// The JSON of a run's figures that compare's results.json and a sweep's records share (a sweep
// reads its records back with sweep_run_from_json, study/sweep_run.h).
#pragma once

#include <nlohmann/json.hpp>

#include "fabric/cost.h"
#include "study/compare.h"

namespace mfabric::study {

// {"nics", "transceivers", "switch_ports", "ocs_ports", "patch_panel_ports", "fibres"}.
nlohmann::json cost_components_json(const fabric::CostBreakdown& c);
// {"policy", "planner", "count", "time_s", "held_time_s", "circuit_bytes", "eps_bytes"}.
nlohmann::json reconfiguration_json(const ReconfigurationSummary& r);

// [{"name", "used", "bound" (when used), "detail"}]: the shortcuts of a run (sim::shortcuts).
nlohmann::json shortcuts_json(const std::vector<sim::Shortcut>& shortcuts);

}  // namespace mfabric::study
