// The MoE training job as a TaskGraph: one or more iterations of a pipeline schedule over
// micro-batches, with the communication every parallelism needs.
//
// Per MoE layer and micro-batch, on every TP group of every EP rank (docs/workload.md):
//   forward:  attention -> [TP all-reduce] -> router -> dispatch all-to-all-v -> experts
//             (and shared experts) -> combine all-to-all-v -> [TP all-reduce]
//   backward: combine-bwd all-to-all-v -> experts-bwd -> dispatch-bwd all-to-all-v -> router-bwd
//             -> [TP all-reduce] -> attention-bwd -> [TP all-reduce]
// Dense layers replace router/all-to-alls/experts by a dense FFN. Pipeline stages exchange
// activations (forward) and gradients (backward) point-to-point, 1/TP of the tensor per TP rank
// (Megatron-LM's scatter/gather optimisation). After the last backward of a stage: gradient
// all-reduce of the non-expert parameters over the EP x DP ranks, and of the expert parameters
// over the DP ranks holding the same experts. The next iteration starts after both.
//
// All-to-all bytes come from the routing trace: tokens from EP rank a to the experts hosted on
// rank b, x hidden x dtype bytes, / TP (each TP rank carries its share). Rows of the trace are
// rescaled to the workload's tokens x top_k, so a trace gives the distribution and the workload
// the volume. DP replica d uses micro-batch (m + d x micro_batches) of the trace.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workload/compute.h"
#include "workload/model.h"
#include "workload/parallelism.h"
#include "workload/routing.h"
#include "workload/task_graph.h"

