// Collective matching of the Chakra reader (chakra_units.h; docs/chakra.md, "Collectives"): the
// k-th collective of a process group on every member rank is one collective task, and they must
// agree on comm_type and size.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "workload/chakra_units.h"

namespace mfabric::workload::chakra {
namespace {

class CollectiveMatcher {
 public:
  CollectiveMatcher(UnitTable& table, const ProcessGroups& groups)
      : table_(table), groups_(groups) {}

  void run() {
    for (const auto& [pg, per_rank] : sequences()) {
      match_group(pg, members_of(pg, per_rank), per_rank);
    }
  }

 private:
  using PerRank = std::map<int, std::vector<std::size_t>>;

  // pg_name -> rank -> that rank's collective nodes of the group, in topological order.
  std::map<std::string, PerRank> sequences() const {
    std::map<std::string, PerRank> sequences;
    for (int r = 0; r < table_.rank_count(); ++r) {
      const RankTrace& rank = table_.rank(r);
      for (std::size_t i : rank.order) {
        const RawNode& n = rank.nodes[i];
        const bool all_to_all =
            n.type == pb::COMM_COLL_NODE && n.comm_type.value_or(-1) == pb::ALL_TO_ALL;
        if (n.send_bytes && !all_to_all) {
          throw Error(rank.file, describe(n),
                      "send_bytes_per_rank is only meaningful on ALL_TO_ALL collectives");
        }
        if (n.type != pb::COMM_COLL_NODE) continue;
        if (!n.comm_type) throw Error(rank.file, describe(n), "collective without comm_type");
        if (!collective_kind(*n.comm_type)) {
          throw Error(rank.file, describe(n),
                      fmt::format("unknown comm_type {} (known: 0..9, see CollectiveCommType)",
                                  *n.comm_type));
        }
        sequences[n.pg_name][r].push_back(i);
      }
    }
    return sequences;
  }

  // The group's members: as declared, all ranks for the default group, else the ranks that use it.
  std::vector<std::int32_t> members_of(const std::string& pg, const PerRank& per_rank) const {
    std::vector<std::int32_t> members;
    if (const GroupDeclaration* declared = groups_.find(pg)) {
      members = declared->members;
      for (const auto& [r, seq] : per_rank) {
        if (std::find(members.begin(), members.end(), r) == members.end()) {
          const NodeRef ref{r, seq.front()};
          throw Error(
              table_.file(r), describe(table_.node(ref)),
              fmt::format("rank {} is not a member of process group '{}' ({} in {} "
                          "lists [{}])",
                          r, pg, declared->field, declared->source, fmt::join(members, ", ")));
        }
      }
    } else if (pg.empty()) {
      for (int r = 0; r < table_.rank_count(); ++r)
        members.push_back(r);
    } else {
      for (const auto& entry : per_rank)
        members.push_back(entry.first);  // sorted: std::map
    }
    return members;
  }

  void match_group(const std::string& pg, const std::vector<std::int32_t>& members,
                   const PerRank& per_rank) {
    static const std::vector<std::size_t> kEmpty;
    std::vector<const std::vector<std::size_t>*> seqs;
    std::size_t longest = 0;
    for (std::int32_t m : members) {
      auto it = per_rank.find(m);
      seqs.push_back(it == per_rank.end() ? &kEmpty : &it->second);
      longest = std::max(longest, seqs.back()->size());
    }
    const std::string group_text = pg.empty() ? std::string("the default process group (all ranks)")
                                              : fmt::format("process group '{}'", pg);

    const Traffic traffic = groups_.traffic(pg);

    for (std::size_t k = 0; k < longest; ++k) {
      // The first member that has a k-th collective is the reference the others must agree with.
      std::size_t ref_member = 0;
      while (seqs[ref_member]->size() <= k)
        ++ref_member;
      const NodeRef ref{members[ref_member], (*seqs[ref_member])[k]};
      const RawNode& first = table_.node(ref);
      const std::string heading = fmt::format("collective #{} of {}", k, group_text);

      Unit unit;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const int r = members[m];
        if (seqs[m]->size() <= k) {
          throw Error(table_.file(ref.rank), describe(first),
                      fmt::format("{} ({}) has no counterpart on member rank {} ({}), which has "
                                  "only {} collective(s) on that group",
                                  heading, comm_type_name(*first.comm_type), r, table_.file(r),
                                  seqs[m]->size()));
        }
        const NodeRef here{r, (*seqs[m])[k]};
        const RawNode& n = table_.node(here);
        if (*n.comm_type != *first.comm_type) {
          throw Error(table_.file(r), describe(n),
                      fmt::format("{}: comm_type {} here but {} on rank {} ({})", heading,
                                  comm_type_name(*n.comm_type), comm_type_name(*first.comm_type),
                                  ref.rank, table_.where(ref)));
        }
        unit.nodes.push_back(here);
      }

      const CollectiveKind kind = *collective_kind(*first.comm_type);
      Task& task = unit.task;
      task.kind = TaskKind::Collective;
      task.collective = kind;
      task.traffic = traffic;
      unit.members = members;
      unit.heading = heading;

      if (kind == CollectiveKind::AllToAll && uneven(unit, heading)) {
        set_matrix(unit, heading);
      } else if (kind != CollectiveKind::Barrier) {
        set_size(unit, ref, heading);
      }
      table_.assign(std::move(unit));
    }
  }

