// The engine's collectives between ready and finished: the request each becomes (its members'
// GPU nodes, bytes, matrix, the circuits up now), those a fabric controller holds, and each
// lowered collective's progress through its plan (collective/): step k+1 starts once every
// transfer of step k has arrived, and steps without transfers are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collective/circuit_view.h"
#include "collective/lowering.h"
#include "core/units.h"
#include "fabric/topology.h"
#include "net/backend.h"
#include "net/circuits.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

// The backend's circuits as the lowerings see them (collective/circuit_view.h), and which nodes
// have failed (never picked as a proxy).
class BackendCircuits final : public collective::CircuitView {
 public:
  // `failed`: per topology node, nonzero once failed; null: nothing fails. Not owned. A
  // backend's capabilities are fixed over its life: its circuits are looked up once.
  BackendCircuits(const net::Backend& backend, const std::vector<std::uint8_t>* failed)
      : circuits_(backend.circuits()), failed_(failed) {}
  fabric::NodeId circuit_peer(fabric::NodeId nic) const override;
  bool usable(fabric::NodeId node) const override {
    return failed_ == nullptr || (*failed_)[static_cast<std::size_t>(node)] == 0;
  }

 private:
  const net::Circuits* circuits_;
  const std::vector<std::uint8_t>* failed_;
};

class CollectiveSteps {
 public:
  CollectiveSteps(const collective::AlgorithmChoice& algorithms, const net::Backend& backend,
                  const std::vector<std::uint8_t>* failed_nodes)
      : lowerer_(algorithms), circuits_(backend, failed_nodes) {}

  // Collective task `id` as a request to lower: its group's GPUs as topology nodes
  // (`gpu_nodes[g]`), its bytes and matrix, `flow_hash`, and the circuits up when it is lowered.
  collective::CollectiveRequest request(const workload::TaskGraph& graph, workload::TaskId id,
                                        const std::vector<fabric::NodeId>& gpu_nodes,
                                        std::uint64_t flow_hash) const;

  // A controller holds collective `id` until release(id).
  void hold(workload::TaskId id, collective::CollectiveRequest request);
  // Takes back the request of held collective `id`; std::logic_error if it is not held.
  collective::CollectiveRequest release(workload::TaskId id);
  // Released collective `id` was held for `waited` (for the critical path's count).
  void held_for(workload::TaskId id, Time waited) { held_for_.emplace(id, waited); }

  // Lowers collective `id` to its plan; it stands before its first step.
  void lower(workload::TaskId id, const collective::CollectiveRequest& request,
             const fabric::Topology& topology) {
    active_.insert_or_assign(id, Active{lowerer_.lower(request, topology), 0, 0});
  }
  // Moves collective `id` to its next step with transfers (the current one, right after
  // lower()), all of them outstanding; false, forgetting the collective, when none is left.
  bool next_step(workload::TaskId id) {
    Active& a = active_.at(id);
    while (a.step < a.plan.steps.size() && a.plan.steps[a.step].transfers.empty())
      ++a.step;
    if (a.step == a.plan.steps.size()) {
      active_.erase(id);
      return false;
    }
    a.outstanding = a.plan.steps[a.step].transfers.size();
    return true;
  }
  // The transfers of collective `id`'s current step.
  const std::vector<net::Transfer>& step_transfers(workload::TaskId id) const {
    const Active& a = active_.at(id);
    return a.plan.steps[a.step].transfers;
  }
  // A transfer of collective `id`'s current step arrived; true when it was the step's last (the
  // collective then stands after that step: call next_step).
  bool transfer_done(workload::TaskId id) {
    Active& a = active_.at(id);
    if (--a.outstanding > 0) return false;
    ++a.step;
    return true;
  }

  // The collectives held now, with their requests.
  const std::unordered_map<workload::TaskId, collective::CollectiveRequest>& held() const {
    return held_;
  }
  // Every collective a controller held and released, and for how long.
  const std::unordered_map<workload::TaskId, Time>& held_for() const { return held_for_; }

 private:
  struct Active {
    collective::Plan plan;
    std::size_t step = 0;
    std::size_t outstanding = 0;
  };

  collective::Lowerer lowerer_;
  BackendCircuits circuits_;
  std::unordered_map<workload::TaskId, Active> active_;
  std::unordered_map<workload::TaskId, collective::CollectiveRequest> held_;
  std::unordered_map<workload::TaskId, Time> held_for_;
};

}  // namespace mfabric::sim::engine
