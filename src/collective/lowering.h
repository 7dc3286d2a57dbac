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
//                 all-to-all(v): each pair's bytes split over every rail both servers can send
//                 on: gather onto GPU c over the NVSwitch, GPU c to GPU c across, scatter
//                 (3 steps; DeepEP's and PXN's two-level all-to-all, spread over all NICs).
//   pxn           all-to-all(v), NCCL's PXN: bytes for another server move over the NVSwitch to
//                 the sender's GPU on the destination's rail, which sends them (2 steps).
//   direct        all-to-all(v): one step, one transfer per ordered pair with bytes > 0; the
//                 router picks each transfer's path (a circuit if the servers have one, else
//                 the EPS), what the mFabric authors' simulator did.
//   proxy         all-to-all(v) on a fabric with optical circuits, mFabric's 5-step algorithm:
//                 gather to the proxy GPUs whose NICs reach each destination server (a circuit,
//                 else an EPS NIC) over the NVSwitch, exchange between proxies (with the
//                 server-local share alongside), scatter to the destination GPUs (3 steps).
//   p2p           one transfer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collective/circuit_view.h"
#include "core/registry.h"
#include "fabric/topology.h"
#include "net/transfer.h"
#include "workload/task_graph.h"

namespace mfabric::collective {

struct Step {
  std::vector<net::Transfer> transfers;
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
  // The circuits up now (not owned); null when the fabric has none.
  const CircuitView* circuits = nullptr;
  // A lowering for this collective only, by name (a fabric controller's choice), overriding the
  // Lowerer's; null = the Lowerer's choice.
  const char* algorithm = nullptr;
};

class Lowering {
 public:
  virtual ~Lowering() = default;
  virtual const char* name() const = 0;
  // Whether an experiment may choose it for collectives of `kind` (AlgorithmChoice).
  virtual bool choosable_for(workload::CollectiveKind kind) const = 0;
  // Throws mfabric::Error when the algorithm does not apply (e.g. ring for all-to-all).
  virtual Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const = 0;
};

// The lowerings by name, one line each in collective/lowerings.cpp: ring, hierarchical, direct,
// proxy, pxn. A new algorithm is a Lowering in its own file plus a line there.
using LoweringRegistry = Registry<std::function<std::unique_ptr<Lowering>()>>;
LoweringRegistry& lowerings();

// The lowering named `name`; throws mfabric::Error listing the known ones.
std::unique_ptr<Lowering> make_lowering(const std::string& name);
std::vector<std::string> lowering_names();

// Which algorithm each collective kind uses unless the experiment says otherwise: all-reduce
// hierarchical when members span several servers with several GPUs each, else ring; all-to-all
// proxy on a fabric with OCS regions (mFabric), pxn on rail-optimized (NCCL's default there),
// else direct; reduce-scatter / all-gather / broadcast ring.
struct AlgorithmChoice {
  std::string all_reduce = "auto";
  std::string all_to_all = "auto";
  std::string all_gather = "ring";
  std::string reduce_scatter = "ring";
};

// "auto" and the lowerings an experiment may choose for collectives of `kind`, in registry
// order: what AlgorithmChoice accepts for it.
std::vector<std::string> algorithm_choices(workload::CollectiveKind kind);

// Lowers each collective by the algorithm chosen for its kind (collective/lowerer.cpp); one
// instance of every registered lowering, made once.
class Lowerer {
 public:
  // mfabric::Error naming the field (all_to_all, ...) for a choice its collective cannot take.
  explicit Lowerer(const AlgorithmChoice& choice = {});
  Plan lower(const CollectiveRequest& request, const fabric::Topology& topology) const;

 private:
  const Lowering& by_name(std::string_view name) const;

  AlgorithmChoice choice_;
  std::vector<std::pair<std::string, std::unique_ptr<Lowering>>> lowerings_;
  const Lowering* ring_;
  const Lowering* hierarchical_;
  const Lowering* proxy_;
};

}  // namespace mfabric::collective