  // An all-to-all-v's bytes: its members' send_bytes_per_rank as a matrix.
  void set_matrix(Unit& unit, const std::string& heading) const {
    const std::size_t n = unit.members.size();
    ByteMatrix matrix(static_cast<int>(n));
    std::int64_t moved = 0;
    for (std::size_t m = 0; m < n; ++m) {
      const auto& row = *table_.node(unit.nodes[m]).send_bytes;
      for (std::size_t j = 0; j < n; ++j) {
        matrix.at(static_cast<int>(m), static_cast<int>(j)) = row[j];
        // Entries are at most 2^50 each, so the sum is checked before it could overflow.
        if (j != m) moved += row[j];
        if (moved > kMaxChakraCommBytes) {
          throw Error(table_.file(unit.nodes[m].rank), describe(table_.node(unit.nodes[m])),
                      fmt::format("{}: the all-to-all-v moves more than {} bytes (2^50), "
                                  "more than one collective may move",
                                  heading, kMaxChakraCommBytes));
        }
      }
    }
    unit.task.set_bytes(Bytes(moved));
    unit.matrix = std::move(matrix);
  }

  // Every other collective's bytes: one comm_size all members agree on (reference `ref`).
  void set_size(Unit& unit, NodeRef ref, const std::string& heading) const {
    const RawNode& first = table_.node(ref);
    for (NodeRef here : unit.nodes) {
      const RawNode& n = table_.node(here);
      if (!n.comm_size) {
        throw Error(table_.file(here.rank), describe(n), fmt::format("{}: no comm_size", heading));
      }
      if (*n.comm_size != *first.comm_size) {
        throw Error(
            table_.file(here.rank), describe(n),
            fmt::format("{}: comm_size {} here but {} on rank {} ({})", heading, *n.comm_size,
                        first.comm_size ? *first.comm_size : 0, ref.rank, table_.where(ref)));
      }
    }
    unit.task.set_bytes(Bytes(
        collective_bytes(*first.comm_type, *first.comm_size, unit.members.size(), ref, heading)));
  }

  // The TaskGraph's bytes (the full buffer each member holds, task_graph.h) from Chakra's
  // comm_size, as ASTRA-sim reads it: an all-gather's (and a gather's) comm_size is each
  // member's input, so the gathered buffer is n x comm_size; every other collective's is the
  // full buffer.
  std::int64_t collective_bytes(std::int64_t comm_type, std::int64_t comm_size, std::size_t n,
                                NodeRef ref, const std::string& heading) const {
    if (comm_type != pb::ALL_GATHER && comm_type != pb::GATHER) return comm_size;
    const auto members = static_cast<std::int64_t>(n);
    if (comm_size > kMaxChakraCommBytes / members) {
      throw Error(table_.file(ref.rank), describe(table_.node(ref)),
                  fmt::format("{}: {} members x comm_size {} is more than {} bytes (2^50), more "
                              "than one collective may move",
                              heading, members, comm_size, kMaxChakraCommBytes));
    }
    return comm_size * members;
  }

  // True if every member carries send_bytes_per_rank (all-to-all-v); false if none does.
  bool uneven(const Unit& unit, const std::string& heading) const {
    const NodeRef* with = nullptr;
    const NodeRef* without = nullptr;
    for (const NodeRef& ref : unit.nodes) {
      (table_.node(ref).send_bytes ? with : without) = &ref;
    }
    if (with == nullptr) return false;
    if (without != nullptr) {
      throw Error(table_.file(without->rank), describe(table_.node(*without)),
                  fmt::format("{}: send_bytes_per_rank is missing here but given on rank {} ({}); "
                              "an all-to-all-v needs it on every member",
                              heading, with->rank, table_.where(*with)));
    }
    for (const NodeRef& ref : unit.nodes) {
      const auto& row = *table_.node(ref).send_bytes;
      if (row.size() != unit.members.size()) {
        throw Error(
            table_.file(ref.rank), describe(table_.node(ref)),
            fmt::format("{}: send_bytes_per_rank has {} entries, expected {} (one per "
                        "member, in group order [{}])",
                        heading, row.size(), unit.members.size(), fmt::join(unit.members, ", ")));
      }
    }
    return true;
  }

  UnitTable& table_;
  const ProcessGroups& groups_;
};

}  // namespace

void match_collectives(UnitTable& table, const ProcessGroups& groups) {
  CollectiveMatcher(table, groups).run();
}

}  // namespace mfabric::workload::chakra
