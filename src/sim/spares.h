// The spares that take the ranks of failed GPUs and servers before a run (docs/reliability.md,
// "Failures"); the failures themselves are the experiment's (config/failures.h).
#pragma once

#include <cstdint>
#include <vector>

#include "config/failures.h"
#include "fabric/topology.h"

namespace mfabric::sim {

// A failed GPU's rank on its spare.
struct SpareMove {
  int failure = 0;  // index into the failures
  int from_gpu = 0;
  int to_gpu = 0;
};

// Where the job's GPUs run once the spares have taken the failed ones' ranks: gpu_of[g] for
// every GPU g of the job, and the moves made. Spares are the cluster's GPUs the job does not use
// (give the cluster more servers than the job needs, and workload.dp). A failed server's ranks
// go to the first idle server of its own region (on mFabric; it then gets the region's
// circuits), else to the first idle server (over the EPS); a failed GPU's rank to the first idle
// GPU of its own region, else the first idle GPU. Failed parts are never spares. Throws
// mfabric::Error(source, "failures[k]", ...) naming the failure when no spare is left.
struct SparePlacement {
  std::vector<std::int32_t> gpu_of;
  std::vector<SpareMove> moves;
};
SparePlacement place_spares(const std::vector<config::Failure>& failures,
                            const fabric::Topology& topology, int job_gpus,
                            const std::string& source);

}  // namespace mfabric::sim
