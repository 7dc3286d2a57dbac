// The lowerings' registry and what every lowering shares: member validation and flow hashes.
#include "collective/lowering.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collective/lowering_cases.h"

// In the namespace of lowering_cases.h (test files are compiled several to a translation unit).
namespace mfabric::collective::lowering_test {
namespace {

// --- registry -----------------------------------------------------------------------------

TEST(Lowering, NamesAndFactory) {
  EXPECT_EQ(lowering_names(),
            (std::vector<std::string>{"ring", "hierarchical", "direct", "proxy", "pxn"}));
  for (const std::string& name : lowering_names()) {
    EXPECT_EQ(make_lowering(name)->name(), name);
  }
}

TEST(Lowering, UnknownNameListsTheKnownOnes) {
  const std::string msg = error_text([] { make_lowering("tree"); });
  EXPECT_NE(msg.find("'tree'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ring, hierarchical, direct"), std::string::npos) << msg;
}

// --- flow hashes --------------------------------------------------------------------------

std::vector<std::uint64_t> hashes(const Plan& p) {
  std::vector<std::uint64_t> out;
  for (const Step& s : p.steps) {
    for (const net::Transfer& t : s.transfers)
      out.push_back(t.flow_hash);
  }
  return out;
}

TEST(FlowHash, DeterministicAndDistinct) {
  const std::vector<CollectiveRequest> reqs{
      request(CollectiveKind::AllReduce, first_gpus(16), 1 << 20, 42),
      request(CollectiveKind::AllToAll, first_gpus(16), 1 << 20, 42),
      request(CollectiveKind::Broadcast, first_gpus(8), 1 << 20, 42),
  };
  const std::vector<std::string> algos{"hierarchical", "direct", "ring"};
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto a = hashes(lower(algos[i], reqs[i]));
    EXPECT_EQ(a, hashes(lower(algos[i], reqs[i])));  // same input, same hashes
    const std::set<std::uint64_t> unique(a.begin(), a.end());
    EXPECT_EQ(unique.size(), a.size()) << algos[i];  // every transfer its own hash
    // Another seed gives other hashes, none shared with the first.
    CollectiveRequest other = reqs[i];
    other.flow_hash = 43;
    const auto b = hashes(lower(algos[i], other));
    ASSERT_EQ(b.size(), a.size());
    for (std::uint64_t h : b)
      EXPECT_EQ(unique.count(h), 0u);
  }
}

TEST(FlowHash, ReversedEdgesDiffer) {
  // In a two-member ring both directions share (step, {0, 1}); order must still matter.
  const Plan p = lower("ring", request(CollectiveKind::AllReduce, first_gpus(2), 100, 0));
  ASSERT_EQ(p.steps.at(0).transfers.size(), 2u);
  EXPECT_NE(p.steps[0].transfers[0].flow_hash, p.steps[0].transfers[1].flow_hash);
  EXPECT_NE(p.steps[0].transfers[0].flow_hash, 0u);
}

// --- validation ---------------------------------------------------------------------------

TEST(Validation, EveryLoweringChecksMembers) {
  const NodeId nic = topo().nic(0, 0);
  const NodeId nvswitch = topo().nvswitch(1);
  const auto nodes = static_cast<NodeId>(topo().nodes().size());
  for (const std::string& algo : lowering_names()) {
    const CollectiveKind k = algo == "direct" || algo == "proxy" || algo == "pxn"
                                 ? CollectiveKind::AllToAll
                                 : CollectiveKind::AllReduce;
    std::string msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), nic}, 100)); });
    EXPECT_NE(msg.find("s0.nic0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a GPU"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {nvswitch}, 100)); });
    EXPECT_NE(msg.find("s1.nvswitch"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), nodes}, 100)); });
    EXPECT_NE(msg.find("outside the topology"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), -1}, 100)); });
    EXPECT_NE(msg.find("outside the topology"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {gpu(0, 0), gpu(1, 0), gpu(0, 0)}, 100)); });
    EXPECT_NE(msg.find("s0.gpu0 more than once"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, {}, 100)); });
    EXPECT_NE(msg.find("no members"), std::string::npos) << msg;
    msg = error_text([&] { lower(algo, request(k, first_gpus(2), -5)); });
    EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
    // The message names the algorithm.
    EXPECT_EQ(msg.rfind(algo + ":", 0), 0u) << msg;
  }
}

TEST(Validation, MatrixOnlyWithAllToAll) {
  ByteMatrix mat(2);
  for (const char* algo : {"ring", "hierarchical"}) {
    CollectiveRequest r = request(CollectiveKind::AllReduce, first_gpus(2), 100);
    r.matrix = &mat;
    const std::string msg = error_text([&] { lower(algo, r); });
    EXPECT_NE(msg.find("matrix"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace mfabric::collective::lowering_test
