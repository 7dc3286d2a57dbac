// The figures of a finished run that come from its tasks' times (RunResult): iteration times and
// makespan, communication time per traffic class (averaged per GPU, and as a profiler on each GPU
// counts it), exposed communication, the held collectives on the critical path, and the spans.
// Read once, after the event loop; nothing here changes the run.
#pragma once

#include <unordered_map>

#include "core/units.h"
#include "sim/engine.h"
#include "sim/engine/compute_streams.h"
#include "sim/engine/task_states.h"
#include "workload/task_graph.h"

namespace mfabric::sim::engine {

// Sets r's iteration_times, makespan, comm_time, comm_time_profiled, exposed_comm,
// critical_holds, critical_held_time, with `record_spans` spans, and with `micro_batch_figures`
// micro_batch_figures. `held_for`: the
// collectives a controller held, and for how long.
void summarize_tasks(const workload::TaskGraph& graph, const TaskStates& tasks,
                     const ComputeStreams& streams,
                     const std::unordered_map<workload::TaskId, Time>& held_for, bool record_spans,
                     bool micro_batch_figures, RunResult& r);

}  // namespace mfabric::sim::engine
