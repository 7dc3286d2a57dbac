// An experiment file as the simulator takes it: read by config/ (config/experiment.h) and
// checked against what the simulator runs, its fabric controller's settings (a planner, policy
// and switching rule it knows), before any run. What `mfabric simulate`, `compare` and `sweep`
// load experiments with.
#pragma once

#include <optional>
#include <string>

#include "config/experiment.h"
#include "fabric/topology.h"

namespace mfabric::sim {

// config::read_experiment_file / read_experiment, checking the built fabric's controller
// (check_fabric_control); the same mfabric::Error(path, field, expectation) for anything either
// refuses.
config::Experiment load_experiment(const std::string& path,
                                   std::optional<Bytes> max_memory = std::nullopt);
config::Experiment parse_experiment(const std::string& yaml_text, const std::string& source,
                                    std::optional<Bytes> max_memory = std::nullopt);

// The settings of the controller the topology's kind names (sim/fabric_controllers.h), checked
// without running it: mfabric::Error naming fabric.planner, fabric.policy or fabric.switching.
// Nothing for a fabric no controller runs.
void check_fabric_control(const fabric::Topology& topology);

}  // namespace mfabric::sim
