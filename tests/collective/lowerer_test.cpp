// The Lowerer: which lowering runs each collective, by choice, by default and per fabric.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/lowering.h"
#include "collective/lowering_cases.h"
#include "core/error.h"
#include "fabric/builders.h"

// In the namespace of lowering_cases.h (test files are compiled several to a translation unit).
namespace mfabric::collective::lowering_test {
namespace {

TEST(Lowerer, AutoAllReduceChoosesHierarchicalOnlyWhenItHelps) {
  const Lowerer lowerer;
  auto steps = [&](const std::vector<NodeId>& m) {
    return lowerer.lower(request(CollectiveKind::AllReduce, m, 1000), topo()).steps.size();
  };
  EXPECT_EQ(steps(first_gpus(16)), 3u);                                // 4 x 4
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(1, 0), gpu(1, 1)}), 3u);  // 2 x 2
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(0, 2)}), 1u);             // one server
  EXPECT_EQ(steps({gpu(0, 0), gpu(1, 0), gpu(2, 0), gpu(3, 0)}), 1u);  // one per server
  EXPECT_EQ(steps({gpu(0, 0), gpu(0, 1), gpu(1, 0)}), 1u);             // uneven -> ring
  EXPECT_EQ(steps({gpu(0, 0)}), 0u);
  // Auto validates before looking at servers.
  EXPECT_THROW(steps({gpu(0, 0), topo().nic(0, 0)}), Error);
}

TEST(Lowerer, ExplicitChoices) {
  const auto m = first_gpus(16);
  const CollectiveRequest r = request(CollectiveKind::AllReduce, m, 1600);
  AlgorithmChoice ring;
  ring.all_reduce = "ring";
  EXPECT_EQ(Lowerer(ring).lower(r, topo()).steps.size(), 1u);
  AlgorithmChoice hier;
  hier.all_reduce = "hierarchical";
  EXPECT_EQ(Lowerer(hier).lower(r, topo()).steps.size(), 3u);
  // Hierarchical chosen explicitly still falls back where it does not apply.
  EXPECT_EQ(Lowerer(hier)
                .lower(request(CollectiveKind::AllReduce, {gpu(0, 0), gpu(1, 0)}, 10), topo())
                .steps.size(),
            1u);
}

TEST(Lowerer, DispatchesEveryKind) {
  const Lowerer lowerer;
  const auto m = first_gpus(8);
  for (CollectiveKind k : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
                           CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    const CollectiveRequest r = request(k, m, 1000);
    EXPECT_EQ(edges(lowerer.lower(r, topo()).steps.at(0)), edges(lower("ring", r).steps.at(0)))
        << to_string(k);
  }
  const CollectiveRequest a2a = request(CollectiveKind::AllToAll, m, 8000);
  EXPECT_EQ(edges(lowerer.lower(a2a, topo()).steps.at(0)), edges(lower("direct", a2a).steps.at(0)));
}

TEST(Lowerer, RejectsInvalidChoices) {
  struct Case {
    std::string AlgorithmChoice::*field;
    std::string value;
    std::string name;
    std::string collective;
    std::string valid;
  };
  const std::vector<Case> cases{
      {&AlgorithmChoice::all_reduce, "direct", "all_reduce", "all-reduce",
       "auto, ring, hierarchical"},
      {&AlgorithmChoice::all_reduce, "", "all_reduce", "all-reduce", "auto, ring, hierarchical"},
      {&AlgorithmChoice::all_to_all, "ring", "all_to_all", "all-to-all",
       "auto, hierarchical, direct, proxy, pxn"},
      {&AlgorithmChoice::all_gather, "hierarchical", "all_gather", "all-gather", "ring"},
      {&AlgorithmChoice::reduce_scatter, "auto", "reduce_scatter", "reduce-scatter", "ring"},
  };
  for (const Case& c : cases) {
    AlgorithmChoice choice;
    choice.*c.field = c.value;
    try {
      const Lowerer lowerer(choice);
      ADD_FAILURE() << c.name << "=" << c.value << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), c.name);
      EXPECT_NE(e.message().find(c.collective), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("'" + c.value + "'"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("(valid: " + c.valid + ")"), std::string::npos) << e.what();
    }
  }
}

TEST(Lowerer, RailOptimizedRunsAllToAllsWithPxn) {
  const fabric::Topology rail = fabric::build_fabric("rail-optimized", cluster(4, 4, 4));
  const RelayCase c;
  CollectiveRequest r = c.r;
  for (NodeId& m : r.members)
    m = rail.gpu(topo().node(m).server, topo().node(m).index);
  const Plan p = Lowerer().lower(r, rail);
  EXPECT_EQ(p.steps.size(), 2u);                             // pxn's
  EXPECT_EQ(Lowerer().lower(c.r, topo()).steps.size(), 1u);  // direct on the fat-tree
}

}  // namespace
}  // namespace mfabric::collective::lowering_test
