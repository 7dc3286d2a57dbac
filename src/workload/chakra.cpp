// Chakra trace reader: rank files -> per-rank nodes (chakra_nodes.cpp, chakra_order.cpp) ->
// process groups (chakra_groups.cpp) -> matched communication -> one TaskGraph (this file).
// Conventions (matching, send/receive, sizes, membership, traffic classes) are documented in
// docs/chakra.md; this file follows that document.
#include "workload/chakra.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload/chakra_groups.h"
#include "workload/chakra_trace.h"

namespace mfabric::workload {
namespace {

using chakra::describe;
using chakra::RankTrace;
using chakra::RawNode;
namespace pb = ChakraProtoMsg;

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

class Converter {
 public:
  Converter(std::vector<RankTrace> ranks, const ChakraOptions& options,
            chakra::ProcessGroups groups)
      : ranks_(std::move(ranks)),
        options_(options),
        groups_(std::move(groups)),
        compute_seconds_(ranks_.size(), 0.0) {
    unit_of_.resize(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      unit_of_[r].assign(ranks_[r].nodes.size(), kNone);
    }
  }

  TaskGraph run() {
    match_collectives();
    match_p2p();
    add_single_nodes();
    return build();
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  const RawNode& node(NodeRef ref) const {
    return ranks_[static_cast<std::size_t>(ref.rank)].nodes[ref.index];
  }
  const std::string& file(int rank) const { return ranks_[static_cast<std::size_t>(rank)].file; }
  std::string where(NodeRef ref) const {
    return fmt::format("{} {}", file(ref.rank), describe(node(ref)));
  }
  int rank_count() const { return static_cast<int>(ranks_.size()); }

  std::size_t assign(Unit unit) {
    const std::size_t id = units_.size();
    for (NodeRef ref : unit.nodes)
      unit_of_[static_cast<std::size_t>(ref.rank)][ref.index] = id;
    units_.push_back(std::move(unit));
    return id;
  }

  void match_collectives() {
    // pg_name -> rank -> that rank's collective nodes of the group, in topological order.
    std::map<std::string, std::map<int, std::vector<std::size_t>>> sequences;
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
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

    for (const auto& [pg, per_rank] : sequences) {
      std::vector<std::int32_t> members;
      if (const chakra::GroupDeclaration* declared = groups_.find(pg)) {
        members = declared->members;
        for (const auto& [r, seq] : per_rank) {
          if (std::find(members.begin(), members.end(), r) == members.end()) {
            const NodeRef ref{r, seq.front()};
            throw Error(
                file(r), describe(node(ref)),
                fmt::format("rank {} is not a member of process group '{}' ({} in {} "
                            "lists [{}])",
                            r, pg, declared->field, declared->source, fmt::join(members, ", ")));
          }
        }
      } else if (pg.empty()) {
        for (int r = 0; r < rank_count(); ++r)
          members.push_back(r);
      } else {
        for (const auto& entry : per_rank)
          members.push_back(entry.first);  // sorted: std::map
      }
      match_group(pg, members, per_rank);
    }
  }

  void match_group(const std::string& pg, const std::vector<std::int32_t>& members,
                   const std::map<int, std::vector<std::size_t>>& per_rank) {
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
      const RawNode& first = node(ref);
      const std::string heading = fmt::format("collective #{} of {}", k, group_text);

      Unit unit;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const int r = members[m];
        if (seqs[m]->size() <= k) {
          throw Error(
              file(ref.rank), describe(first),
              fmt::format("{} ({}) has no counterpart on member rank {} ({}), which has "
                          "only {} collective(s) on that group",
                          heading, comm_type_name(*first.comm_type), r, file(r), seqs[m]->size()));
        }
        const NodeRef here{r, (*seqs[m])[k]};
        const RawNode& n = node(here);
        if (*n.comm_type != *first.comm_type) {
          throw Error(file(r), describe(n),
                      fmt::format("{}: comm_type {} here but {} on rank {} ({})", heading,
                                  comm_type_name(*n.comm_type), comm_type_name(*first.comm_type),
                                  ref.rank, where(ref)));
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

      const bool all_to_all_v = kind == CollectiveKind::AllToAll && uneven(unit, heading);
      if (all_to_all_v) {
        ByteMatrix matrix(static_cast<int>(members.size()));
        std::int64_t moved = 0;
        for (std::size_t m = 0; m < members.size(); ++m) {
          const auto& row = *node(unit.nodes[m]).send_bytes;
          for (std::size_t j = 0; j < members.size(); ++j) {
            matrix.at(static_cast<int>(m), static_cast<int>(j)) = row[j];
            // Entries are at most 2^50 each, so the sum is checked before it could overflow.
            if (j != m) moved += row[j];
            if (moved > kMaxChakraCommBytes) {
              throw Error(file(unit.nodes[m].rank), describe(node(unit.nodes[m])),
                          fmt::format("{}: the all-to-all-v moves more than {} bytes (2^50), "
                                      "more than one collective may move",
                                      heading, kMaxChakraCommBytes));
            }
          }
        }
        task.bytes = Bytes(moved);
        unit.matrix = std::move(matrix);
      } else if (kind != CollectiveKind::Barrier) {
        for (NodeRef here : unit.nodes) {
          const RawNode& n = node(here);
          if (!n.comm_size) {
            throw Error(file(here.rank), describe(n), fmt::format("{}: no comm_size", heading));
          }
          if (*n.comm_size != *first.comm_size) {
            throw Error(
                file(here.rank), describe(n),
                fmt::format("{}: comm_size {} here but {} on rank {} ({})", heading, *n.comm_size,
                            first.comm_size ? *first.comm_size : 0, ref.rank, where(ref)));
          }
        }
        task.bytes = Bytes(
            collective_bytes(*first.comm_type, *first.comm_size, members.size(), ref, heading));
      }
      assign(std::move(unit));
    }
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
      throw Error(file(ref.rank), describe(node(ref)),
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
      (node(ref).send_bytes ? with : without) = &ref;
    }
    if (with == nullptr) return false;
    if (without != nullptr) {
      throw Error(file(without->rank), describe(node(*without)),
                  fmt::format("{}: send_bytes_per_rank is missing here but given on rank {} ({}); "
                              "an all-to-all-v needs it on every member",
                              heading, with->rank, where(*with)));
    }
    for (const NodeRef& ref : unit.nodes) {
      const auto& row = *node(ref).send_bytes;
      if (row.size() != unit.members.size()) {
        throw Error(
            file(ref.rank), describe(node(ref)),
            fmt::format("{}: send_bytes_per_rank has {} entries, expected {} (one per "
                        "member, in group order [{}])",
                        heading, row.size(), unit.members.size(), fmt::join(unit.members, ", ")));
      }
    }
    return true;
  }

  // Built only for the deadlock message: traces have millions of units.
  std::string describe_unit(const Unit& unit) const {
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

  std::string where_list(const std::vector<NodeRef>& refs) const {
    std::string text;
    for (NodeRef ref : refs) {
      if (!text.empty()) text += ", ";
      text += where(ref);
    }
    return text;
  }

  // Validates a send's comm_dst or a recv's comm_src and returns it.
  int peer_of(NodeRef ref, const char* attr) const {
    const RawNode& n = node(ref);
    const auto peer = std::string_view(attr) == "comm_dst" ? n.comm_dst : n.comm_src;
    if (!peer) {
      throw Error(
          file(ref.rank), describe(n),
          fmt::format("{} without {}", n.type == pb::COMM_SEND_NODE ? "send" : "receive", attr));
    }
    if (*peer < 0 || *peer >= rank_count()) {
      throw Error(file(ref.rank), describe(n),
                  fmt::format("{} {} is not a rank of this trace (ranks 0..{})", attr, *peer,
                              rank_count() - 1));
    }
    if (*peer == ref.rank) {
      throw Error(file(ref.rank), describe(n), fmt::format("{} is this node's own rank", attr));
    }
    return static_cast<int>(*peer);
  }

  // Eager (MPI / ASTRA-sim) semantics: a send's transfer starts when the send's own dependencies
  // are met and completes the send; the matching receive completes when its own dependencies
  // are met and the data has arrived. So the send becomes a P2P task on the send's dependencies,
  // and the receive a zero-time task on the receiver after its dependencies and that transfer.
  void match_p2p() {
    // (sender, receiver, tag) -> nodes in each rank's topological order.
    using Key = std::tuple<int, int, std::int64_t>;
    std::map<Key, std::vector<NodeRef>> sends;
    std::map<Key, std::vector<NodeRef>> recvs;
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
      for (std::size_t i : rank.order) {
        const RawNode& n = rank.nodes[i];
        const NodeRef ref{r, i};
        if (n.type == pb::COMM_SEND_NODE) {
          if (!n.comm_size) throw Error(rank.file, describe(n), "send without comm_size");
          sends[{r, peer_of(ref, "comm_dst"), n.comm_tag.value_or(0)}].push_back(ref);
        } else if (n.type == pb::COMM_RECV_NODE) {
          recvs[{peer_of(ref, "comm_src"), r, n.comm_tag.value_or(0)}].push_back(ref);
        }
      }
    }
    static const std::vector<NodeRef> kEmpty;
    auto unmatched = [&](const std::vector<NodeRef>& mine, const std::vector<NodeRef>& theirs,
                         const Key& key, bool sending) {
      const auto& [src, dst, tag] = key;
      const NodeRef ref = mine[theirs.size()];
      const int other = sending ? dst : src;
      throw Error(
          file(ref.rank), describe(node(ref)),
          fmt::format("{0} #{1} {2} rank {3} with tag {4} has no matching {5} on rank {3} ({6}), "
                      "which has only {1} {5}(s) {7} rank {8} with that tag",
                      sending ? "send" : "receive", theirs.size(), sending ? "to" : "from", other,
                      tag, sending ? "receive" : "send", file(other), sending ? "from" : "to",
                      ref.rank));
    };
    for (const auto& [key, list] : sends) {
      auto it = recvs.find(key);
      const auto& other = it == recvs.end() ? kEmpty : it->second;
      if (list.size() > other.size()) unmatched(list, other, key, true);
    }
    for (const auto& [key, list] : recvs) {
      auto it = sends.find(key);
      const auto& other = it == sends.end() ? kEmpty : it->second;
      if (list.size() > other.size()) unmatched(list, other, key, false);
    }
    for (const auto& [key, list] : sends) {
      const auto& receives = recvs.at(key);
      for (std::size_t k = 0; k < list.size(); ++k) {
        const RawNode& send = node(list[k]);
        const RawNode& recv = node(receives[k]);
        if (recv.comm_size && *recv.comm_size != *send.comm_size) {
          throw Error(file(receives[k].rank), describe(recv),
                      fmt::format("receive of comm_size {} matches a send of comm_size {} ({})",
                                  *recv.comm_size, *send.comm_size, where(list[k])));
        }
        Unit transfer;
        transfer.nodes = {list[k]};
        transfer.receive = receives[k];
        transfer.task.kind = TaskKind::P2P;
        transfer.task.gpu = list[k].rank;
        transfer.task.peer = receives[k].rank;
        transfer.task.bytes = Bytes(*send.comm_size);
        transfer.task.traffic = groups_.traffic(send.pg_name.empty() ? recv.pg_name : send.pg_name);
        const std::size_t transfer_unit = assign(std::move(transfer));

        Unit arrival;
        arrival.nodes = {receives[k]};
        arrival.task.kind = TaskKind::Compute;
        arrival.task.gpu = receives[k].rank;
        arrival.extra_deps = {transfer_unit};
        assign(std::move(arrival));
      }
    }
  }

  Time compute_time(const RawNode& n, int rank) {
    // Host-side ops overlap the GPU kernels they launch; charging their time to the GPU would
    // serialise host time onto it (see docs/chakra.md).
    if (n.is_cpu_op) return Time::zero();
    const std::string& file_name = file(rank);
    double seconds = 0;
    if (n.duration_micros > 0) {
      seconds = static_cast<double>(n.duration_micros) * 1e-6;
    } else if (n.num_ops && options_.gpu.peak_bf16_flops > 0) {
      seconds = *n.num_ops / (options_.gpu.peak_bf16_flops * options_.efficiency);
    }
    double& total = compute_seconds_[static_cast<std::size_t>(rank)];
    total += seconds;
    if (!(total <= kMaxChakraRankComputeSeconds)) {
      throw Error(file_name, describe(n),
                  fmt::format("the rank's compute time reaches {:.6g} s here, more than the "
                              "{:.0f} s (about 11.6 days) mfabric simulates per rank",
                              total, kMaxChakraRankComputeSeconds));
    }
    if (n.duration_micros > 0) {
      return Time::microseconds(static_cast<std::int64_t>(n.duration_micros));
    }
    return Time::from_seconds(seconds);
  }

  void add_single_nodes() {
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
      for (std::size_t i : rank.order) {
        if (unit_of_[static_cast<std::size_t>(r)][i] != kNone) continue;
        const RawNode& n = rank.nodes[i];
        Unit unit;
        unit.nodes = {NodeRef{r, i}};
        unit.task.kind = TaskKind::Compute;
        unit.task.gpu = r;
        // Non-compute nodes (metadata, memory) stay as zero-time tasks so that dependencies
        // through them still hold.
        if (n.type == pb::COMP_NODE) unit.task.duration = compute_time(n, r);
        assign(std::move(unit));
      }
    }
  }

