// Parallelism and the rank layout, under either of two conventions for counting GPUs
// (docs/workload.md, "Parallelism conventions"):
//
// - megatron (Megatron-Core's "parallel folding"): the dense layers use TP x CP x DP x PP GPUs
//   and the experts ETP x EP x EDP x PP of the same GPUs, so EP x ETP divides TP x CP x DP and
//   EDP = TP x CP x DP / (EP x ETP); ETP defaults to 1.
// - paper (the mFabric paper's simulator): GPUs = TP x PP x EP x DP, each EP rank a data-parallel
//   replica of the dense layers and its experts split like them over TP. It is the megatron
//   layout with ETP = TP, CP = 1 and a dense DP of EP x DP, which is how it is held here.
//
// Rank order, innermost first, inside a pipeline stage of S = TP x CP x DP_dense GPUs:
//
//   dense view:  local = tp + TP * (cp + CP * dp)
//   expert view: local = etp + ETP * (ep + EP * edp)
//   gpu = local + S * pp
//
// so the EP x ETP GPUs of one EP group are a contiguous block (mFabric's region), a TP group is
// contiguous inside a server, and under the paper's convention the order is the paper's
// tp + TP * (ep + EP * (dp + DP * pp)).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workload/model.h"

namespace mfabric::workload {

enum class ParallelConvention { Megatron, Paper };
const char* to_string(ParallelConvention c);
// "megatron" or "paper"; throws mfabric::Error otherwise.
ParallelConvention parse_convention(const std::string& text);

// How a pipeline's layers are split over its stages (Megatron-LM's options): by default as even as
// possible; `first` and `last` (0: not given) fix the first and last stage's decoder layers and
// the middle stages share the rest evenly (--decoder-first/last-pipeline-num-layers); with
// `embedding` or `loss` the embedding or the loss counts as one layer's slot, on the first or the
// last stage, and the slots must split evenly (--account-for-embedding/loss-in-pipeline-split).
struct PipelineSplit {
  int first = 0;
  int last = 0;
  bool embedding = false;
  bool loss = false;
  bool even() const { return first == 0 && last == 0 && !embedding && !loss; }
};

// The degrees as a user gives them, read under `convention`. The struct's default convention is
// the paper's, which the code's own tests were written in; experiment files and the command line
// always set theirs (config: workload.convention).
struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int dp = 1;   // data-parallel degree of the convention: dense DP (megatron), replicas (paper)
  int etp = 0;  // expert tensor parallelism; 0: the convention's (1, or TP under the paper's)
  int cp = 1;   // context parallelism (megatron only)
  int vp = 1;   // virtual pipeline: model chunks per stage (interleaved 1F1B)
  ParallelConvention convention = ParallelConvention::Paper;
  PipelineSplit split;

  bool paper() const { return convention == ParallelConvention::Paper; }
  int expert_tp() const { return paper() ? tp : (etp > 0 ? etp : 1); }
  // GPUs over which the dense layers' gradients are reduced, per TP rank: DP x CP (megatron),
  // EP x DP (paper).
  int dense_dp() const { return paper() ? ep * dp : dp; }
  int stage_gpus() const { return tp * cp * dense_dp(); }
  // Replicas of each expert: the expert-data-parallel degree.
  int expert_dp() const { return stage_gpus() / (ep * expert_tp()); }
  // GPUs of one EP group (EP ranks of ETP GPUs each): an mFabric region's share.
  int ep_group_gpus() const { return ep * expert_tp(); }
  int gpus() const { return stage_gpus() * pp; }
};

// The degrees under each convention (etp 0: the convention's default).
ParallelismSpec paper_parallelism(int tp, int pp, int ep, int dp);
ParallelismSpec megatron_parallelism(int tp, int pp, int ep, int dp, int etp = 0, int cp = 1);

