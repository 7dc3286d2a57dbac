#include "workload/chakra_units.h"

#include <fmt/format.h>

#include <utility>

namespace mfabric::workload::chakra {

std::optional<CollectiveKind> collective_kind(std::int64_t comm_type) {
  switch (comm_type) {
    case pb::ALL_REDUCE:
      return CollectiveKind::AllReduce;
    // Rooted collectives map to the symmetric one whose busiest member moves about the same
    // bytes: a ring reduce sends ~S per member like a reduce-scatter's (n-1)/n x S, a gather's
    // root receives (n-1)/n of the gathered buffer like every all-gather member, and a scatter's
    // root sends what a broadcast root does (within (n-1)/n).
    case pb::REDUCE:
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::ReduceScatter;
    case pb::ALL_GATHER:
    case pb::GATHER:
      return CollectiveKind::AllGather;
    case pb::SCATTER:
    case pb::BROADCAST:
      return CollectiveKind::Broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveKind::AllToAll;
    case pb::BARRIER:
      return CollectiveKind::Barrier;
    default:
      return std::nullopt;
  }
}

std::string comm_type_name(std::int64_t comm_type) {
  if (comm_type >= std::numeric_limits<int>::min() &&
      comm_type <= std::numeric_limits<int>::max() &&
      pb::CollectiveCommType_IsValid(static_cast<int>(comm_type))) {
    return pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(comm_type));
  }
  return fmt::format("{}", comm_type);
}

UnitTable::UnitTable(std::vector<RankTrace> ranks) : ranks_(std::move(ranks)) {
  unit_of_.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    unit_of_[r].assign(ranks_[r].nodes.size(), kNone);
  }
}

std::string UnitTable::where(NodeRef ref) const {
  return fmt::format("{} {}", file(ref.rank), describe(node(ref)));
}

std::size_t UnitTable::assign(Unit unit) {
  const std::size_t id = units_.size();
  for (NodeRef ref : unit.nodes)
    unit_of_[static_cast<std::size_t>(ref.rank)][ref.index] = id;
  units_.push_back(std::move(unit));
  return id;
}

std::string UnitTable::describe_unit(const Unit& unit) const {
  switch (unit.task.kind) {
    case TaskKind::Collective:
      return fmt::format("{} {} ({})", unit.heading,
                         comm_type_name(*node(unit.nodes.front()).comm_type),
                         where_list(unit.nodes));
    case TaskKind::P2P:
      return fmt::format("transfer of send {} to receive {}", where(unit.nodes.front()),
                         where(*unit.receive));
    case TaskKind::Compute:
      break;
  }
  const RawNode& n = node(unit.nodes.front());
  if (n.type == pb::COMM_RECV_NODE) {
    return fmt::format("receive {} (waits for its transfer)", where(unit.nodes.front()));
  }
  return where(unit.nodes.front());
}

std::string UnitTable::where_list(const std::vector<NodeRef>& refs) const {
  std::string text;
  for (NodeRef ref : refs) {
    if (!text.empty()) text += ", ";
    text += where(ref);
  }
  return text;
}

}  // namespace mfabric::workload::chakra
