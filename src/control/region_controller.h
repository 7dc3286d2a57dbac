// One region's topology controller (docs/control-plane.md): turns a demand into circuits
// (planner), circuits into NIC ports (nic_mapping) and puts them up through a CircuitSwitch, one
// reconfiguration at a time. There is no central controller: each region has its own, and a
// region's changes never touch another's circuits.
//
// A reconfiguration changes only the cross-connects that differ between the plan in force and
// the new one (an OCS switches each port on its own; the others keep carrying traffic, as the
// TL1 diff of ocs_commands.h says): circuits that go are torn down at once (their transfers
// pause), the OCS's reconfiguration delay passes, the new ones come up, the paused transfers
// resume and the requester is told. A plan identical to the one in force costs nothing.
// Requests that arrive while a reconfiguration is under way wait their turn, in order; each of
// them counts as a conflict.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "control/demand.h"
#include "control/nic_mapping.h"
#include "control/planner.h"
#include "core/units.h"

namespace mfabric::control {

// The fabric and the clock as a region controller sees them (the simulator implements it over
// its engine and network backend; a deployment would implement it over the OCS's TL1 port).
class CircuitSwitch {
 public:
  virtual ~CircuitSwitch() = default;
  virtual Time now() const = 0;
  // Runs fn at time t >= now().
  virtual void at(Time t, std::function<void()> fn) = 0;
  // Removes these circuits of the region (region-local servers, local NIC indices); transfers on
  // them pause.
  virtual void tear_down(int region, const std::vector<PortCircuit>& circuits) = 0;
  // Puts these circuits up and resumes the region's paused transfers.
  virtual void set_up(int region, const std::vector<PortCircuit>& circuits) = 0;
};

struct RegionStats {
  std::int64_t reconfigurations = 0;  // that changed at least one circuit
  std::int64_t unchanged = 0;         // plans equal to the one in force: nothing switched
  std::int64_t conflicts = 0;         // requests that found a reconfiguration under way
  Time busy;  // total time the region's circuits were down for reconfiguration
  std::int64_t circuits_set_up = 0;
  std::int64_t circuits_torn_down = 0;
};

class RegionController {
 public:
  // region: its id for the CircuitSwitch; nics: the servers' NIC layout; limits: for the
  // planner; delay: the OCS reconfiguration time.
  RegionController(int region, ServerNics nics, PlanLimits limits, const Planner& planner,
                   Time delay, CircuitSwitch& fabric);

  // Where a request's demand comes from: called only when a plan is made from it (requests for
  // the plan in force or one already under way or queued never build their demand).
  using DemandSource = std::function<ServerDemand()>;

  // Plans circuits for the demand and reconfigures; `ready` runs once the circuits are up.
  // `key` names what the plan is for (e.g. a layer and micro-batch); a request whose key equals
  // the plan in force (or the one under way) does not reconfigure again: `ready` runs when that
  // plan is up.
  void request(std::int64_t key, DemandSource demand, std::function<void()> ready);
  // Puts the plan for `demand` up at once, before any traffic (the fabric as set up before
  // training; not a reconfiguration, no delay). Only on a region with no circuits and nothing
  // under way; throws std::logic_error otherwise.
  void install(std::int64_t key, const ServerDemand& demand);
  // The key of the plan in force, or of the last one requested; -1 before the first.
  std::int64_t current_key() const { return key_; }
  bool reconfiguring() const { return busy_; }
  const RegionStats& stats() const { return stats_; }
  const CircuitPlan& plan() const { return plan_; }

 private:
  struct Request {
    std::int64_t key;
    DemandSource demand;
    std::vector<std::function<void()>> ready;
  };
  void start(Request r);
  void finish();

  int region_;
  ServerNics nics_;
  PlanLimits limits_;
  const Planner& planner_;
  Time delay_;
  CircuitSwitch& fabric_;
  bool busy_ = false;
  std::int64_t key_ = -1;
  Time busy_since_;
  CircuitPlan plan_;
  std::vector<PortCircuit> ports_;   // in force (or coming up)
  std::vector<PortCircuit> adding_;  // coming up at the end of the reconfiguration under way
  std::vector<std::function<void()>> waiting_;  // for the reconfiguration under way
  std::deque<Request> queue_;
  RegionStats stats_;
};

}  // namespace mfabric::control
