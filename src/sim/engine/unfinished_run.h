// Why a run cannot finish: the error the engine throws when no event is left but tasks are
// (docs/reliability.md), naming the first such task and the reason: a collective a controller
// never released, a transfer that cannot finish (a link down with no other route, a circuit torn
// down and never replaced, an end past the picosecond clock), or dependencies never met.
#pragma once

#include <unordered_map>

#include "collective/lowering.h"
#include "core/error.h"
#include "fabric/topology.h"
#include "net/backend.h"
#include "sim/engine/task_states.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

// The words for a time past the clock, in this error and in a compute task's.
inline constexpr const char* kPastTimeRange =
    "past the largest time mfabric represents (2^63 ps, about 106 days of simulated time)";

// `held`: the collectives a controller holds now. Asks the backend for its stalled transfers.
Error unfinished_error(
    const workload::TaskGraph& graph, const fabric::Topology& topology, const net::Backend& backend,
    const TaskStates& tasks,
    const std::unordered_map<workload::TaskId, collective::CollectiveRequest>& held);

}  // namespace mfabric::sim::engine
