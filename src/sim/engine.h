// The engine: runs a TaskGraph on a Topology with a network Backend.
//
// Each GPU has a compute stream that runs its compute tasks one at a time, in the order they
// become ready (the task graph already orders them by schedule); communication runs alongside.
// A collective task is lowered (collective/) to steps of transfers that the backend simulates;
// a p2p task is one transfer. A task starts when all its dependencies have finished.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "collective/lowering.h"
#include "core/units.h"
#include "fabric/topology.h"
#include "net/backend.h"
#include "net/backend_stats.h"
#include "net/link_timeline.h"
#include "net/packet_report.h"
#include "workload/calibration.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

// One network transfer of a run (with EngineOptions::record_flows): for per-flow completion
// times.
struct FlowRecord {
  workload::TaskId task = -1;
  fabric::NodeId src = fabric::kNoNode;  // GPU nodes of the topology
  fabric::NodeId dst = fabric::kNoNode;
  Bytes size;
  Time start;
  Time end;
};

struct TaskSpan {
  workload::TaskId task = -1;
  Time start;
  Time end;
};

// What a fabric controller may do during a run (the engine implements it).
class EngineContext {
 public:
  virtual ~EngineContext() = default;
  virtual Time now() const = 0;
  // Runs `fn` at time `t` (>= now()), after the network and compute events of that time.
  // Events at one time run in the order they were scheduled.
  virtual void at(Time t, std::function<void()> fn) = 0;
  // Lowers and starts a collective the controller held (see FabricController), at now().
  virtual void release(workload::TaskId collective) = 0;
  // The network the run uses, for changing links (circuits) through its interface.
  virtual net::Backend& backend() = 0;
};

// A controller that changes the fabric during a run (an optical control plane). It sees each
// collective when it becomes ready, before it is lowered, and may hold it (for example until
// its circuits are up), and it sees compute tasks start (to reconfigure under compute). All
// hooks run inside the engine's event loop; they may schedule events and release collectives.
class FabricController {
 public:
  virtual ~FabricController() = default;
  // Called once before the first event.
  virtual void attach(EngineContext& /*engine*/) {}
  // A collective is ready. Return true to hold it: it starts when the controller calls
  // EngineContext::release(id). Its time (for reports and exposed communication) starts now.
  // The controller may set request.algorithm to lower this collective its own way.
  virtual bool hold_collective(workload::TaskId /*id*/,
                               collective::CollectiveRequest& /*request*/) {
    return false;
  }
  virtual void compute_started(workload::TaskId /*id*/) {}
  virtual void collective_finished(workload::TaskId /*id*/) {}
};

struct FlowHashShift {
  workload::TaskId from = 0;
  std::int64_t by = 0;
  bool operator==(const FlowHashShift&) const = default;
};

struct EngineOptions {
  collective::AlgorithmChoice algorithms;
  // Optional; not owned. Null: a fabric that never changes.
  FabricController* controller = nullptr;
  // Keep the start and end of every task (for trace.json and collectives.csv).
  bool record_spans = true;
  // Keep every transfer's start and end (flows.csv): one record per transfer, so opt-in.
  bool record_flows = false;
  // Count every channel's bytes per time bin (net/link_timeline.h; utilisation.csv).
  std::optional<net::TimelineOptions> timeline;
  // Called now and then with (tasks finished, tasks in total), for progress displays.
  std::function<void(std::size_t, std::size_t)> progress;
  // Optional; not owned: per topology node, nonzero once the GPU or NIC has failed (the
  // lowerings never pick it as a proxy). Null: nothing fails.
  const std::vector<std::uint8_t>* failed_nodes = nullptr;
  // Keep what steady-state extrapolation measures (RunResult::micro_batch_figures).
  bool micro_batch_figures = false;
  // Mixed into every transfer's flow hash, which makes its ECMP choices (docs/network.md,
  // "ECMP and the seed"): flow_salt_of_seed(experiment seed).
  std::uint64_t flow_salt = 0;
  // Task ids as the flow hash sees them: from each shift's `from` on (sorted, the last that
  // applies), a task hashes as id + by. Empty: as its id. An extrapolated run gives its
  // cool-down and the gradient reduction after it the ids they have in the full job
  // (sim::full_job_flow_hash_shifts), so that their ECMP routes are the full run's.
  std::vector<FlowHashShift> flow_hash_shifts;
  // What each collective kind costs beyond its bytes at line rate (workload/calibration.h): its
  // transfers carry size / efficiency, and each step starts `overhead` after it is due.
  workload::CollectiveCosts collective_costs;
  // Each step of a collective with two transfers or more goes to the backend as one coflow
  // (net::Backend::start_coflow; simulation.solver: coflow, docs/shortcuts.md, "Coflows").
  bool coflows = false;
};

// The flow-hash salt of an experiment seed: different seeds sample different ECMP outcomes.
// Seed 1 (the default) gives 0, the routes of versions before the seed counted, so that figures
// published with seed 1 stay reproducible.
std::uint64_t flow_salt_of_seed(std::uint64_t seed);

// Traffic classes in RunResult arrays: TP, EP, DP, PP, Other (communication of no recognised
// parallelism, such as an imported trace's collectives without a group name), then CP (added
// last, so that the others keep their places).
inline constexpr std::array<workload::Traffic, 6> kTrafficClasses{
    workload::Traffic::TP, workload::Traffic::EP,    workload::Traffic::DP,
    workload::Traffic::PP, workload::Traffic::Other, workload::Traffic::CP};