// "tp 2, pp 8, ep 64, etp 1, dp 64 (expert-dp 2), megatron": the degrees as every output prints
// them.
std::string parallelism_text(const ParallelismSpec& p);

// The dense view of a GPU.
struct RankCoord {
  int tp = 0;
  int cp = 0;
  int dp = 0;  // dense DP index, 0..dense_dp()-1
  int pp = 0;
};

// The expert view of a GPU (its stage is RankCoord::pp).
struct ExpertCoord {
  int etp = 0;
  int ep = 0;
  int edp = 0;
};

// The parallelism of a job from the degrees a user gave (dp optional) and the job's GPU count
// (0 = not known, then dp must be given). Each degree is first checked on its own against the
// model and the server (RankLayout's checks: tp divides the GPUs per server, ep divides the
// experts, pp at most the layers, ...) so that the message names the real problem; only then
// must the GPUs of one data replica divide the job's (dp = GPUs / that) or, with dp given, equal
// GPUs / dp. mfabric::Error fields: "tp", "pp", "ep", "etp", "cp", "dp", "gpus".
ParallelismSpec resolve_parallelism(ParallelismSpec given, std::optional<int> dp, int gpus,
                                    const ModelSpec& model, int gpus_per_server);

class RankLayout {
 public:
  // Validates (throws mfabric::Error naming the field: "tp", "ep", ...): every degree >= 1;
  // tp divides gpus_per_server; ep x etp is a multiple or a divisor of gpus_per_server (so that
  // regions are whole servers, or several EP groups share a server) and divides the stage's
  // TP x CP x DP GPUs; experts divisible by ep; pp <= layers; under the paper's convention etp
  // is tp (or not given) and cp 1; and, when gpus > 0, the product is gpus.
  RankLayout(const ParallelismSpec& p, const ModelSpec& model, int gpus_per_server, int gpus = 0);

  const ParallelismSpec& spec() const { return p_; }
  int gpus() const { return p_.gpus(); }
  int gpus_per_server() const { return gpus_per_server_; }
  int stage_gpus() const { return stage_gpus_; }

  int gpu(int stage, int local) const;
  int gpu(const RankCoord& c) const;
  RankCoord coord(int gpu) const;
  ExpertCoord expert_coord(int gpu) const;
  int local(int gpu) const { return gpu % stage_gpus_; }

  // Groups, each in member order.
  std::vector<int> tp_group(int gpu) const;  // same cp, dp, pp; ordered by tp
  std::vector<int> cp_group(int gpu) const;  // same tp, dp, pp; ordered by cp
  std::vector<int> ep_group(int gpu) const;  // same etp, edp, pp; ordered by ep
  // Non-expert gradient reduction: same tp and pp, every (cp, dp); ascending GPU ids.
  std::vector<int> dense_dp_group(int gpu) const;
  // Expert gradient reduction: same etp, ep and pp; ordered by edp.
  std::vector<int> expert_dp_group(int gpu) const;

  // Servers per region (an EP group): ep x etp / gpus_per_server, at least 1.
  int region_servers() const;

  // The model's layers run in PP x VP virtual stages: virtual stage v = chunk x PP + stage is
  // model chunk `chunk` of pipeline stage `stage` (Megatron-LM's interleaved layout; VP 1: one
  // chunk a stage). Layers are split over the virtual stages by the spec's PipelineSplit (even:
  // the first (layers mod (PP x VP)) get one more layer).
  int virtual_stages() const { return p_.pp * p_.vp; }
  int chunk_layers(int virtual_stage) const;
  int chunk_first_layer(int virtual_stage) const;
  // Decoder layers of a pipeline stage (all its chunks), and their indices in model order.
  int stage_layers(int stage) const;
  std::vector<int> layers_of_stage(int stage) const;

 private:
  ParallelismSpec p_;
  int gpus_per_server_;
  int stage_gpus_;
  std::vector<int> first_layer_;  // per virtual stage, and the layer count after the last
};

}  // namespace mfabric::workload
