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
//
// When to switch (SwitchRule): `Always` puts every new plan up. `Every` (the paper's simulator)
// switches every circuit of the region for every new plan, an identical one included: all of
// them go dark for the delay and come up again; the request is never served at once. `WhenFaster`
// keeps the circuits in force when they would carry the new demand's all-to-all no slower than the
// new plan plus the reconfiguration delay would (the planners' objective, max_finish(), for both):
// a switch that costs more than it saves is not made, and the request is served at once. The first
// request's plan always goes up (also over a plan installed before training, which no demand
// made), and with a zero delay every new plan does, as under `Always`.
//
// Failures (docs/control-plane.md, "Failed ports and relay circuits"): a failed OCS port is never
// planned on again, and the circuit on it goes at once. A server that lost its EPS NICs keeps one
// pinned circuit to a healthy peer (its relay); pinned circuits live outside the plan: plans never
// use their two ports, and no reconfiguration ever tears them down.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/demand.h"
#include "control/nic_mapping.h"
#include "control/planner.h"
#include "core/units.h"
#include "fabric/ocs_params.h"

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
  // A reconfiguration that began at `since` has ended now (its circuits are up): a new plan
  // or a relay circuit pinned after a failure.
  virtual void reconfigured(int region, Time since) = 0;
};

// "always", "when-faster" (fabric/ocs_params.h: a parameter of the mFabric topology).
using fabric::parse_switch_rule;
using fabric::SwitchRule;

struct RegionStats {
  std::int64_t reconfigurations = 0;  // that changed at least one circuit, pins included
  std::int64_t unchanged = 0;         // plans equal to the one in force: nothing switched
  std::int64_t kept = 0;       // WhenFaster: plans not put up, the circuits in force being as fast
  std::int64_t conflicts = 0;  // requests that found a reconfiguration under way
  Time busy;                   // total time the region's circuits were down for reconfiguration
  std::int64_t circuits_set_up = 0;     // including pinned relay circuits
  std::int64_t circuits_torn_down = 0;  // including circuits on failed ports
  std::int64_t failed_ports = 0;        // distinct OCS ports failed (fail_port)
  std::int64_t relays_pinned = 0;       // relay circuits pinned (pin_relay, new pins only)
};

// Keys the callers do not use for their own plans (theirs are >= 0): the key before any plan,
// and the usual key of a plan installed before training (install()).
inline constexpr std::int64_t kNoPlanKey = -1;
inline constexpr std::int64_t kInstalledPlanKey = -2;

class RegionController {
 public:
  // region: its id for the CircuitSwitch; nics: the servers' NIC layout; limits: for the
  // planner; delay: the OCS reconfiguration time; rule: when a new plan is put up.
  RegionController(int region, ServerNics nics, PlanLimits limits, const Planner& planner,
                   Time delay, CircuitSwitch& fabric, SwitchRule rule = SwitchRule::Always);

  // Where a request's demand comes from: called only when a plan is made from it (requests for
  // the plan in force or one already under way or queued never build their demand).
  using DemandSource = std::function<ServerDemand()>;

  // Plans circuits for the demand and reconfigures; `ready` runs once the circuits are up.
  // `key` names what the plan is for (e.g. a layer and micro-batch); a request whose key equals
  // the plan under way (or queued) does not reconfigure again: `ready` runs when that plan is
  // up. Returns true, and never runs `ready`, when the request is served at once: its key is the
  // plan in force, or its plan switches nothing (or is kept, SwitchRule::WhenFaster).
  bool request(std::int64_t key, DemandSource demand, std::function<void()> ready);
  // Puts the plan for `demand` up at once, before any traffic (the fabric as set up before
  // training; not a reconfiguration, no delay). Only on a region with no circuits and nothing
  // under way; throws std::logic_error otherwise.
  void install(std::int64_t key, const ServerDemand& demand);
  // OCS NIC `nic` (local index, an OCS NIC: nics.first_ocs_nic() <= nic < nics.nics) of
  // region-local server `server` failed. From now on every plan gives the server one circuit
  // fewer at most and never maps a circuit onto that NIC. The circuit on it, if any, goes: from
  // the plan (its pair's count less one, ports_used updated) and from the circuits in force; if
  // it is up it is torn down at once through CircuitSwitch::tear_down (its transfers pause; the
  // caller resumes them), if it is still coming up (the reconfiguration under way) it is never
  // set up. A pinned relay circuit on it is torn down (if up) and unpinned: the caller pins its
  // server again (pin_relay) to get a new relay. Failing a failed port does nothing.
  // mfabric::Error when nic is not an OCS NIC or server is outside the region (whose size is
  // known once a plan was made or a relay pinned; a port failed before that on a server beyond
  // the first demand's region makes that plan an mfabric::Error).
  void fail_port(int server, int nic);

