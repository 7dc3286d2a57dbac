// Experiment files (YAML, docs/experiment.md): the cluster, the fabric, the workload and the
// simulation settings of one run. Unknown keys are errors, so a typo is never a silent default.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "collective/lowering.h"
#include "config/failures.h"
#include "core/spec.h"
#include "fabric/topology.h"
#include "net/packet/packet_options.h"
#include "workload/calibration.h"
#include "workload/chakra.h"
#include "workload/routing.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::config {

// A single collective instead of a model: {collective, bytes, group, algorithm}.
struct MicroBenchmark {
  workload::CollectiveKind collective = workload::CollectiveKind::AllReduce;
  Bytes bytes = Bytes::gib(1);
  // "all": one collective over every GPU; "per-server": one per server, concurrently;
  // "per-rail": one per local GPU index across servers, concurrently.
  std::string group = "all";
  std::string algorithm;  // empty: the default for the collective (lowering.h)
};

// A training job: the model, its parallelism, batch and schedule, what overlaps, and its expert
// routing. The one description of a job, for an experiment's `workload:` and for each model of a
// comparison (study/compare.h).
struct TrainingJob {
  std::string model = "mixtral-8x22b";
  int tp = 1, pp = 1, ep = 1;
  std::optional<int> dp;  // default: the GPUs over those of one data replica
  int etp = 0;            // expert TP; 0: the convention's (workload/parallelism.h)
  int cp = 1;
  int vp = 1;  // virtual pipeline (model chunks a stage): the interleaved schedule
  std::string precision = "bf16";       // "bf16" or "fp8" (workload/training.h, Precision)
  bool distributed_optimizer = false;   // ZeRO-1 (workload/training.h)
  std::string dispatcher = "alltoall";  // "alltoall" or "deepep" (workload/training.h)
  std::string recompute = "none";       // "none", "selective" or "full" (workload/training.h)
  int max_nodes = 0;                    // node-limited routing (workload.routing.max_nodes)
  bool max_nodes_from_recipe = false;   // max_nodes is the recipe's (job_max_nodes)
  // How the degrees count GPUs (workload/parallelism.h): "megatron" or "paper".
  std::string convention = "megatron";
  workload::PipelineSplit split;
  int micro_batch = 8;
  int global_batch = 128;
  int seq = 4096;
  std::string schedule = "1f1b";
  // Communication overlapped with compute (workload/training.h, docs/workload.md, "Overlap").
  workload::OverlapSpec overlap;
  // The model whose recipe supplied the fields the file left out ("" when none did).
  std::string recipe_of;
  // The mFabric paper's own job for its model (study::paper_models), for the outputs' wording.
  bool papers_job = false;
  // Routing: a recorded trace file, or the synthetic generator with these parameters.
  std::string routing_trace;
  workload::SyntheticRouting synthetic;
  // Not a YAML field: the micro-batches a pipeline of the job this one's micro-batches begin
  // (sim::with_micro_batches), whose synthetic routing they take (workload::synthetic_trace_for);
  // 0: its own.
  int routing_of_micro_batches = 0;
};

inline constexpr double kDefaultCompletionBatching = 0.02;
// The fast solver's completion batching (simulation.solver: fast).
inline constexpr double kFastCompletionBatching = 0.1;
// The training jobs "auto" runs as coflows (docs/shortcuts.md, "Coflows"): at least this many
// estimated tasks, above the paper's evaluation (its largest job, DeepSeek-R1 on 1,024 GPUs,
// builds 0.76 million), whose results stay the exact solver's; the scale study's 4,096-server
// points (25 million) and the recipes' DeepSeek-V3 on 2,048 GPUs (11 million) take them.
inline constexpr std::int64_t kCoflowsFromTasks = 4'000'000;
// Paths a sprayed transfer takes by default (`routing: spray`): the spines of a 16-spine leaf-spine
// fabric, and a sample of larger ones' paths.
inline constexpr int kDefaultSprayPaths = 16;