namespace mfabric::workload {

// Interleaved is Megatron-LM's interleaved 1F1B over PP x VP virtual stages (ParallelismSpec::vp
// model chunks a stage; Narayanan et al., SC'21, section 2.2). DualPipe is DeepSeek-V3's
// bidirectional schedule (arXiv 2412.19437, section 3.2.1; training_schedule.h): half the
// micro-batches enter at stage 0, half at the last stage, each stage holding the layers of its own
// position and of the mirrored one, a forward of one direction overlapped with a backward of the
// other (the EP overlap, OverlapSpec::ep_comm, which it turns on).
enum class PipelineSchedule { OneFOneB, GPipe, Interleaved, DualPipe };
const char* to_string(PipelineSchedule s);
// "1f1b", "gpipe", "interleaved" or "dualpipe"; throws mfabric::Error otherwise.
PipelineSchedule parse_schedule(const std::string& text);
// The share of an iteration a stage of the schedule idles in the pipeline's fill and drain, with
// every forward and backward of a micro-batch taking the same time on each stage and nothing
// else in the way: (stages - 1) / (micro_batches + stages - 1) for both 1F1B and GPipe (1F1B
// changes when activations are freed, not the bubble; Narayanan et al., SC'21, section 2.2);
// interleaved over `chunks` model chunks a stage, (stages - 1) / (chunks x micro_batches + stages
// - 1). DualPipe without its weight-gradient split: (stages / 2 - 1) slots of a forward-and-
// backward pair and a backward, (stages / 2 - 1) x 5/3 micro-batch slots with a backward twice a
// forward, of micro_batches + that. 0 for one stage; throws mfabric::Error naming "pp", "vp" or
// "micro_batches" below 1.
double bubble_fraction(PipelineSchedule schedule, int stages, int micro_batches, int chunks = 1);

// Training iterations one run may simulate (experiment files and the command line alike).
inline constexpr int kMaxIterations = 10000;
// Tokens per sequence (1M: far above any model's context, far below 32-bit token counts).
inline constexpr int kMaxSeq = 1 << 20;

// Communication a framework overlaps with compute (docs/workload.md, "Overlap"); all off by
// default, each following a named framework option.
struct OverlapSpec {
  // Megatron-LM --overlap-grad-reduce: each layer's gradient all-reduces start as soon as the
  // stage's last micro-batch has finished that layer's backward, under the backward of the
  // layers below, instead of after the whole backward.
  bool grad_reduce = false;
  // Megatron-Core's EP communication overlap (--overlap-moe-expert-parallel-comm, its combined
  // 1F1B; and DeepSeek-V3's DualPipe): the steady phase's forward and backward of different
  // micro-batches run as one merged step, their layers' parts interleaved on one compute stream,
  // so that one micro-batch's compute fills the other's all-to-all wait (training_schedule.h).
  // Megatron-Core accepts it only under some settings (megatron_checks.h); mfabric runs any.
  bool ep_comm = false;
  // Megatron-LM --tp-comm-overlap: a TP all-reduce is pipelined with the GEMM that produces its
  // input (both split into chunks), so the pair takes max(compute, all-reduce) instead of their
  // sum; an all-reduce after communication (the combine) is not.
  bool tp_comm = false;
};

// Number formats of the GEMMs (workload.precision). FP8 as DeepSeek-V3 trains: the linear layers'
// GEMMs in FP8 at their measured speed (ComputeShape::fp8), and the all-to-all that carries
// tokens (or their gradients) to the experts in FP8 with one fp32 scale per 128 elements; the
// other direction, the attention core, router and LM head stay bf16.
enum class Precision { BF16, FP8 };
const char* to_string(Precision p);
// "bf16" or "fp8"; throws mfabric::Error otherwise.
Precision parse_precision(const std::string& text);
// Bytes per hidden element of an FP8 all-to-all to the experts: e4m3 and a fp32 scale per 128.
inline constexpr double kFp8DispatchBytesPerElement = 1.0 + 4.0 / 128;

// How tokens reach the experts (workload.dispatcher). AllToAll: an all-to-all-v that sends each
// token once per expert it is routed to. DeepEP: DeepSeek's DeepEP kernels, which send a token
// once per node over RDMA, to the GPU of the same rail there, which forwards it over NVLink to
// the token's experts on that node (and reduce on the way back); both hops as one all-to-all-v
// (DeepEP pipelines them in chunks). docs/workload.md, "Dispatcher".
enum class Dispatcher { AllToAll, DeepEP };
const char* to_string(Dispatcher d);
// "alltoall" or "deepep"; throws mfabric::Error otherwise.
Dispatcher parse_dispatcher(const std::string& text);

// Activation recomputation (workload.recompute; docs/workload.md, "Recomputation"). Selective:
// Megatron-Core's --recompute-modules layernorm moe_act (and mla_up_proj for MLA), which
// DeepSeek-V3 also recomputes: the norms' outputs, the experts' activation outputs and MLA's
// up-projected queries, keys and values are not kept but recomputed in the backward, from what is
// kept anyway; that recompute (elementwise ops and two small GEMMs) is not timed. Full:
// Megatron-LM's
// --recompute-granularity full --recompute-method uniform --recompute-num-layers 1: each layer
// keeps only its input, and its backward first runs its forward again, communication included
// (the TP all-reduces and the EP all-to-alls).
enum class Recompute { None, Selective, Full };
const char* to_string(Recompute r);
// "none", "selective" or "full"; throws mfabric::Error otherwise.
Recompute parse_recompute(const std::string& text);

struct TrainingSpec {
  ModelSpec model;
  ParallelismSpec parallelism;
  int gpus_per_server = 8;
  int micro_batch = 8;     // sequences per micro-batch
  int global_batch = 128;  // sequences per iteration, split over DP replicas (docs/workload.md)
  int seq = 4096;          // tokens per sequence
  GpuSpec gpu;
  Efficiency efficiency;
  // Fraction of HBM bandwidth the optimizer step reaches; nullopt: the step is not modelled
  // (workload/calibration.h).
  std::optional<double> optimizer_efficiency;
  // Measured kernel tables (kernel_model.h): with them each op is timed by its shape; without,
  // by the roofline with `efficiency`.
  std::shared_ptr<const KernelCalibration> kernels;
  // Expert compute as measured (calibration.h: Calibration::expert_per_token): the routed
  // experts' time from each GPU's token-expert pairs.
  std::optional<Time> expert_per_token;
  std::optional<Time> expert_layer_busiest;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  Precision precision = Precision::BF16;
  // Megatron-LM's distributed optimizer (ZeRO-1, --use-distributed-optimizer): gradients are
  // reduce-scattered over the data-parallel GPUs holding the same parameters, each updates its
  // shard, and the parameters are all-gathered before the next iteration; the optimizer state is
  // sharded (gpu_memory).
  bool distributed_optimizer = false;
  Dispatcher dispatcher = Dispatcher::AllToAll;
  Recompute recompute = Recompute::None;
  // Node-limited routing: each token's experts lie on at most this many nodes of its EP group
  // (DeepSeek-V3's M = 4); 0: no limit. It bounds the per-node copies of the DeepEP dispatcher.
  int max_nodes_per_token = 0;
  OverlapSpec overlap;
  int iterations = 1;
  const ComputeReplay* replay = nullptr;  // measured durations, when given