  // `server` lost its EPS NICs: it keeps one circuit to a healthy peer at all times, which
  // relays its traffic over the EPS. The peer is the lowest-index server p != server with
  // can_relay[p] (one entry per region server), not pinned itself (a pinned server has no EPS)
  // and with a working OCS NIC not already pinned; the
  // NICs are the lowest-index working, unpinned OCS NIC at each end. A planned circuit on either
  // NIC goes as in fail_port(), except the very same circuit already up, which is kept as the
  // pinned one (the OCS holds that cross-connect already). Otherwise the pinned circuit comes up
  // after the reconfiguration delay (at once with a zero delay) through CircuitSwitch::set_up.
  // From then on plans never use the two pinned NICs (one port fewer at each end) and no
  // reconfiguration tears the circuit down. Returns the circuit (server < peer_server order);
  // the existing one when the server is already pinned; nullopt when the server has no working
  // unpinned OCS NIC or no peer qualifies (the caller reports it). mfabric::Error when server is
  // outside the region or can_relay does not have one entry per region server.
  std::optional<PortCircuit> pin_relay(int server, const std::vector<bool>& can_relay);

  // The pinned relay circuits, in the order they were pinned (up or coming up).
  const std::vector<PortCircuit>& pinned() const { return pinned_; }
  // The failed OCS NICs: (region-local server, local NIC index).
  const std::set<std::pair<int, int>>& failed_ports() const { return failed_; }

  // The key of the plan in force, or of the last one requested; kNoPlanKey before the first.
  std::int64_t current_key() const { return key_; }
  bool reconfiguring() const { return busy_; }
  const RegionStats& stats() const { return stats_; }
  // The planned circuits in force (or coming up); pinned relay circuits are not part of it.
  const CircuitPlan& plan() const { return plan_; }

 private:
  struct Request {
    std::int64_t key;
    DemandSource demand;
    std::vector<std::function<void()>> ready;
  };
  // What a pinned circuit (pinned_[k]) is for and whether it is up yet.
  struct Pin {
    int server;       // the server without EPS
    std::int64_t id;  // tells a scheduled set-up whether its pin still exists
    bool up;
  };
  // Starts a request's reconfiguration. With nothing to switch, its waiters are served at once:
  // by returning true when the request comes straight from request(), else by running them.
  bool start(Request r, bool from_request = false);
  // WhenFaster: whether the plan just made (plan_) beats `in_force` on the demand by more than
  // the reconfiguration delay.
  bool worth_switching(const ServerDemand& demand, const CircuitPlan& in_force) const;
  void finish();
  // Plans for the demand around the failed and pinned NICs and maps the plan to NICs (sorted).
  std::vector<PortCircuit> plan_for(const ServerDemand& demand);
  // limits_ with each server's ports less its failed and pinned NICs; limits_ itself when none.
  PlanLimits limits_for(int servers) const;
  // The failed NICs and both ends of every pinned circuit.
  std::set<std::pair<int, int>> unusable() const;
  bool is_pinned_nic(int server, int nic) const;
  // The lowest-index OCS NIC of the server neither failed nor pinned; nullopt when none.
  std::optional<int> free_ocs_nic(int server) const;
  // The planned circuit (in ports_) on this NIC.
  std::optional<PortCircuit> planned_circuit_on(int server, int nic) const;
  // Takes a planned circuit out of ports_ and plan_; tears it down if it is up
  // (tear_down_if_up), forgets it if it is still coming up.
  void remove_planned(const PortCircuit& circuit, bool tear_down_if_up);
  // Tears pinned_[k] down if it is up, and forgets the pin.
  void drop_pin(std::size_t k);
  void set_up_pin(std::int64_t id);

  int region_;
  ServerNics nics_;
  PlanLimits limits_;
  const Planner& planner_;
  Time delay_;
  CircuitSwitch& fabric_;
  SwitchRule rule_;
  bool planned_from_request_ = false;  // a request's plan has been made (install's is not one)
  bool busy_ = false;
  std::int64_t key_ = kNoPlanKey;
  Time busy_since_;
  CircuitPlan plan_;
  std::vector<PortCircuit> ports_;   // in force (or coming up)
  std::vector<PortCircuit> adding_;  // coming up at the end of the reconfiguration under way
  std::vector<std::function<void()>> waiting_;  // for the reconfiguration under way
  std::deque<Request> queue_;
  RegionStats stats_;
  int servers_ = 0;  // the region's servers once known (first plan or pin); 0 before
  std::set<std::pair<int, int>> failed_;
  std::vector<PortCircuit> pinned_;  // never in ports_ nor plan_
  std::vector<Pin> pins_;            // pins_[k] describes pinned_[k]
  std::int64_t next_pin_id_ = 0;
};

}  // namespace mfabric::control
