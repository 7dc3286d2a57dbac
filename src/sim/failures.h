// Failures of an experiment (docs/reliability.md, "Failures"): the parts of the fabric that fail
// and when, checked against the fabric and the job, and the spares that take the ranks of
// failed GPUs and servers.
//
//   failures:
//     - {kind: nic, server: 3, index: 0, at: start}   # NIC 0 of server 3, before training
//     - {kind: ocs-port, server: 5, index: 2, at: 2s} # OCS port of the server's 3rd OCS NIC
//     - {kind: gpu, server: 9, index: 4}              # `at` defaults to start
//     - {kind: server, server: 12}
//
// A NIC or OCS port fails at any time, `start` or a time into the run: its circuits go, its
// transfers move to what is up, the region controller plans without it from then on. A GPU or a
// server fails at `start` only: a GPU that dies mid-run stops the job, which resumes from its
// last checkpoint with a spare in the failed part's place; a run with the failure at `start`
// simulates that state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"

namespace YAML {
class Node;
}

namespace mfabric::sim {

enum class FailureKind { Nic, OcsPort, Gpu, Server };
const char* to_string(FailureKind k);

struct Failure {
  FailureKind kind = FailureKind::Nic;
  int server = 0;
  // The NIC (0 to NICs per server - 1), the OCS port (0 to alpha - 1: the server's OCS NICs in
  // order) or the GPU (0 to GPUs per server - 1) within the server; unused for a server.
  int index = 0;
  std::optional<Time> at;  // empty: at the start, before training

  Time time() const { return at.value_or(Time::zero()); }
};

// Reads the experiment's `failures:` list. Throws mfabric::Error(source, "failures[k].field", ...)
// on an unknown kind, a missing or negative server or index, an index given for a server, or a
// time that is not `start` or a time with a unit, and on a list longer than the parts of
// `cluster` that can fail (before any entry is read).
std::vector<Failure> parse_failures(const YAML::Node& node, const std::string& source,
                                    const fabric::ClusterSpec& cluster);

// Checks the failures against the built fabric: servers, NICs, GPUs and OCS ports that exist (an
// OCS port only on a fabric with an OCS; no patch-panel NIC), each part failing once (not also
// through its server or GPU), GPU and server failures at start. Throws
// mfabric::Error(source, "failures[k]...", ...).
void check_failures(const std::vector<Failure>& failures, const fabric::Topology& topology,
                    const std::string& source);

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
SparePlacement place_spares(const std::vector<Failure>& failures, const fabric::Topology& topology,
                            int job_gpus, const std::string& source);

// The NICs a failure takes out of use: a NIC itself; an OCS port's NIC; a GPU's NICs (a NIC is
// reached only over its GPU's PCIe link); every NIC of a server.
std::vector<fabric::NodeId> failed_nics(const Failure& f, const fabric::Topology& topology);

}  // namespace mfabric::sim