  TaskGraph build() {
    const std::size_t count = units_.size();
    // Ready units are taken in (rank, topological position) order of their first node, so the
    // task ids read like the trace: deterministic and close to program order.
    std::vector<std::size_t> priority(count, kNone);
    std::size_t next = 0;
    for (int r = 0; r < rank_count(); ++r) {
      for (std::size_t i : ranks_[static_cast<std::size_t>(r)].order) {
        const std::size_t u = unit_of_[static_cast<std::size_t>(r)][i];
        if (priority[u] == kNone) priority[u] = next++;
      }
    }
    std::vector<std::vector<std::size_t>> deps(count);
    std::vector<std::vector<std::size_t>> children(count);
    std::vector<std::size_t> missing(count, 0);
    for (std::size_t u = 0; u < count; ++u) {
      auto& d = deps[u];
      d = units_[u].extra_deps;
      for (NodeRef ref : units_[u].nodes) {
        const RankTrace& rank = ranks_[static_cast<std::size_t>(ref.rank)];
        const auto [begin, end] = rank.deps_of(ref.index);
        for (const std::size_t* dep = begin; dep != end; ++dep) {
          d.push_back(unit_of_[static_cast<std::size_t>(ref.rank)][*dep]);
        }
      }
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      missing[u] = d.size();
      for (std::size_t p : d)
        children[p].push_back(u);
    }

    TaskGraph graph(rank_count());
    std::vector<TaskId> task_of(count, -1);
    using Ready = std::pair<std::size_t, std::size_t>;  // (priority, unit)
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    for (std::size_t u = 0; u < count; ++u) {
      if (missing[u] == 0) ready.emplace(priority[u], u);
    }
    std::vector<TaskId> task_deps;
    std::size_t added = 0;
    while (!ready.empty()) {
      const std::size_t u = ready.top().second;
      ready.pop();
      Unit& unit = units_[u];
      Task task = unit.task;
      if (task.kind == TaskKind::Collective) {
        task.group = graph.add_group(unit.members);
        if (unit.matrix) task.matrix = graph.add_matrix(std::move(*unit.matrix));
      }
      task_deps.clear();
      for (std::size_t p : deps[u])
        task_deps.push_back(task_of[p]);
      task_of[u] = graph.add(task, task_deps);
      ++added;
      for (std::size_t c : children[u]) {
        if (--missing[c] == 0) ready.emplace(priority[c], c);
      }
    }
    if (added != count) {
      std::vector<char> stuck(count, 1);
      for (std::size_t u = 0; u < count; ++u)
        stuck[u] = task_of[u] >= 0 ? 0 : 1;
      const auto cycle = chakra::find_cycle(stuck, [&](std::size_t v) { return deps[v]; });
      std::string text;
      for (std::size_t v : cycle)
        text += describe_unit(units_[v]) + " -> ";
      text += "the first again";
      const NodeRef first = units_[cycle.front()].nodes.front();
      throw Error(file(first.rank), describe(node(first)),
                  fmt::format("deadlock: the ranks order their communication inconsistently, so "
                              "the matched tasks form a cycle: {}",
                              text));
    }
    return graph;
  }

