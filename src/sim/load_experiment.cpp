#include "sim/load_experiment.h"

#include "fabric/fabric_kinds.h"
#include "sim/fabric_controllers.h"

namespace mfabric::sim {

void check_fabric_control(const fabric::Topology& topology) {
  const std::string& name = fabric::traits_of(topology).controller;
  if (name.empty()) return;
  const FabricControllerUnit& unit = fabric_controllers().at(name).factory;
  if (unit.check) unit.check(topology);
}

config::Experiment load_experiment(const std::string& path, std::optional<Bytes> max_memory) {
  return config::read_experiment_file(path, max_memory, check_fabric_control);
}

config::Experiment parse_experiment(const std::string& yaml_text, const std::string& source,
                                    std::optional<Bytes> max_memory) {
  return config::read_experiment(yaml_text, source, max_memory, check_fabric_control);
}

}  // namespace mfabric::sim
