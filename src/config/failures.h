// Failures of an experiment (docs/reliability.md, "Failures"): the parts of the fabric that fail
// and when, read from the experiment file and checked against the fabric and the job. The spares
// that take the ranks of failed GPUs and servers are the simulator's (sim/spares.h).
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

namespace mfabric::config {

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

// The NICs a failure takes out of use: a NIC itself; an OCS port's NIC; a GPU's NICs (a NIC is
// reached only over its GPU's PCIe link); every NIC of a server.
std::vector<fabric::NodeId> failed_nics(const Failure& f, const fabric::Topology& topology);

// "failures[k]": the field of the k-th failure, for messages.
std::string failure_field(std::size_t k);

// The local index of a server's first OCS NIC on a fabric with an OCS (its last
// circuit_degree() NICs): OCS port i of a server is its NIC first_ocs_nic + i.
int first_ocs_nic(const fabric::Topology& t);

}  // namespace mfabric::config