  std::vector<RankTrace> ranks_;
  const ChakraOptions& options_;
  chakra::ProcessGroups groups_;
  std::vector<double> compute_seconds_;  // per rank, for the cap
  std::vector<Unit> units_;
  std::vector<std::vector<std::size_t>> unit_of_;  // rank -> node index -> unit
};

void check_options(const ChakraOptions& options) {
  if (!(options.efficiency > 0 && options.efficiency <= 1)) {
    throw Error("", "efficiency",
                fmt::format("expected a fraction of peak in (0, 1], got {}", options.efficiency));
  }
  if (!(options.gpu.peak_bf16_flops >= 0) || !std::isfinite(options.gpu.peak_bf16_flops)) {
    throw Error("", "gpu", "peak FLOP/s must be a non-negative number");
  }
  const ChakraLimits& l = options.limits;
  const auto positive = [](std::int64_t v, const char* field, std::int64_t max) {
    if (v < 1 || v > max) {
      throw Error("", field, fmt::format("expected a value in 1..{}, got {}", max, v));
    }
  };
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  positive(l.max_rank_bytes, "limits.max_rank_bytes", kInt64Max);
  // protobuf counts a message's bytes in an int.
  positive(l.max_message_bytes, "limits.max_message_bytes", std::numeric_limits<int>::max() - 16);
  positive(l.max_memory, "limits.max_memory", kInt64Max);
}

// Members of named groups, in precedence order: mfabric's GlobalMetadata attributes, the
// communicator-group file, PyTorch's metadata nodes.
chakra::ProcessGroups process_groups(const std::vector<RankTrace>& ranks,
                                     const ChakraOptions& options) {
  using Kind = chakra::GroupDeclaration::Kind;
  const int n = static_cast<int>(ranks.size());
  chakra::ProcessGroups groups;
  for (const RankTrace& rank : ranks) {
    for (const auto& [pg, members] : rank.pg_ranks) {
      groups.declare(pg, {Kind::GlobalMetadata, members, rank.file,
                          "GlobalMetadata: attribute 'pg_ranks:" + pg + "'"});
    }
  }
  if (!options.comm_groups.empty()) {
    for (auto& [key, members] : chakra::read_comm_groups(options.comm_groups, n)) {
      groups.declare(key, {Kind::CommGroupFile, std::move(members), options.comm_groups,
                           fmt::format("group \"{}\"", key)});
    }
  }
  std::vector<std::int32_t> everyone(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    everyone[static_cast<std::size_t>(r)] = r;
  for (const RankTrace& rank : ranks) {
    for (const chakra::PytorchGroup& g : rank.pytorch_groups) {
      groups.declare(g.pg_name,
                     {Kind::PytorchMetadata, g.ranks.empty() ? everyone : g.ranks, rank.file,
                      fmt::format("{}: process group \"{}\"", g.node, g.pg_name)});
      groups.describe(g.pg_name, g.pg_desc);
    }
  }
  return groups;
}

}  // namespace

const char* to_string(ControlDeps c) {
  switch (c) {
    case ControlDeps::Strict:
      return "strict";
    case ControlDeps::Relaxed:
      return "relaxed";
    case ControlDeps::Ignore:
      return "ignore";
  }
  return "?";
}

ControlDeps parse_control_deps(std::string_view text) {
  for (ControlDeps c : {ControlDeps::Strict, ControlDeps::Relaxed, ControlDeps::Ignore}) {
    if (text == to_string(c)) return c;
  }
  throw Error("", "",
              fmt::format("unknown control-dependency policy '{}' (known: strict, relaxed, "
                          "ignore)",
                          text));
}

TaskGraph read_chakra(const std::string& prefix, const ChakraOptions& options,
                      ChakraSummary* summary) {
  check_options(options);
  // Ranks are counted before any file is read: lists in the files (group members, bytes per
  // rank) are checked against the number of ranks as they are decoded.
  int rank_count = 0;
  for (;; ++rank_count) {
    std::error_code ec;
    if (!std::filesystem::exists(fmt::format("{}.{}.et", prefix, rank_count), ec)) break;
  }
  if (rank_count == 0) {
    throw Error(fmt::format("{}.0.et", prefix), "",
                fmt::format("no Chakra trace: file not found (expected {0}.0.et, {0}.1.et, ... "
                            "one per rank)",
                            prefix));
  }
  ChakraSummary counts;
  counts.ranks = rank_count;
  std::vector<RankTrace> ranks;
  ranks.reserve(static_cast<std::size_t>(rank_count));
  chakra::MemoryEstimate memory{0, options.limits.max_memory};
  for (int r = 0; r < rank_count; ++r) {
    ranks.push_back(
        chakra::read_rank(fmt::format("{}.{}.et", prefix, r), rank_count, options, counts, memory));
  }
  chakra::ProcessGroups groups = process_groups(ranks, options);
  TaskGraph graph = Converter(std::move(ranks), options, std::move(groups)).run();
  if (summary != nullptr) *summary = counts;
  return graph;
}

}  // namespace mfabric::workload
