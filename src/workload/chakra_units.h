// The Chakra reader's conversion of every rank's nodes into one TaskGraph, in passes over one
// table: each node becomes part of a unit, a task-to-be (a matched collective, the transfer of a
// matched send, or a single node: compute, the receive, anything else), by matching
// (chakra_collectives.cpp, chakra_p2p.cpp, the rest in chakra.cpp), and the units become tasks
// in dependency order (chakra_assembly.cpp). Conventions are in docs/chakra.md. Internal to the
// reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "workload/chakra_groups.h"
#include "workload/chakra_trace.h"
#include "workload/task_graph.h"

namespace mfabric::workload::chakra {

// A node of the trace: node `index` of rank `rank`.
struct NodeRef {
  int rank;
  std::size_t index;
};

// One task-to-be: a single node (compute, receive, other), a matched collective, or the transfer
// of a matched send.
struct Unit {
  std::vector<NodeRef> nodes;
  Task task;
  std::vector<std::int32_t> members;    // collective
  std::optional<ByteMatrix> matrix;     // all-to-all-v
  std::string heading;                  // collective: "collective #k of process group 'pg'"
  std::optional<NodeRef> receive;       // transfer: the matching receive node
  std::vector<std::size_t> extra_deps;  // units waited for besides the nodes' dependencies
};

// The collective kind of a Chakra comm_type, if it is one mfabric knows.
std::optional<CollectiveKind> collective_kind(std::int64_t comm_type);
// "ALL_REDUCE", or the number of a comm_type the schema does not name.
std::string comm_type_name(std::int64_t comm_type);

class UnitTable {
 public:
  // No unit (yet).
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  explicit UnitTable(std::vector<RankTrace> ranks);

  int rank_count() const { return static_cast<int>(ranks_.size()); }
  const RankTrace& rank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  const RawNode& node(NodeRef ref) const {
    return ranks_[static_cast<std::size_t>(ref.rank)].nodes[ref.index];
  }
  const std::string& file(int rank) const { return ranks_[static_cast<std::size_t>(rank)].file; }
  // "<file> node 12 (name)", for messages.
  std::string where(NodeRef ref) const;
  // The unit node `index` of rank `rank` belongs to, or kNone.
  std::size_t unit_of(int rank, std::size_t index) const {
    return unit_of_[static_cast<std::size_t>(rank)][index];
  }

  // Adds `unit`, its nodes now belonging to it; returns its index.
  std::size_t assign(Unit unit);
  std::vector<Unit>& units() { return units_; }
  // The unit in words, for the deadlock message (built only then: traces have millions).
  std::string describe_unit(const Unit& unit) const;

 private:
  std::string where_list(const std::vector<NodeRef>& refs) const;

  std::vector<RankTrace> ranks_;
  std::vector<Unit> units_;
  std::vector<std::vector<std::size_t>> unit_of_;  // rank -> node index -> unit
};

// The passes, in order. Each throws mfabric::Error naming the file and node of what does not
// match.
// Collectives of each process group, matched by their position in each member's order; `groups`
// gives each group's members and traffic class.
void match_collectives(UnitTable& table, const ProcessGroups& groups);
// Sends and receives, matched by (sender, receiver, tag) in each rank's order.
void match_p2p(UnitTable& table, const ProcessGroups& groups);
// The units as tasks, in dependency order (ready units in rank and topological order of their
// first node); an error naming a cycle when the ranks order their communication inconsistently.
TaskGraph assemble_graph(UnitTable& table);

}  // namespace mfabric::workload::chakra
