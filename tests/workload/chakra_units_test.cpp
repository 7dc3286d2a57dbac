// The Chakra reader's unit table on its own (chakra_units.h): comm types, which unit each node
// belongs to, and the words messages use. Matching and assembly are tested through read_chakra
// in chakra_test.cpp.
#include "workload/chakra_units.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace mfabric::workload::chakra {
namespace {

TEST(ChakraCommTypes, RootedCollectivesMapToTheirSymmetricKin) {
  EXPECT_EQ(collective_kind(pb::ALL_REDUCE), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_kind(pb::REDUCE), CollectiveKind::ReduceScatter);
  EXPECT_EQ(collective_kind(pb::GATHER), CollectiveKind::AllGather);
  EXPECT_EQ(collective_kind(pb::SCATTER), CollectiveKind::Broadcast);
  EXPECT_EQ(collective_kind(pb::ALL_TO_ALL), CollectiveKind::AllToAll);
  EXPECT_EQ(collective_kind(pb::BARRIER), CollectiveKind::Barrier);
  EXPECT_FALSE(collective_kind(99));
  EXPECT_EQ(comm_type_name(pb::ALL_GATHER), "ALL_GATHER");
  EXPECT_EQ(comm_type_name(99), "99");
  EXPECT_EQ(comm_type_name(std::int64_t{1} << 40), "1099511627776");
}

RankTrace rank(const std::string& file, int nodes) {
  RankTrace r;
  r.file = file;
  for (int i = 0; i < nodes; ++i) {
    RawNode n;
    n.id = static_cast<std::uint64_t>(10 + i);
    n.name = "op" + std::to_string(i);
    r.nodes.push_back(n);
  }
  return r;
}

TEST(UnitTable, NodesBelongToTheUnitTheyWereAssignedTo) {
  std::vector<RankTrace> ranks;
  ranks.push_back(rank("t.0.et", 2));
  ranks.push_back(rank("t.1.et", 1));
  UnitTable table(std::move(ranks));
  EXPECT_EQ(table.rank_count(), 2);
  EXPECT_EQ(table.unit_of(0, 1), UnitTable::kNone);
  Unit both;
  both.nodes = {NodeRef{0, 1}, NodeRef{1, 0}};
  EXPECT_EQ(table.assign(std::move(both)), 0u);
  Unit one;
  one.nodes = {NodeRef{0, 0}};
  EXPECT_EQ(table.assign(std::move(one)), 1u);
  EXPECT_EQ(table.unit_of(0, 0), 1u);
  EXPECT_EQ(table.unit_of(0, 1), 0u);
  EXPECT_EQ(table.unit_of(1, 0), 0u);
  EXPECT_EQ(table.units().size(), 2u);
  EXPECT_EQ(table.node(NodeRef{1, 0}).id, 10u);
  EXPECT_EQ(table.where(NodeRef{0, 1}), "t.0.et " + describe(table.node(NodeRef{0, 1})));
}

TEST(UnitTable, DescribesEachKindOfUnitForTheDeadlockMessage) {
  std::vector<RankTrace> ranks;
  ranks.push_back(rank("t.0.et", 2));
  ranks.push_back(rank("t.1.et", 2));
  ranks[0].nodes[0].comm_type = pb::ALL_REDUCE;
  ranks[1].nodes[0].type = pb::COMM_RECV_NODE;
  UnitTable table(std::move(ranks));
  const std::string a = table.where(NodeRef{0, 0}), b = table.where(NodeRef{1, 0});

  Unit collective;
  collective.nodes = {NodeRef{0, 0}, NodeRef{1, 1}};
  collective.task.kind = TaskKind::Collective;
  collective.heading = "collective #0 of process group 'tp'";
  EXPECT_EQ(table.describe_unit(collective), "collective #0 of process group 'tp' ALL_REDUCE (" +
                                                 a + ", " + table.where(NodeRef{1, 1}) + ")");
  Unit transfer;
  transfer.nodes = {NodeRef{0, 1}};
  transfer.receive = NodeRef{1, 0};
  transfer.task.kind = TaskKind::P2P;
  EXPECT_EQ(table.describe_unit(transfer),
            "transfer of send " + table.where(NodeRef{0, 1}) + " to receive " + b);
  Unit receive;
  receive.nodes = {NodeRef{1, 0}};
  EXPECT_EQ(table.describe_unit(receive), "receive " + b + " (waits for its transfer)");
  Unit compute;
  compute.nodes = {NodeRef{0, 1}};
  EXPECT_EQ(table.describe_unit(compute), table.where(NodeRef{0, 1}));
}

}  // namespace
}  // namespace mfabric::workload::chakra
