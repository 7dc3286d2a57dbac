// The flow backend's work grows with the transfers, not with their square (issue 24: a
// connection matrix of a million equal flows among 1024 hosts ran 40x longer at 850k flows than
// at 700k). The solver counts the entries of the channels' transfer lists it scans
// (SolverStats::flows_visited); these checks bound that count per transfer, so they catch a
// channel scanned once per change that names it without timing anything.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/rng.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace {

using fabric::Topology;
using testing::cluster;
using testing::run_to_idle;
using testing::transfer;

// `n` transfers of 1000 bytes between random pairs of 16 hosts of one GPU and one 400G NIC on a
// fat-tree (the shape of bench/all_to_all_cm.py's matrices), all started at 0: about n / 8
// transfers on every NIC, started together, and the ones that share a bottleneck finish
// together.
TEST(FlowBackendWork, EqualTransfersStartedTogetherCostLinearWork) {
  constexpr int kHosts = 16;
  constexpr int kTransfers = 16'000;
  const Topology t = fabric::build_fabric("fat-tree", cluster(kHosts, 1, 1, Rate::gbps(400)));
  for (const double batching : {0.0, 0.02}) {
    FlowBackend net(t, FlowBackendOptions{batching});
    Rng rng(24);
    for (int i = 0; i < kTransfers; ++i) {
      const auto src = static_cast<int>(rng.below(kHosts));
      auto dst = static_cast<int>(rng.below(kHosts - 1));
      dst += dst >= src ? 1 : 0;
      net.start(transfer(t.gpu(src, 0), t.gpu(dst, 0), 1000, rng.next_u64()), nullptr);
    }
    // The starts: each transfer names its channels (each NIC's twice, about 1000 transfers
    // each), and each channel's list is scanned once, not once per name (1000 x 1000 entries
    // per NIC channel).
    ASSERT_TRUE(net.next_event_time().has_value());
    const std::int64_t at_start = net.solver_stats().flows_visited;
    EXPECT_LE(at_start, 4 * kTransfers) << "completion_batching " << batching;
    // The completions: no rate changes (the transfers left are all slower); each channel is
    // scanned once per timestamp at which some of its transfers finish (a few times), not once
    // per finished transfer (about 2000 entries per transfer).
    run_to_idle(net);
    EXPECT_EQ(net.totals().delivered, kTransfers);
    EXPECT_LE(net.solver_stats().flows_visited - at_start, 10 * kTransfers)
        << "completion_batching " << batching;
  }
}

}  // namespace
}  // namespace mfabric::net
