// Parallelism and the rank layout. GPUs = TP x EP x DP x PP. Rank order, innermost first:
// TP (contiguous, inside a server), then EP, then DP, then PP:
//
//   gpu = tp + TP * (ep + EP * (dp + DP * pp))
//
// so the EP x TP GPUs of one EP group are a contiguous block of EP x TP / gpus_per_server
// servers: mFabric's region. EP ranks are data-parallel replicas for the dense (non-expert)
// layers, as in Megatron-LM and the paper's simulator.
#pragma once

#include <optional>
#include <vector>

#include "workload/model.h"

namespace mfabric::workload {

struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int dp = 1;
  int gpus() const { return tp * pp * ep * dp; }
};

struct RankCoord {
  int tp = 0;
  int ep = 0;
  int dp = 0;
  int pp = 0;
};

// The parallelism of a job from the degrees a user gave (dp optional) and the job's GPU count
// (0 = not known, then dp must be given). Each degree is first checked on its own against the
// model and the server (RankLayout's checks: tp divides the GPUs per server, ep divides the
// experts, pp at most the layers, ...) so that the message names the real problem; only then
// must tp x pp x ep divide the GPUs (dp = GPUs / (tp x pp x ep)) or, with dp given, equal GPUs
// / dp. mfabric::Error fields: "tp", "pp", "ep", "dp", "gpus".
ParallelismSpec resolve_parallelism(int tp, int pp, int ep, std::optional<int> dp, int gpus,
                                    const ModelSpec& model, int gpus_per_server);

class RankLayout {
 public:
  // Validates (throws mfabric::Error naming the field: "tp", "ep", ...): every degree >= 1;
  // tp divides gpus_per_server; ep x tp is a multiple or a divisor of gpus_per_server (so that
  // regions are whole servers, or several EP groups share a server); experts divisible by ep;
  // pp <= layers; and, when gpus > 0, tp x pp x ep x dp == gpus.
  RankLayout(const ParallelismSpec& p, const ModelSpec& model, int gpus_per_server, int gpus = 0);

  const ParallelismSpec& spec() const { return p_; }
  int gpus() const { return p_.gpus(); }
  int gpus_per_server() const { return gpus_per_server_; }

  int gpu(const RankCoord& c) const;
  RankCoord coord(int gpu) const;

  // Groups, each in member order.
  std::vector<int> tp_group(int gpu) const;  // same ep, dp, pp
  std::vector<int> ep_group(int gpu) const;  // same tp, dp, pp; ordered by ep
  // Non-expert gradient all-reduce: same tp and pp, all (ep, dp); ordered by dp then ep.
  std::vector<int> dense_dp_group(int gpu) const;
  // Expert gradient all-reduce: same tp, ep, pp; ordered by dp.
  std::vector<int> expert_dp_group(int gpu) const;

  // Servers per region (EP group x TP): ep x tp / gpus_per_server, at least 1.
  int region_servers() const;

  // Layers per pipeline stage, as even as possible: the first (layers mod pp) stages get one
  // more layer. first_layer(s) is the global index of stage s's first layer.
  int stage_layers(int stage) const;
  int first_layer(int stage) const;

 private:
  ParallelismSpec p_;
  int gpus_per_server_;
  int layers_;
};

}  // namespace mfabric::workload
