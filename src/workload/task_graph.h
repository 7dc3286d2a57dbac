// TaskGraph: what a training job asks of the machine, independent of any fabric. A task is
// compute on one GPU, a collective over a group of GPUs, or a point-to-point transfer; it may
// start when all its dependencies have finished. The engine (sim/) runs it on a fabric.
//
// Byte conventions:
//  - AllReduce, ReduceScatter, AllGather, Broadcast: `bytes` is the full buffer S each member
//    holds (NCCL's count x element size; for all-gather the output buffer).
//  - AllToAll without a matrix: every member sends bytes / n to each member (itself included).
//  - AllToAll with a matrix (all-to-all-v): matrix(i, j) bytes go from member i to member j of
//    the group, members in group order; `bytes` is then the sum of the off-diagonal entries.
//  - P2P: `bytes` from `gpu` to `peer`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/units.h"

namespace mfabric::workload {

using TaskId = std::int32_t;

// The largest collective buffer or transfer a task may carry (1 PiB): inputs above it are
// errors, which keeps every byte count a lowering derives (2(n-1)/n x S, ...) inside 64 bits.
inline constexpr std::int64_t kMaxTransferBytes = std::int64_t{1} << 50;

enum class TaskKind : std::uint8_t { Compute, Collective, P2P };
enum class CollectiveKind : std::uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  Barrier
};
// Which parallelism a communication task serves (None for compute). Other: communication of no
// recognised parallelism (imported traces whose process groups say none, docs/chakra.md). CP:
// context parallelism's exchange of keys and values (after Other, so that the others keep their
// values).
enum class Traffic : std::uint8_t { None, TP, EP, DP, PP, Other, CP };
enum class Phase : std::uint8_t { Forward, Backward, Update, Other };
// What a task does, for labels, reports and replayed durations.
enum class Op : std::uint8_t {
  Attention,
  Router,
  Experts,
  SharedExperts,
  DenseFfn,
  LmHead,
  TpAllReduce,
  Dispatch,  // first all-to-all of a MoE layer (after the gate in forward)
  Combine,   // second all-to-all (after the experts in forward)
  PpActivation,
  PpGradient,
  DenseGradAllReduce,
  ExpertGradAllReduce,
  Optimizer,        // the optimizer step after the gradient all-reduces (when calibrated)
  Generic,          // imported (Chakra) tasks
  Permute,          // the MoE token permutation: before the dispatch (gather into expert order) and
                    // after the combine (the weighted scatter back), half of it each
  ParamAllGather,   // the distributed optimizer's all-gather of updated parameters over DP
  CpKeyValues,      // context parallelism: the all-gather of a layer's keys and values over CP
  CpKeyValueGrads,  // and the reduce-scatter of their gradients in the backward
};

const char* to_string(TaskKind k);
const char* to_string(CollectiveKind k);
const char* to_string(Traffic t);
const char* to_string(Phase p);
const char* to_string(Op o);

// Bytes from member i to member j of a group, row-major n x n.
struct ByteMatrix {
  int n = 0;
  std::vector<std::int64_t> bytes;

  ByteMatrix() = default;
  explicit ByteMatrix(int size) : n(size), bytes(static_cast<std::size_t>(size) * size, 0) {}
  std::int64_t& at(int i, int j) { return bytes[static_cast<std::size_t>(i) * n + j]; }
  std::int64_t at(int i, int j) const { return bytes[static_cast<std::size_t>(i) * n + j]; }
  std::int64_t off_diagonal_sum() const;
  ByteMatrix transposed() const;
};

// 24 bytes: a production job on 131,072 GPUs has about a hundred million of them, so the enums
// are bit-fields and fields that no task uses together share storage: a compute task's GPU or
// a P2P's sender with a collective's group, a P2P's receiver with a collective's matrix, a
// compute task's duration with a communication task's bytes. Read them through the functions,
// which give a kind's unused field its empty value (-1, zero); set them after `kind`.
struct Task {
  TaskKind kind : 2 = TaskKind::Compute;
  Op op : 5 = Op::Generic;
  Phase phase : 2 = Phase::Other;
  Traffic traffic : 3 = Traffic::None;
  CollectiveKind collective : 3 = CollectiveKind::AllReduce;
  std::int16_t layer = -1;
  std::int16_t micro_batch = -1;
  std::int16_t iteration = 0;
  std::int32_t gpu_or_group = -1;
  std::int32_t peer_or_matrix = -1;
  std::int64_t amount = 0;  // picoseconds (compute) or bytes (communication)

  // Compute: the GPU; P2P: the sender.
  std::int32_t gpu() const { return kind == TaskKind::Collective ? -1 : gpu_or_group; }
  // P2P: the receiver.
  std::int32_t peer() const { return kind == TaskKind::P2P ? peer_or_matrix : -1; }
  // Collective: index into TaskGraph::groups().
  std::int32_t group() const { return kind == TaskKind::Collective ? gpu_or_group : -1; }
  // Collective AllToAll-v: index into TaskGraph::matrices() (-1: an even all-to-all).
  std::int32_t matrix() const { return kind == TaskKind::Collective ? peer_or_matrix : -1; }
  // A compute task's duration (zero for communication).
  Time duration() const {
    return kind == TaskKind::Compute ? Time::picoseconds(amount) : Time::zero();
  }
  // A communication task's bytes (zero for compute; the conventions above).
  Bytes bytes() const { return kind == TaskKind::Compute ? Bytes{} : Bytes(amount); }