struct Experiment {
  std::string source;  // the file it came from, for messages
  std::uint64_t seed = 1;
  fabric::ClusterSpec cluster;
  std::string gpu = "h800";
  Spec fabric{"fat-tree", {}};
  std::optional<TrainingJob> model;
  std::optional<MicroBenchmark> micro;
  std::string chakra;  // a Chakra trace prefix
  workload::ControlDeps chakra_control_deps = workload::ControlDeps::Relaxed;
  std::string chakra_comm_groups;  // ASTRA-sim communicator-group file (docs/chakra.md), optional
  std::string connection_matrix;   // an htsim connection matrix (docs/formats.md)
  std::string backend = "flow";
  // Flow backend: completion batching, a fraction of a transfer's age (net/flow/flow_backend.h,
  // docs/network.md, "Completion batching"); 0 = the exact max-min evolution. The default keeps
  // all-to-all finish times within about 0.05% of exact at a fraction of the cost.
  double completion_batching = kDefaultCompletionBatching;
  // Packet backend: transport, packets, queues (net/packet/packet_options.h, docs/network.md,
  // "Packet backend"). Its RED draws take the experiment's seed.
  net::PacketBackendOptions packet;
  // Both backends: `ecmp` (per-flow ECMP, spray_paths 1) or `spray` (packet spraying over up to
  // spray_paths equal-cost paths; docs/network.md, "Spraying").
  std::string routing = "ecmp";
  int spray_paths = 1;
  int iterations = 1;
  collective::AlgorithmChoice algorithms;
  // Jobs whose estimated memory is above this are refused before they are built
  // (workload::check_job_size).
  Bytes max_memory = Bytes(workload::kDefaultMaxJobMemory);
  // A training job whose GPU memory estimate (workload/gpu_memory.h) is above the GPU's HBM is
  // refused unless this is set (simulation.ignore_gpu_memory, --ignore-gpu-memory).
  bool ignore_gpu_memory = false;
  // Steady-state extrapolation of the pipeline (simulation.extrapolate; sim/steady_state.h,
  // docs/shortcuts.md): true simulates fewer micro-batches per pipeline and
  // extrapolates the rest wherever the schedule allows, false always runs them all; unset (the
  // default) extrapolates where the simulated micro-batches are at most half of the job's.
  std::optional<bool> extrapolate;
  // The flow backend's rate solver (simulation.solver; docs/shortcuts.md): "exact" recomputes as
  // completion_batching says, "fast" batches large all-to-alls' completions over
  // kFastCompletionBatching of a transfer's age, "coflow" moves each collective step as one
  // coflow, "auto" (the default) is coflow for large training jobs (kCoflowsFromTasks), else
  // exact.
  std::string solver = "auto";
  // Parts of the fabric that fail, and when (config/failures.h, docs/reliability.md).
  std::vector<Failure> failures;
  // How fast compute and collectives really are (workload/calibration.h, docs/calibration.md);
  // a file that names none gets workload::default_calibration(gpu) (this struct's own default,
  // for experiments built in code, is the roofline);
  // its replay path is already relative to the working directory.
  workload::Calibration calibration;
};

// Training iterations of one run: 1 to kMaxIterations, from the file or the command line alike.
inline constexpr int kMaxIterations = workload::kMaxIterations;
// Sets e.iterations; mfabric::Error naming `field` outside 1..kMaxIterations.
void set_iterations(Experiment& e, int iterations, const std::string& field);

// Sets e.completion_batching; mfabric::Error naming `field` outside 0..net::kMaxCompletionBatching.
void set_completion_batching(Experiment& e, double fraction, const std::string& field);

// What a layer above config/ checks of the built fabric while an experiment is read: the
// simulator checks its fabric controller's settings (sim/load_experiment.h). An mfabric::Error it
// throws is reported as the experiment's.
using FabricCheck = std::function<void(const fabric::Topology&)>;

// Reads an experiment file (read_experiment_file) or its text. Throws mfabric::Error(path, field,
// expectation) on unreadable files, YAML errors, unknown keys, missing or invalid values, a
// fabric that cannot be built, failures it does not have, packet settings it cannot take, and
// whatever `check` refuses of the built fabric.
// `max_memory`, when given (simulate --max-memory), replaces simulation.max_memory before the
// size checks of loading (the topology and network estimates) are made.
Experiment read_experiment_file(const std::string& path,
                                std::optional<Bytes> max_memory = std::nullopt,
                                const FabricCheck& check = {});
Experiment read_experiment(const std::string& yaml_text, const std::string& source,
                           std::optional<Bytes> max_memory = std::nullopt,
                           const FabricCheck& check = {});

// The name of the calibration an experiment's text runs under (its `calibration:`, else its
// GPU's default), without building anything else: what a journal keyed by the text must know of
// the defaults it leaves to mfabric. mfabric::Error on text read_experiment would refuse there.
std::string experiment_calibration_name(const std::string& yaml_text, const std::string& source);