  // Sequences per iteration / (micro-batch x DP); throws mfabric::Error naming global_batch if
  // that is not a whole number >= 1.
  int micro_batches() const;
  // Tokens of one micro-batch of one data replica (micro_batch x seq).
  std::int64_t tokens_per_micro_batch() const {
    return static_cast<std::int64_t>(micro_batch) * seq;
  }
  // Tokens each EP rank routes per micro-batch: its ETP GPUs' share of their replicas' tokens
  // under sequence and context parallelism, micro_batch x seq x ETP / (TP x CP); micro_batch x
  // seq under the paper's convention (ETP = TP, CP = 1).
  std::int64_t tokens_per_ep_rank() const {
    return tokens_per_micro_batch() * parallelism.expert_tp() /
           (static_cast<std::int64_t>(parallelism.tp) * parallelism.cp);
  }
};

// A synthetic routing trace sized for `spec` (its MoE layers, EP, experts, iterations, and
// micro_batches x DP micro-batches), from `params` with tokens and top-k taken from the spec.
// `of_micro_batches` (0: the spec's own): the micro-batches a pipeline of the job whose first
// micro-batches these are, so that each replica's micro-batch k gets that job's matrices (an
// extrapolation's short run, sim/steady_state.h).
RoutingTrace synthetic_trace_for(const TrainingSpec& spec, SyntheticRouting params,
                                 std::uint64_t seed, int of_micro_batches = 0);

// Builds the task graph. Throws mfabric::Error for inconsistent input (trace EP or expert count
// differing from the spec, a MoE layer missing from the trace, a bad batch split).
TaskGraph build_training_graph(const TrainingSpec& spec, const RoutingTrace& trace);

struct WorkloadSummary {
  int gpus = 0;
  ParallelismSpec parallelism;
  int micro_batches = 0;
  int region_servers = 0;
  std::vector<int> stage_layers;
  std::int64_t compute_tasks = 0;
  std::int64_t collective_tasks = 0;
  std::int64_t p2p_tasks = 0;
  // Bytes per iteration by parallelism: all-reduce, all-gather, reduce-scatter and broadcast
  // count their buffer once per member (what each GPU hands to NCCL); all-to-all counts the bytes
  // that leave each member (off the diagonal); p2p its bytes. Averaged over iterations.
  std::int64_t bytes_tp = 0, bytes_cp = 0, bytes_ep = 0, bytes_dp = 0, bytes_pp = 0;
  // Per stage: compute time per iteration of its busiest GPU (seconds), averaged over iterations.
  std::vector<double> compute_s_per_stage;
  // Forward time of one MoE layer for one micro-batch on the busiest GPU: attention (incl.
  // router) and experts, averaged over layers, micro-batches and iterations (seconds).
  double attention_fwd_s = 0;
  double experts_fwd_s = 0;
  // Each compute op of a MoE layer's forward for one micro-batch on the GPU where it takes
  // longest (both halves of the permutation together), averaged like the above, in the order the
  // layer runs them (seconds).
  std::vector<std::pair<Op, double>> moe_layer_fwd_ops;
};

WorkloadSummary summarize(const TrainingSpec& spec, const TaskGraph& graph);

// What building and simulating a job will take, estimated from its shape before anything is
// built (an upper estimate: tests check it against built graphs). Memory counts the task graph,
// the engine's per-task state, the all-to-all-v matrices and the routing trace.
struct JobSize {
  std::int64_t tasks = 0;
  std::int64_t matrices = 0;
  std::int64_t trace_bytes = 0;
  std::int64_t memory_bytes = 0;
};
// Whether the run keeps every task's start and end (simulate --out, compare's timelines), which
// costs about 80 bytes a task more (docs/workload.md, "Job size").
enum class TaskSpans { Recorded, NotRecorded };
JobSize estimate_job_size(const TrainingSpec& spec, TaskSpans spans = TaskSpans::Recorded);

// Memory a routing trace of these dimensions holds (counts are int32).
std::int64_t routing_trace_bytes(int ep, int experts, int iterations, int layers,
                                 int micro_batches);

// The default memory limit for a job (docs/workload.md, "Job size"); the `max_memory` experiment
// field and the --max-memory option change it.
inline constexpr std::int64_t kDefaultMaxJobMemory = std::int64_t{8} << 30;  // 8 GiB

// Throws mfabric::Error naming `option` when the job's estimate is above `limit`, or above what
// the task graph can index at all (2^31 tasks, 32767 micro-batches per iteration), with the
// estimate in the message; `how_to_raise` (default: option) says how to raise the limit.
void check_job_size(const TrainingSpec& spec, Bytes limit, const std::string& option,
                    const std::string& how_to_raise = "", TaskSpans spans = TaskSpans::Recorded);

}  // namespace mfabric::workload
