// The pxn lowering: all-to-all bytes moved to the destination's rail over the NVSwitch first.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "collective/lowering.h"
#include "collective/lowering_cases.h"
#include "core/error.h"

// In the namespace of lowering_cases.h (test files are compiled several to a translation unit).
namespace mfabric::collective::lowering_test {
namespace {

TEST(Pxn, CrossRailBytesMoveToTheDestinationsRailFirst) {
  const RelayCase c;
  const Plan p = lower("pxn", c.r);
  ASSERT_EQ(p.steps.size(), 2u);
  // s0.gpu0 -> s1.gpu1: over the NVSwitch to s0.gpu1, then rail 1. s0.gpu0 -> s1.gpu2: to
  // s0.gpu2, then rail 2. s0.gpu1 -> s1.gpu1 is on its rail already: sent directly. Server-local
  // bytes (s0.gpu0 -> s0.gpu1, s1.gpu2 -> s1.gpu1) move in the second step.
  std::vector<Edge> first{{gpu(0, 0), gpu(0, 1), 100, 1}, {gpu(0, 0), gpu(0, 2), 40, 1}};
  std::vector<Edge> second{{gpu(0, 0), gpu(0, 1), 5, 1},
                           {gpu(0, 1), gpu(1, 1), 100 + 8, 1},
                           {gpu(0, 2), gpu(1, 2), 40, 1},
                           {gpu(1, 2), gpu(1, 1), 6, 1}};
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(edges(p.steps[0]), first);
  EXPECT_EQ(edges(p.steps[1]), second);
  // Every transfer between servers is on one rail.
  for (const net::Transfer& t : p.steps[1].transfers) {
    if (topo().node(t.src).server != topo().node(t.dst).server) {
      EXPECT_EQ(topo().node(t.src).index, topo().node(t.dst).index);
    }
  }
  EXPECT_THROW(lower("pxn", request(CollectiveKind::AllReduce, first_gpus(4), 100)), Error);
}

}  // namespace
}  // namespace mfabric::collective::lowering_test