  // Each throws std::logic_error for a kind that has no such field.
  void set_gpu(std::int32_t g);
  void set_peer(std::int32_t g);
  void set_group(std::int32_t g);
  void set_matrix(std::int32_t m);
  void set_duration(Time d);
  void set_bytes(Bytes b);
};
static_assert(static_cast<int>(TaskKind::P2P) < 4 && static_cast<int>(Op::CpKeyValueGrads) < 32 &&
                  static_cast<int>(Phase::Other) < 4 && static_cast<int>(Traffic::CP) < 8 &&
                  static_cast<int>(CollectiveKind::Barrier) < 8,
              "an enum outgrew its bit-field in Task: widen the field");
static_assert(sizeof(Task) == 24, "Task grew: the scale targets count 24 bytes a task");

class TaskGraph {
 public:
  explicit TaskGraph(int gpus = 0) : gpus_(gpus) {}

  // Adds a task after `deps` (which must already exist). Returns its id.
  TaskId add(const Task& task, std::span<const TaskId> deps = {});
  TaskId add(const Task& task, std::initializer_list<TaskId> deps) {
    return add(task, std::span<const TaskId>(deps.begin(), deps.size()));
  }
  // Registers a group of GPUs (ordered; the order defines member indices). Identical groups
  // share one index.
  std::int32_t add_group(std::vector<std::int32_t> gpus);
  std::int32_t add_matrix(ByteMatrix m);

  // GPU ids run from 0 to gpus() - 1; job_gpus() of them run the job (all, unless
  // move_gpus() put some ranks on spares, when ids of idle GPUs lie in between).
  int gpus() const { return gpus_; }
  int job_gpus() const { return job_gpus_ < 0 ? gpus_ : job_gpus_; }
  // Moves every task and group member on GPU g to gpu_of[g] (a spare GPU taking a failed one's
  // rank): gpu_of has one entry per GPU, its values distinct and below `gpus`, which becomes
  // gpus(). Throws std::invalid_argument otherwise.
  void move_gpus(std::span<const std::int32_t> gpu_of, int gpus);
  std::size_t size() const { return tasks_.size(); }
  const Task& task(TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  const std::vector<Task>& tasks() const { return tasks_; }
  std::span<const TaskId> deps(TaskId id) const;
  const std::vector<std::int32_t>& group(std::int32_t g) const {
    return groups_[static_cast<std::size_t>(g)];
  }
  const std::vector<std::vector<std::int32_t>>& groups() const { return groups_; }
  const ByteMatrix& matrix(std::int32_t m) const { return matrices_[static_cast<std::size_t>(m)]; }
  std::size_t matrix_count() const { return matrices_.size(); }

  // "it0 L3 mb2 fwd dispatch (EP all-to-all, 8 GPUs)".
  std::string label(TaskId id) const;

  // A communication task that may not start before time t of the run even when its
  // dependencies are done (traffic files with start times: connection_matrix.h). Stored only
  // for the tasks that have one; every other task has Time::zero(). Throws std::logic_error for
  // a task that does not exist, a compute task or a negative time.
  void set_not_before(TaskId id, Time t);
  Time not_before(TaskId id) const {
    const auto i = static_cast<std::size_t>(id);
    return i < not_before_.size() ? not_before_[i] : Time::zero();
  }
  bool has_start_times() const { return !not_before_.empty(); }

  // The id a task had in the file it was read from (a connection matrix's flow id), for outputs
  // that users join with the other tool's (collectives.csv). Stored only for the tasks that have
  // one; the others have -1. Throws std::logic_error for a task that does not exist or a
  // negative id.
  void set_source_id(TaskId id, std::int64_t source_id);
  std::int64_t source_id(TaskId id) const {
    const auto i = static_cast<std::size_t>(id);
    return i < source_id_.size() ? source_id_[i] : -1;
  }

 private:
  int gpus_;
  int job_gpus_ = -1;  // -1: gpus_
  std::vector<Task> tasks_;
  // Dependencies in compressed rows: deps of task i are dep_ids_[dep_begin_[i], dep_begin_[i+1]).
  std::vector<TaskId> dep_ids_;
  std::vector<Time> not_before_;         // empty, or up to the last task that has a start time
  std::vector<std::int64_t> source_id_;  // the same, for source ids (-1: none)
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<std::vector<std::int32_t>> groups_;
  std::vector<ByteMatrix> matrices_;
  std::map<std::vector<std::int32_t>, std::int32_t> group_index_;
};

// Per GPU (0 to gpus() - 1), the durations of its compute tasks summed over the graph (every
// iteration): the time its compute stream is busy, since the engine runs a GPU's compute tasks
// one at a time, each for its duration. A sum beyond Time::max() is Time::max().
std::vector<Time> compute_time_per_gpu(const TaskGraph& graph);

}  // namespace mfabric::workload
