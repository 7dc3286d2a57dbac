// Lowering: a collective over a group of GPUs becomes a Plan, steps of transfers; step k+1 starts
// when every transfer of step k has finished. A new algorithm is a new Lowering registered by
// name; the engine does not change.
//
//   ring          all-reduce / reduce-scatter / all-gather as a pipelined ring: one step of n
//                 transfers i -> i+1, each carrying the bytes the ring moves over that edge
//                 (2(n-1)/n x S for all-reduce, (n-1)/n x S otherwise), latency_hops = the ring's
//                 step count. This is NCCL's chunked ring, whose steps overlap: time
//                 2(n-1)/n x S/B + 2(n-1) x latency for an all-reduce on a non-blocking fabric.
//   hierarchical  all-reduce: reduce-scatter inside each server (NVSwitch), ring all-reduce of
//                 the 1/g shards across servers, all-gather inside each server (3 steps).
//   direct        all-to-all(v): one step, one transfer per ordered pair with bytes > 0.
//   p2p           one transfer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collective/transfer.h"
#include "fabric/topology.h"
#include "workload/task_graph.h"

namespace mfabric::collective {

struct Step {
  std::vector<Transfer> transfers;
};

struct Plan {
  std::vector<Step> steps;
};

// What to lower: the kind, the member GPUs (as topology GPU nodes, in group order), the bytes
// (workload::Task conventions) and, for all-to-all-v, the matrix.
struct CollectiveRequest {
  workload::CollectiveKind kind = workload::CollectiveKind::AllReduce;
  std::vector<fabric::NodeId> members;
  Bytes bytes;
  const workload::ByteMatrix* matrix = nullptr;
  std::uint64_t flow_hash = 0;  // seeds the transfers' ECMP hashes
};

class Lowering {
 public:
  virtual ~Lowering() = default;
  virtual const char* name() const = 0;
  // Throws mfabric::Error when the algorithm does not apply (e.g. ring for all-to-all).
  virtual Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const = 0;
};

// "ring", "hierarchical", "direct"; throws mfabric::Error listing the known ones.
std::unique_ptr<Lowering> make_lowering(const std::string& name);
std::vector<std::string> lowering_names();

// Which algorithm each collective kind uses unless the experiment says otherwise: all-reduce
// hierarchical when members span several servers with several GPUs each, else ring; all-to-all
// direct; reduce-scatter / all-gather / broadcast ring.
struct AlgorithmChoice {
  std::string all_reduce = "auto";
  std::string all_to_all = "direct";
  std::string all_gather = "ring";
  std::string reduce_scatter = "ring";
};

class Lowerer {
 public:
  explicit Lowerer(const AlgorithmChoice& choice = {});
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const;

 private:
  AlgorithmChoice choice_;
  std::unique_ptr<Lowering> ring_, hierarchical_, direct_;
};

}  // namespace mfabric::collective
