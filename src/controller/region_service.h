// The region controller (docs/runtime.md, "Region controller"): the regions of one OCS, each
// re-planned on demand and put up through TL1, with only what the OCS holds ever reported.
//
// What is in force comes from the OCS, never from memory alone: on start (and before any call that
// finds the session broken or a previous call failed) the service reads the cross-connects back
// (RTRV-PATCH) and the port states (RTRV-PORT-STATUS) and takes them as the truth. A submit plans
// the region's circuits (its planner, its working ports), diffs them against that read-back
// configuration and sends the difference, disconnects first, each command answered only after the
// OCS reports completion (COMPLD), pipelined: up to `tl1_window` commands awaiting their answers
// at once on the session (1: one at a time), every disconnect completed before the connects go; a
// circuit counts as in force once its ENT-PATCH completed, and stops counting when its DLT-PATCH is
// sent. A command that fails (timeout, broken connection, a DENY) leaves the reported state a
// subset of what the OCS holds; the service then reads the OCS back and finishes the same plan from
// there (rolls forward), once. So a half-applied reconfiguration, after an OCS crash or the
// controller's own, is completed by the next submit, and until then the circuits reported are the
// ones read back.
//
// Patches the service does not own (across regions, outside every region, between two NICs of
// one server) are left alone, and their ports are never planned on; a patch on a failed port is
// removed (DLT-PATCH) and the port planned around, as are ports the OCS reports out of service.
// Thread-safe: one call at a time reaches the OCS; circuits() (unless an exchange failed) and
// health() never wait for it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/demand.h"
#include "control/nic_mapping.h"
#include "control/planner.h"
#include "controller/regions_file.h"
#include "tl1/tl1_client.h"

namespace mfabric::controller {

// A region's circuits in force (region-local servers, local NIC indices, server < peer_server,
// sorted), and a number that changes whenever they do.
// TL1 changes the controller keeps awaiting their answers at once: below the emulator's bound of
// 64 waiting commands a session, and 1 for an OCS that takes one command at a time.
inline constexpr std::size_t kDefaultTl1Window = 32;

struct RegionCircuits {
  std::string region;
  std::int64_t generation = 0;
  std::vector<control::PortCircuit> circuits;
  // The demand they were planned for; -1 when they were read back from the OCS.
  int layer = -1;
  int micro_batch = -1;
};

struct ControllerHealth {
  std::string ocs_address;
  bool ocs_reachable = false;  // the last exchange with the OCS succeeded
  std::string last_error;      // of the last call that failed, empty once one succeeds
  std::int64_t reconciliations = 0;
  std::int64_t reconfigurations = 0;  // submits that changed circuits
  std::int64_t commands = 0;          // ENT-PATCH and DLT-PATCH completed
  std::int64_t alarms = 0;            // autonomous messages from the OCS acted on
  std::vector<int> unusable_ports;    // device ports failed, out of service or held by others
};

class RegionControllerService {
 public:
  // `regions` as read_regions_file() gives them; nothing is sent before start(). `tl1_window`:
  // TL1 changes awaiting their answers at once (>= 1).
  RegionControllerService(std::vector<RegionSpec> regions, std::unique_ptr<tl1::Tl1Client> ocs,
                          std::size_t tl1_window = kDefaultTl1Window);
  ~RegionControllerService();
  RegionControllerService(const RegionControllerService&) = delete;
  RegionControllerService& operator=(const RegionControllerService&) = delete;

  // Reads the OCS back (see above). mfabric::Error when it cannot be reached or a region's ports
  // are beyond the OCS's.
  void start();

  // Plans `region`'s circuits for `demand` (one entry per server of the region), puts them up and
  // returns them once the OCS completed every command. mfabric::Error for an unknown region, a
  // demand of the wrong size, a plan that cannot be placed, or an OCS that did not complete the
  // reconfiguration after one read-back and retry (the circuits then reported are what it holds).
  RegionCircuits submit(const std::string& region, int layer, int micro_batch,
                        const control::ServerDemand& demand);
  // The region's circuits in force: those last read back or completed, answered without
  // waiting for a submit under way (a submit's circuits are published before its DLT-PATCHes go
  // and once it ends); read back first when an exchange failed since.
  RegionCircuits circuits(const std::string& region);
  // The OCS sent an alarm (OcsAlarmListener): reads it back now, so that a patch on a port that
  // failed is removed and stops being reported at once rather than at the next submit. Never
  // throws: an OCS that cannot be read leaves the state to be read back by the next call.
  void ocs_alarm();
  ControllerHealth health() const;

  const std::vector<RegionSpec>& regions() const { return regions_; }
  // The device ports (numbered from 1) of a circuit of `region`.
  std::pair<int, int> device_ports(const std::string& region,
                                   const control::PortCircuit& circuit) const;

 private:
  struct RegionState {
    std::set<control::PortCircuit> in_force;
    std::int64_t generation = 0;
    int layer = -1;
    int micro_batch = -1;
  };

  std::size_t index_of(const std::string& region) const;
  // Reads patches and port states back; mutex_ held.
  void reconcile();
  // The body of reconcile(), which marks the published state stale when this throws.
  void read_back();
  void reconcile_if_stale();
  // Sends the commands that turn the region's circuits in force into `target`; false when a
  // command failed (the state then stays a subset of the OCS's, and stale_ is set).
  bool apply(std::size_t index, const std::vector<control::PortCircuit>& target,
             std::string& error);
  std::vector<control::PortCircuit> plan(std::size_t index, const control::ServerDemand& demand);
  // (server, nic) of a device port inside the region, or (-1, -1).
  std::pair<int, int> place(std::size_t index, int device_port) const;
  RegionCircuits report(std::size_t index) const;
  // Sets stale_ and has readers wait for the next read-back; mutex_ held.
  void mark_stale();
  // Makes the region's state what circuits() answers; mutex_ held.
  void publish(std::size_t index);
  void record(bool reachable, const std::string& error);

  std::vector<RegionSpec> regions_;
  std::vector<std::unique_ptr<control::Planner>> planners_;
  std::unique_ptr<tl1::Tl1Client> ocs_;
  std::size_t tl1_window_;
  mutable std::mutex mutex_;  // one call at a time reaches the OCS
  std::vector<RegionState> states_;
  int ocs_ports_ = 0;
  std::set<int> unusable_ports_;  // device ports
  bool stale_ = true;             // the next call reads the OCS back first

  // What circuits() answers without taking mutex_: a subset of what the OCS holds at every
  // moment (published after a read-back, before disconnects are sent, and after a submit).
  mutable std::mutex published_mutex_;
  std::vector<RegionCircuits> published_;
  bool published_stale_ = true;

  mutable std::mutex health_mutex_;
  ControllerHealth health_;
};

}  // namespace mfabric::controller
