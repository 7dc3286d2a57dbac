// Expert-parallel communication of the training job: the dispatch and combine all-to-all-v among
// the EP ranks of a stage, their bytes from the routing trace (training.h: a trace row gives the
// distribution, the workload the volume; DP replica d reads micro-batch m + d x micro_batches),
// and the token-expert pairs each EP rank's experts compute. Internal to the builder.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "workload/routing.h"
#include "workload/training.h"
#include "workload/training_tasks.h"

namespace mfabric::workload::training {

// The all-to-all traffic of one (iteration, MoE layer, micro-batch, DP replica).
struct LayerRouting {
  std::int32_t dispatch = -1;             // matrix: EP rank a -> EP rank b, bytes per TP rank
  std::int32_t combine = -1;              // its transpose
  std::int64_t dispatch_bytes = 0;        // off-diagonal sum of `dispatch`
  std::int64_t combine_bytes = 0;         // off-diagonal sum of `combine`
  std::vector<std::int64_t> assignments;  // token-expert pairs each EP rank's experts compute
};

class ExpertTraffic {
 public:
  // Throws mfabric::Error (field "routing") when the trace does not fit the job: its EP ranks or
  // experts differ, or a MoE layer has no record (a single-record trace serves every layer).
  ExpertTraffic(const TrainingSpec& spec, const RoutingTrace& trace, int micro_batches);

  // A new iteration: its routing is read afresh.
  void new_iteration() { routing_.clear(); }
  // The routing of (layer, micro-batch mb, DP replica dp) in the tasks' iteration; its matrices
  // are added to the graph the first time it is asked for.
  const LayerRouting& routing(TrainingTasks& tasks, int layer, int mb, int dp);
  // All-to-all-v among the EP ranks of every (dp, tp) of the stage after the tasks `cur` (per
  // local GPU), which then continue from it: the dispatch matrix, or its transpose (combine).
  void all_to_all(TrainingTasks& tasks, int stage, std::vector<TaskId>& cur, Op op, Phase phase,
                  int layer, int mb, bool transposed);

  int local_experts() const { return spec_.model.experts / spec_.parallelism.ep; }

  // The token-expert pairs of the busiest EP rank, averaged over the first iteration's MoE
  // layers, micro-batches and DP replicas: what "the busiest GPU takes X per layer" refers to.
  double mean_busiest_assignments() const;

 private:
  // Assignments per EP rank and the dispatch bytes (a -> b) of one trace row (iteration, trace
  // layer, micro-batch index across replicas).
  std::pair<std::vector<std::int64_t>, ByteMatrix> route(int iteration, int layer,
                                                         int mb_index) const;

  int trace_layer(int layer) const {
    const int idx = trace_.layer_index(layer);
    return idx >= 0 ? idx : 0;  // a single-record trace serves every layer
  }

  const TrainingSpec& spec_;
  const RoutingTrace& trace_;
  int m_;  // micro-batches per iteration
  std::map<std::tuple<int, int, int>, LayerRouting> routing_;
};

}  // namespace mfabric::workload::training
