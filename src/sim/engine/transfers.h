// What the engine puts on the network for a task: its transfers as the collective library puts
// them on the wire, salted flow hashes, and the record of each transfer (with
// EngineOptions::record_flows). Completions arriving during the backend's advance() are only
// collected here; the engine handles them afterwards, so that the backend is never asked to start
// a transfer from inside its own event processing.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/units.h"
#include "net/backend.h"
#include "sim/engine.h"
#include "workload/calibration.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

// A task's flow hash: its id spread over 64 bits, salted by the seed (EngineOptions::flow_salt).
inline std::uint64_t task_flow_hash(std::int64_t id, std::uint64_t salt) {
  return (static_cast<std::uint64_t>(id) * 0x9e3779b97f4a7c15ULL) ^ salt;
}

// The transfer as the collective library puts it on the wire: at a fraction of the line rate the
// library reaches, its bytes take as long as size / efficiency bytes at line rate.
inline net::Transfer on_wire(net::Transfer tr, const workload::CollectiveCost& cost) {
  if (cost.efficiency == 1) return tr;
  const double wire = std::ceil(static_cast<double>(tr.size.count()) / cost.efficiency);
  // Efficiencies are at least kMinCollectiveEfficiency, so this stays far inside int64 for every
  // size the workloads make (workload::kMaxTransferBytes); the guard is for the arithmetic.
  tr.size = Bytes(wire >= 9.0e18 ? std::numeric_limits<std::int64_t>::max()
                                 : static_cast<std::int64_t>(wire));
  return tr;
}

class TaskTransfers {
 public:
  // `micro_batches`: the graph whose micro-batch tasks' bytes to count (micro_batch_bytes()), or
  // null.
  TaskTransfers(net::Backend& backend, bool record_flows,
                const workload::TaskGraph* micro_batches = nullptr)
      : backend_(backend), record_flows_(record_flows), micro_batches_(micro_batches) {}

  // Starts transfer `tr` of task `id` now.
  void start(workload::TaskId id, const net::Transfer& tr) {
    if (micro_batches_ != nullptr && micro_batches_->task(id).micro_batch >= 0) {
      micro_batch_bytes_ += tr.size.count();
    }
    if (!record_flows_) {
      backend_.start(tr, [this, id](net::TransferId, Time) { arrived_.push_back(id); });
      return;
    }
    const std::size_t record = flows_.size();
    flows_.push_back(FlowRecord{id, tr.src, tr.dst, tr.size, backend_.now(), Time::max()});
    backend_.start(tr, [this, id, record](net::TransferId, Time at) {
      flows_[record].end = at;
      arrived_.push_back(id);
    });
  }

  // Starts the transfers of one step of task `id` now, as one coflow (net::Backend::start_coflow).
  void start_coflow(workload::TaskId id, std::span<const net::Transfer> transfers) {
    std::vector<net::Backend::DoneCallback> done;
    done.reserve(transfers.size());
    for (const net::Transfer& tr : transfers) {
      if (micro_batches_ != nullptr && micro_batches_->task(id).micro_batch >= 0) {
        micro_batch_bytes_ += tr.size.count();
      }
      if (!record_flows_) {
        done.emplace_back([this, id](net::TransferId, Time) { arrived_.push_back(id); });
        continue;
      }
      const std::size_t record = flows_.size();
      flows_.push_back(FlowRecord{id, tr.src, tr.dst, tr.size, backend_.now(), Time::max()});
      done.emplace_back([this, id, record](net::TransferId, Time at) {
        flows_[record].end = at;
        arrived_.push_back(id);
      });
    }
    backend_.start_coflow(transfers, std::move(done));
  }

  // The tasks of the transfers that completed since the list was last cleared, in completion
  // order (a task once per transfer).
  std::vector<workload::TaskId>& arrived() { return arrived_; }

  // Every transfer's record, in start order (empty without record_flows).
  std::vector<FlowRecord> take_flows() { return std::move(flows_); }

  // The bytes started by tasks of a micro-batch (with a graph to count them in).
  std::int64_t micro_batch_bytes() const { return micro_batch_bytes_; }

 private:
  net::Backend& backend_;
  bool record_flows_;
  const workload::TaskGraph* micro_batches_;
  std::int64_t micro_batch_bytes_ = 0;
  std::vector<workload::TaskId> arrived_;
  std::vector<FlowRecord> flows_;
};

}  // namespace mfabric::sim::engine
