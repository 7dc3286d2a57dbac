// Send/receive matching of the Chakra reader (chakra_units.h; docs/chakra.md, "Send and
// receive"): the k-th send from rank a to rank b with a tag matches the k-th receive on b from a
// with that tag.
#include <fmt/format.h>

#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "workload/chakra_units.h"

namespace mfabric::workload::chakra {
namespace {

// Validates a send's comm_dst or a recv's comm_src and returns it.
int peer_of(const UnitTable& table, NodeRef ref, const char* attr) {
  const RawNode& n = table.node(ref);
  const auto peer = std::string_view(attr) == "comm_dst" ? n.comm_dst : n.comm_src;
  const std::string& file = table.file(ref.rank);
  if (!peer) {
    throw Error(
        file, describe(n),
        fmt::format("{} without {}", n.type == pb::COMM_SEND_NODE ? "send" : "receive", attr));
  }
  if (*peer < 0 || *peer >= table.rank_count()) {
    throw Error(file, describe(n),
                fmt::format("{} {} is not a rank of this trace (ranks 0..{})", attr, *peer,
                            table.rank_count() - 1));
  }
  if (*peer == ref.rank) {
    throw Error(file, describe(n), fmt::format("{} is this node's own rank", attr));
  }
  return static_cast<int>(*peer);
}

// (sender, receiver, tag) -> nodes in each rank's topological order.
using Key = std::tuple<int, int, std::int64_t>;
using Matches = std::map<Key, std::vector<NodeRef>>;

// Throws for the first of `mine` (sends if `sending`, else receives) that `theirs` lacks.
void check_counterparts(const UnitTable& table, const Matches& mine, const Matches& theirs,
                        bool sending) {
  static const std::vector<NodeRef> kEmpty;
  for (const auto& [key, list] : mine) {
    auto it = theirs.find(key);
    const auto& other = it == theirs.end() ? kEmpty : it->second;
    if (list.size() <= other.size()) continue;
    const auto& [src, dst, tag] = key;
    const NodeRef ref = list[other.size()];
    const int peer = sending ? dst : src;
    throw Error(
        table.file(ref.rank), describe(table.node(ref)),
        fmt::format("{0} #{1} {2} rank {3} with tag {4} has no matching {5} on rank {3} ({6}), "
                    "which has only {1} {5}(s) {7} rank {8} with that tag",
                    sending ? "send" : "receive", other.size(), sending ? "to" : "from", peer, tag,
                    sending ? "receive" : "send", table.file(peer), sending ? "from" : "to",
                    ref.rank));
  }
}

}  // namespace

// Eager (MPI / ASTRA-sim) semantics: a send's transfer starts when the send's own dependencies
// are met and completes the send; the matching receive completes when its own dependencies are
// met and the data has arrived. So the send becomes a P2P task on the send's dependencies, and
// the receive a zero-time task on the receiver after its dependencies and that transfer.
void match_p2p(UnitTable& table, const ProcessGroups& groups) {
  Matches sends;
  Matches recvs;
  for (int r = 0; r < table.rank_count(); ++r) {
    const RankTrace& rank = table.rank(r);
    for (std::size_t i : rank.order) {
      const RawNode& n = rank.nodes[i];
      const NodeRef ref{r, i};
      if (n.type == pb::COMM_SEND_NODE) {
        if (!n.comm_size) throw Error(rank.file, describe(n), "send without comm_size");
        sends[{r, peer_of(table, ref, "comm_dst"), n.comm_tag.value_or(0)}].push_back(ref);
      } else if (n.type == pb::COMM_RECV_NODE) {
        recvs[{peer_of(table, ref, "comm_src"), r, n.comm_tag.value_or(0)}].push_back(ref);
      }
    }
  }
  check_counterparts(table, sends, recvs, true);
  check_counterparts(table, recvs, sends, false);
  for (const auto& [key, list] : sends) {
    const auto& receives = recvs.at(key);
    for (std::size_t k = 0; k < list.size(); ++k) {
      const RawNode& send = table.node(list[k]);
      const RawNode& recv = table.node(receives[k]);
      if (recv.comm_size && *recv.comm_size != *send.comm_size) {
        throw Error(table.file(receives[k].rank), describe(recv),
                    fmt::format("receive of comm_size {} matches a send of comm_size {} ({})",
                                *recv.comm_size, *send.comm_size, table.where(list[k])));
      }
      Unit transfer;
      transfer.nodes = {list[k]};
      transfer.receive = receives[k];
      transfer.task.kind = TaskKind::P2P;
      transfer.task.set_gpu(list[k].rank);
      transfer.task.set_peer(receives[k].rank);
      transfer.task.set_bytes(Bytes(*send.comm_size));
      transfer.task.traffic = groups.traffic(send.pg_name.empty() ? recv.pg_name : send.pg_name);
      const std::size_t transfer_unit = table.assign(std::move(transfer));

      Unit arrival;
      arrival.nodes = {receives[k]};
      arrival.task.kind = TaskKind::Compute;
      arrival.task.set_gpu(receives[k].rank);
      arrival.extra_deps = {transfer_unit};
      table.assign(std::move(arrival));
    }
  }
}

}  // namespace mfabric::workload::chakra
