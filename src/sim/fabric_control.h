// What simulate() needs of a fabric's controller beyond the engine's FabricController hooks: its
// figures for the reports, and the OCS regions that failures act on. A fabric kind names its
// controller (fabric/fabric_kind.h, traits.controller); sim/fabric_controllers.h makes it.
#pragma once

#include "sim/engine.h"

namespace mfabric::sim {

struct ControlReport;  // sim/fabric_controllers.h
class MfabricControl;

class FabricControl : public FabricController {
 public:
  // Adds this controller's figures to the run's record (after the run).
  virtual void report(ControlReport& out) const = 0;
  // The per-region OCS control plane that failures fail ports of and pin relays on
  // (FailureInjector), or null for a controller without one.
  virtual MfabricControl* region_control() { return nullptr; }
};

}  // namespace mfabric::sim
