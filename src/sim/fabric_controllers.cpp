#include "sim/fabric_controllers.h"

#include "fabric/fabric_kinds.h"

namespace mfabric::sim {

FabricControllerRegistry& fabric_controllers() {
  static FabricControllerRegistry registry(
      "fabric controller",
      {
          {"mfabric",
           "a region controller per OCS region re-plans its circuits during training (policy, "
           "planner and switching from the fabric's parameters)",
           {[](const ControlSetup& s) -> std::unique_ptr<FabricControl> {
              return std::make_unique<MfabricControl>(s.graph, s.topology,
                                                      make_control_plane(s.topology), s.spare_gpus);
            },
            // The planner, policy and switching rule, as making the plane checks them.
            [](const fabric::Topology& t) { (void)make_control_plane(t); }}},
          {"topoopt",
           "one patch-panel topology planned from the whole job's demand, connected before "
           "training and never changed",
           {[](const ControlSetup& s) -> std::unique_ptr<FabricControl> {
             return std::make_unique<TopoOptControl>(s.graph, s.topology);
           }}},
      });
  return registry;
}

std::unique_ptr<FabricControl> make_fabric_control(const ControlSetup& setup) {
  const std::string& name = fabric::traits_of(setup.topology).controller;
  if (name.empty()) return nullptr;
  return fabric_controllers().at(name).factory.make(setup);
}

}  // namespace mfabric::sim
