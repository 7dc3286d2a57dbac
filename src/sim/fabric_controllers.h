// The simulator's fabric controllers by name: a fabric kind whose circuits something sets names
// its controller (fabric/fabric_kind.h, traits.controller) and simulate() makes it from here,
// never from the fabric's name. One line each in fabric_controllers.cpp:
//   mfabric   a RegionController per OCS region, planning circuits during training
//             (sim/mfabric_control.h)
//   topoopt   one topology planned from the whole job, connected before training
//             (sim/topoopt_control.h)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/registry.h"
#include "fabric/topology.h"
#include "sim/fabric_control.h"
#include "sim/mfabric_control.h"
#include "sim/topoopt_control.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

// What a run's controller did, for the reports.
struct ControlReport {
  // For fabrics that reconfigure (mfabric).
  std::optional<ControlStats> control;
  // The planned topology, for TopoOpt (planned once before training).
  std::optional<TopoOptStats> topoopt;
};

// What a controller is made from.
struct ControlSetup {
  const workload::TaskGraph& graph;
  const fabric::Topology& topology;
  // GPUs that spares took over (config/failures.h): members of an EP group may sit outside its
  // region.
  const std::vector<std::int32_t>& spare_gpus;
};

// A controller of the registry: how it is made for a run, and how its settings on a topology
// are checked before any run (null: nothing to check).
struct FabricControllerUnit {
  std::function<std::unique_ptr<FabricControl>(const ControlSetup&)> make;
  std::function<void(const fabric::Topology&)> check = {};
};
using FabricControllerRegistry = Registry<FabricControllerUnit>;
FabricControllerRegistry& fabric_controllers();

// The controller the topology's kind names, or null for a fabric nothing controls (and for a
// topology of no known kind). mfabric::Error when the kind names a controller no one registered,
// or when making it fails (the controller's own errors).
std::unique_ptr<FabricControl> make_fabric_control(const ControlSetup& setup);

}  // namespace mfabric::sim