// The network of a simulation (topology, routes, the backend's channels and link statistics)
// takes about six times the topology's estimate (measured on the flow backend at 8192 servers of
// 8 GPUs and NICs and at 1024 of 64: 6.2x and 6.3x); eight bounds it.
inline constexpr double kNetworkBytesPerTopologyByte = 8;
// What job it is, in a line for the outputs: its degrees, batch and what differs from the
// defaults (schedule, precision, recomputation, dispatcher), after "the paper's job: " for the
// paper's own (papers_job) or "its recipe's job: " where a recipe supplied it, else followed by
// its convention: "TP 2, PP 8, EP 8, ETP 1, micro-batch 1 x 4096 tokens, global batch 256,
// megatron convention".
std::string job_text(const TrainingJob& w);

// The node limit a job's tokens run under (TrainingSpec::max_nodes_per_token): the file's as given
// (refused when the EP group spans fewer nodes), the recipe's capped at the nodes the EP group
// spans (a recipe's limit of 4 nodes on a job with a one-node EP group is no limit).
int job_max_nodes(const TrainingJob& w, const workload::ParallelismSpec& p, int gpus_per_server);

// The job's settings beyond its degrees and batch, onto a spec whose parallelism is resolved:
// schedule, precision, the distributed optimizer, dispatcher, recomputation, node limit
// (job_max_nodes) and overlap (DualPipe turns the EP overlap on). The one place both experiment
// files and `mfabric workload` set them; mfabric::Error naming the field ("schedule",
// "precision", "dispatcher", "recompute") for an unknown value.
void apply_job_settings(const TrainingJob& w, workload::TrainingSpec& spec);

// Throws mfabric::Error naming simulation.max_memory when the network of e's cluster is estimated
// above e.max_memory; read_experiment calls it before the fabric is built.
void check_network_size(const Experiment& e);

// The model's recipe (its default job, workload/model.h) fills the job fields its source left
// out (`given(field)`: whether it set the workload field of that name, as in an experiment file):
// its parallelism (degrees but DP, which the cluster gives; pipeline split; schedule) when none of
// tp, pp, vp, ep, etp, cp, dp, pipeline, schedule is given, and each of micro_batch,
// global_batch, seq, precision, distributed_optimizer not given; without a routing given, the
// recipe's routing balance. Not under a given paper convention (the paper's jobs count GPUs
// their own way) or a convention other than the recipe's, nor for a model without a recipe (or a
// model file that does not load: building the job says why). Also its recompute, dispatcher and
// node limit (job_max_nodes). Returns the recipe when its parallelism was taken.
std::optional<workload::Recipe> apply_recipe(TrainingJob& job,
                                             const std::function<bool(const char*)>& given);

// The job's degrees as a ParallelismSpec (dp left at 1: resolve_parallelism sets it).
workload::ParallelismSpec job_parallelism(const TrainingJob& job);

// Servers one EP group of a training job spans on `cluster` (EP x TP GPUs in whole servers, at
// most the cluster): the region of a fabric whose regions hold one EP group each.
int ep_group_servers(const TrainingJob& job, const fabric::ClusterSpec& cluster);
// That of the experiment's training job; 0 without one.
int ep_group_servers(const Experiment& e);
// mFabric's regions sized to the job: an mfabric fabric that names no region gets one region
// per EP group (ep_group_servers), when that divides the servers, as compare has always done;
// true when it set one. Called by read_experiment, and again by a command that replaces the
// fabric (simulate --fabric).
bool fit_regions_to_job(Experiment& e);
// When the experiment's mFabric regions hold several EP groups each: one sentence saying so
// ("region=8 holds 2 EP groups of 4 servers: ...") and the region that fits; nullopt when they
// match, or there is no mFabric or no training job (a region smaller than an EP group is
// refused when the job is built).
std::optional<std::string> region_mismatch(const Experiment& e);

// With the packet backend, its settings against the built fabric: the timers and rates against
// its network links (net::check_packet_options) and a micro-benchmark's transfers against the
// packets a flow may have. read_experiment calls it; simulate() again when the fabric was
// replaced after loading (simulate --fabric).
void check_packet_limits(const Experiment& e, const fabric::Topology& topology);

}  // namespace mfabric::config
