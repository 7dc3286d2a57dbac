// The traffic of a whole training job between servers, the input of the TopoOpt planner
// (docs/topoopt.md). TopoOpt plans one topology for the whole job before training, so the demand
// is a sum over every task of the TaskGraph, split the way TopoOpt splits it:
//
//  - ring groups: all-reduce, reduce-scatter, all-gather and broadcast groups that span two or
//    more servers. TopoOpt builds ring permutations for them (their traffic is "mutable": a ring
//    may visit the servers in any order). GPU groups that land on the same set of servers are one
//    ring group (e.g. the 8 DP groups of local GPU index 0..7 of the same servers).
//  - pair demand: everything else that crosses servers (all-to-all, with or without a matrix,
//    and point-to-point transfers) as a symmetric server x server matrix.
//
// Traffic between GPUs of one server (tensor parallelism, the server-local share of an
// all-to-all) never reaches the network and is dropped. Barriers carry no bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.h"
#include "workload/task_graph.h"

namespace mfabric::control {

// One ring group at server level.
struct RingDemand {
  std::vector<int> servers;  // ascending, distinct, at least 2
  // Sum of the collectives' buffer sizes S (the task's `bytes`, task_graph.h conventions).
  Bytes buffer_bytes;
  // Bytes a ring over `servers` sends between servers, summed over the tasks: 2(m-1) S for an
  // all-reduce over m servers (m-1 steps of reduce-scatter and m-1 of all-gather, S/m per server
  // and step), (m-1) S for reduce-scatter, all-gather and broadcast. This is what TopoOpt weighs
  // against the pair demand when it splits the degree.
  Bytes network_bytes;
  int tasks = 0;
};

// Symmetric server x server byte counts: at(a, b) == at(b, a) is the bytes a sends to b plus the
// bytes b sends to a (the traffic a full-duplex link between them would carry). The diagonal is 0.
class PairDemand {
 public:
  PairDemand() = default;
  explicit PairDemand(int servers);

  int servers() const { return servers_; }
  Bytes at(int a, int b) const;
  // Adds bytes (>= 0) to the pair; a != b. mfabric::Error on negative bytes, a bad index or a
  // sum beyond 64 bits.
  void add(int a, int b, Bytes bytes);
  // Sets the pair's bytes (>= 0); for hand-built demands.
  void set(int a, int b, Bytes bytes);
  // Sum over unordered pairs.
  Bytes total() const;
  // Servers b with at(a, b) > 0, ascending.
  std::vector<int> partners(int a) const;

 private:
  std::size_t index(int a, int b) const;

  int servers_ = 0;
  std::vector<std::int64_t> upper_;  // strict upper triangle, row-major
};

struct JobDemand {
  int servers = 0;
  std::vector<RingDemand> rings;  // ordered by their server lists (lexicographic)
  PairDemand pairs;               // pairs.servers() == servers

  Bytes ring_network_bytes() const;
};

// Sums the TaskGraph's communication into server demand; GPU g is on server g / gpus_per_server
// and the job spans ceil(graph.gpus() / gpus_per_server) servers. Uniform all-to-alls count
// ceil(bytes / n) per member pair, the way collective/direct.cpp lowers them. mfabric::Error for
// gpus_per_server < 1, a GPU outside the graph, a negative all-to-all-v entry or sums beyond
// 64 bits.
JobDemand job_demand(const workload::TaskGraph& graph, int gpus_per_server);

}  // namespace mfabric::control