// What a run keeps for steady-state extrapolation (sim/steady_state.h), with
// EngineOptions::micro_batch_figures.
struct MicroBatchFigures {
  // Per iteration and GPU of the first pipeline stage (those that run layer 0's backward), per
  // micro-batch: when the GPU ended its last backward compute task of that micro-batch;
  // Time::max() if it has none.
  struct BackwardEnds {
    int iteration = 0;
    int gpu = 0;
    std::vector<Time> ends;
  };
  std::vector<BackwardEnds> first_stage_backward_ends;
  // The share of comm_time and comm_time_profiled (per class, per iteration) that tasks of a
  // micro-batch make; the rest (gradient reduction, parameter gathering) does not grow with the
  // micro-batches.
  std::array<Time, kTrafficClasses.size()> comm_time{};
  std::array<Time, kTrafficClasses.size()> comm_time_profiled{};
  // The same for exposed_comm: the waits of compute tasks of a micro-batch.
  Time exposed_comm;
  // Of the bytes the network was given (RunResult::transfers.bytes_sent), those of transfers of
  // a micro-batch's tasks.
  std::int64_t bytes_sent = 0;
};

// A run that simulated fewer micro-batches than its job has and extrapolated the rest
// (sim/steady_state.h): what it measured and what it estimates.
struct Extrapolation {
  int micro_batches = 0;  // per pipeline and iteration, the job's
  int simulated = 0;      // per pipeline and iteration, the run's
  int unit = 1;           // micro-batches per repeat of the schedule's steady phase
  Time period;            // the steady phase's time per micro-batch
  int samples = 0;        // steady repeats measured (each `unit` micro-batches)
  double spread = 0;      // (slowest - fastest repeat) / mean repeat
  double bound = 0;       // estimated error of the iteration time (relative, 2 standard errors)
  int tries = 1;          // runs it took (more micro-batches when the bound was not held)
  // The bytes the job gives the network: the run's (RunResult::transfers.bytes_sent), with its
  // micro-batches' share multiplied by scale().
  std::int64_t bytes_sent = 0;
  // The first iteration's steady phase as measured: from the earliest chain's first steady end to
  // the latest chain's last (what happens in it happens again in the skipped micro-batches).
  Time steady_from;
  Time steady_to;
  // micro_batches / simulated: what the micro-batches' additive figures were multiplied by.
  double scale() const { return simulated > 0 ? double(micro_batches) / simulated : 1.0; }
};

struct RunResult {
  // Per iteration: from the first task of the iteration starting to its last task ending.
  std::vector<Time> iteration_times;
  Time makespan;
  // Mean over GPUs and iterations of the time a GPU's compute stream sat idle waiting for
  // communication: when the task it waited for depended last on a communication task, the idle
  // time up to that communication's own duration (pipeline bubbles before it are not counted);
  // plus, after a GPU's last compute task, the time communication it takes part in is still
  // running (so a run of nothing but communication is all exposed).
  Time exposed_comm;
  // Per traffic class (kTrafficClasses order), per iteration: sum over its tasks of duration x
  // member GPUs / all GPUs, the average time a GPU spends in that kind of communication.
  std::array<Time, kTrafficClasses.size()> comm_time{};
  // The same as a profiler on each GPU counts it: from the GPU's own input being ready to the
  // task's end, including the wait for the slowest member (what a per-GPU timeline shows as time
  // in the collective's kernel; the paper's measured all-to-all shares are of this kind).
  std::array<Time, kTrafficClasses.size()> comm_time_profiled{};
  // Collectives a controller held for a while (waiting for circuits) on the critical path of the
  // run, walked back from the task that ended last through the dependency each task waited for
  // last, and their summed waits: the holds that lengthened the run, over all iterations.
  std::int64_t critical_holds = 0;
  Time critical_held_time;
  std::vector<TaskSpan> spans;    // when record_spans
  std::vector<FlowRecord> flows;  // when record_flows, in start order
  std::vector<net::ChannelStats> channels;
  // Bytes per topology channel per time bin, when EngineOptions::timeline asked for them.
  std::optional<net::LinkTimeline> timeline;
  // Transfers and bytes the network started and delivered (equal in a run that completes).
  net::TransferTotals transfers;
  // Packet backend only: per directed channel (as `channels`) and over the run.
  std::vector<net::PortStats> ports;
  std::optional<net::PacketStats> packets;
  std::int64_t events = 0;  // engine events + network events
  double wall_time_s = 0;
  // With EngineOptions::micro_batch_figures.
  std::optional<MicroBatchFigures> micro_batch_figures;
  // Set when the run was extrapolated: the iteration times, makespan, communication and exposed
  // times are then the job's estimates (sim/steady_state.h); the network's counters (events,
  // transfers, channels, timeline, spans) stay those of the simulated micro-batches.
  std::optional<Extrapolation> extrapolation;

  Time mean_iteration_time() const;
};

// Throws mfabric::Error if the graph needs more GPUs than the topology has.
RunResult run(const workload::TaskGraph& graph, const fabric::Topology& topology,
              net::Backend& backend, const EngineOptions& options = {});

// Topology GPU node of graph GPU g: server g / gpus_per_server, local index g % gpus_per_server.
fabric::NodeId gpu_node(const fabric::Topology& topology, int g);

}  // namespace mfabric::sim
