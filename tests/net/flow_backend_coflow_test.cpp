// The flow backend's coflows (FlowBackend::start_coflow, docs/shortcuts.md, "Coflows"): every
// expected time below is worked out by hand from the busiest channel's bytes over its rate plus
// the route's latency (to 2e-7 of it where the coefficients, kept as floats, round); the splits
// back into members (a circuit torn down, a link down) conserve bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace flow_backend_coflow_test {

using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

constexpr std::int64_t kUs = 1'000'000;  // picoseconds

// Completion times of a coflow's members, by position.
struct CoflowRecorder {
  std::vector<Time> done;
  std::vector<TransferId> ids;
  std::vector<TransferId> reported;

  void start(Backend& b, const std::vector<Transfer>& transfers) {
    done.assign(transfers.size(), Time::max());
    reported.assign(transfers.size(), -1);
    std::vector<Backend::DoneCallback> callbacks;
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      callbacks.emplace_back([this, i](TransferId id, Time at) {
        done[i] = at;
        reported[i] = id;
      });
    }
    ids = b.start_coflow(transfers, std::move(callbacks));
  }
};

// Two servers of two GPUs behind one NIC each, one leaf, 100G, 1 us a cable: a transfer between
// the servers pays 2 us of latency and crosses both NICs' cables.
fabric::Topology two_servers() {
  return fabric::build_fabric("fat-tree:radix=4", cluster(2, 2, 1));
}

TEST(FlowBackendCoflow, ItsMembersFinishTogetherWhenTheBusiestChannelIsDone) {
  const fabric::Topology t = two_servers();
  FlowBackend net(t);
  CoflowRecorder rec;
  // 1 MB and 3 MB through server 0's NIC cable: 4 MB = 32e6 bits at 100G = 320 us, + 2 us. Alone,
  // the 1 MB would have finished at 162 us (both at 50G until then).
  rec.start(net, {transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000),
                  transfer(t.gpu(0, 1), t.gpu(1, 1), 3'000'000)});
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.done[0].ps()), 322.0 * kUs, 2.0);
  EXPECT_EQ(rec.done[0], rec.done[1]);
  EXPECT_EQ(net.totals().started, 2);
  EXPECT_EQ(net.totals().delivered, 2);
  EXPECT_EQ(net.totals().bytes_delivered, 4'000'000);
  EXPECT_EQ(net.active_transfers(), 0u);
}

TEST(FlowBackendCoflow, ItSharesAChannelAsItsMembersWouldEachAsOneFlow) {
  const fabric::Topology t = two_servers();
  FlowBackend net(t);
  CoflowRecorder rec;
  Recorder alone;
  // Two members of 1 MB and a flow of 1 MB on server 0's cable: a third of 100G each, as per-flow
  // max-min gives them: 8e6 bits / 33.3G = 240 us, + 2 us, all three.
  rec.start(net, {transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000),
                  transfer(t.gpu(0, 1), t.gpu(1, 1), 1'000'000)});
  const TransferId single = alone.start(net, transfer(t.gpu(0, 0), t.gpu(1, 1), 1'000'000));
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.done[0].ps()), 242.0 * kUs, 2.0);
  EXPECT_EQ(rec.done[0], rec.done[1]);
  EXPECT_NEAR(static_cast<double>(alone.at(single).ps()), 242.0 * kUs, 2.0);
}

TEST(FlowBackendCoflow, EachMemberIsCalledBackWithItsOwnIdAndEmptyOnesGoAlone) {
  const fabric::Topology t = two_servers();
  FlowBackend net(t);
  CoflowRecorder rec;
  // A zero-byte member completes after the latency alone; a member to its own GPU at once.
  rec.start(net, {transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000),
                  transfer(t.gpu(0, 1), t.gpu(1, 1), 0), transfer(t.gpu(0, 1), t.gpu(0, 1), 500),
                  transfer(t.gpu(1, 1), t.gpu(0, 1), 1'000'000)});
  ASSERT_EQ(rec.ids.size(), 4u);
  for (std::size_t i = 1; i < rec.ids.size(); ++i)
    EXPECT_EQ(rec.ids[i], rec.ids[i - 1] + 1);
  run_to_idle(net);
  EXPECT_EQ(rec.reported, rec.ids);
  EXPECT_EQ(rec.done[1].ps(), 2 * kUs);
  EXPECT_EQ(rec.done[2].ps(), 0);
  // The two with bytes go opposite ways, each alone on its cable: 80 us + 2 us, together.
  EXPECT_NEAR(static_cast<double>(rec.done[0].ps()), 82.0 * kUs, 2.0);
  EXPECT_EQ(rec.done[0], rec.done[3]);
  EXPECT_EQ(net.totals().started, 4);
  EXPECT_EQ(net.totals().delivered, 4);
  EXPECT_EQ(net.totals().bytes_delivered, 2'000'500);
}

TEST(FlowBackendCoflow, AnAllToAllEndsWhenItsBusiestNicIsDone) {
  // Four servers of one GPU and one NIC under one leaf (radix 8): only the NICs' cables are
  // shared. Server i sends m[i][j] bytes to server j; the all-to-all ends when the NIC with most
  // bytes to send or receive is done: max over i of max(row i, column i) x 8 / 100G, + 2 us.
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=8", cluster(4, 1, 1));
  const std::int64_t m[4][4] = {{0, 1'000'000, 2'000'000, 500'000},
                                {300'000, 0, 700'000, 900'000},
                                {4'000'000, 100'000, 0, 250'000},
                                {600'000, 600'000, 600'000, 0}};
  std::vector<Transfer> all;
  std::int64_t busiest = 0;
  for (int i = 0; i < 4; ++i) {
    std::int64_t row = 0;
    std::int64_t column = 0;
    for (int j = 0; j < 4; ++j) {
      row += m[i][j];
      column += m[j][i];
      if (i != j) all.push_back(transfer(t.gpu(i, 0), t.gpu(j, 0), m[i][j]));
    }
    busiest = std::max({busiest, row, column});
  }
  // Column 0: 4.9 MB into server 0.
  ASSERT_EQ(busiest, 4'900'000);
  FlowBackend net(t);
  CoflowRecorder rec;
  rec.start(net, all);
  run_to_idle(net);
  const double want = static_cast<double>(busiest) * 8 / 100e9 * 1e12 + 2.0 * kUs;
  for (const Time& at : rec.done)
    EXPECT_NEAR(static_cast<double>(at.ps()), want, want * 2e-7);
  EXPECT_EQ(net.events_processed(), 3);  // one start, one last byte, one arrival
}

TEST(FlowBackendCoflow, AStepOverMoreChannelsThanASlotHoldsIsStillOneCoflow) {
  // 40 single-GPU servers under one leaf (radix 128): an all-to-all of 1,560 transfers crosses 80
  // NIC cable channels, more than one slot's route space (its route spans several slots). Server
  // i sends 100 kB x (i + 1) to each other server: the busiest NIC is server 39's way out, 39 x
  // 4 MB = 156 MB, 12,480 us at 100G, + 2 us; every transfer ends then.
  const int n = 40;
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=128", cluster(n, 1, 1));
  std::vector<Transfer> all;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) all.push_back(transfer(t.gpu(i, 0), t.gpu(j, 0), 100'000 * (1 + i)));
    }
  }
  FlowBackend net(t);
  CoflowRecorder rec;
  rec.start(net, all);
  run_to_idle(net);
  for (const Time& at : rec.done)
    EXPECT_NEAR(static_cast<double>(at.ps()), 12'482.0 * kUs, 12'482.0 * kUs * 2e-7);
  EXPECT_EQ(net.totals().delivered, static_cast<std::int64_t>(all.size()));
  EXPECT_EQ(net.events_processed(), 3);
}

TEST(FlowBackendCoflow, ATornDownCircuitSplitsItIntoItsMembersWithTheirBytesLeft) {
  // Two mFabric servers at 100G; circuits between their NIC 5s and NIC 6s carry 1 MB and 3 MB
  // as one coflow: the 3 MB member's circuit decides (3 MB at 100G = 240 us; the 1 MB member
  // moves at a third of that rate, to finish with it). The NIC 6 circuit is torn down at
  // 120 us, half way: the members go on alone, 0.5 MB and 1.5 MB left; the 0.5 MB one on its
  // circuit (40 us, + 2 us), the other paused until the circuit is back.
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  net.connect(t.nic(0, 5), t.nic(1, 5));
  const fabric::LinkId c6 = net.connect(t.nic(0, 6), t.nic(1, 6));
  CoflowRecorder rec;
  rec.start(net, {transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000),
                  transfer(t.gpu(0, 6), t.gpu(1, 6), 3'000'000)});
  net.advance(Time::microseconds(120));
  net.disconnect(c6);
  EXPECT_EQ(net.paused_transfers(), 1u);
  const auto stalled = net.stalled_transfers(4);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].remaining.count(), 1'500'000);
  net.advance(Time::microseconds(1120));
  EXPECT_EQ(rec.done[0], Time::microseconds(120 + 40 + 2));
  EXPECT_EQ(net.connect(t.nic(0, 6), t.nic(1, 6)), c6);
  net.resume_paused();
  run_to_idle(net);
  // 1.5 MB at 100G = 120 us after 1,120 us, + 2 us.
  EXPECT_EQ(rec.done[1], Time::microseconds(1120 + 120 + 2));
  EXPECT_EQ(net.totals().bytes_delivered, 4'000'000);
  EXPECT_EQ(rec.reported, rec.ids);
}

TEST(FlowBackendCoflow, ReRoutedOntoNewCircuitsItMovesWhole) {
  // Two mFabric servers at 100G: 1 MB and 3 MB from GPUs 5 and 6 to their peers, one coflow over
  // the EPS, where both cross their server's one EPS NIC: 4 MB at 100G, 1.5 MB of it sent by
  // 120 us (37.5%). Circuits between the NIC 5s and the NIC 6s come up then and the servers'
  // transfers are moved onto them: the coflow moves as one, 62.5% of each member left, and the
  // 3 MB member's 1.875 MB on its own circuit decide: 150 us more, + the circuit's 2 us.
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  CoflowRecorder rec;
  rec.start(net, {transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000),
                  transfer(t.gpu(0, 6), t.gpu(1, 6), 3'000'000)});
  net.advance(Time::microseconds(120));
  const fabric::LinkId c5 = net.connect(t.nic(0, 5), t.nic(1, 5));
  net.connect(t.nic(0, 6), t.nic(1, 6));
  const std::vector<fabric::NodeId> nics = {t.nic(0, 5), t.nic(0, 6), t.nic(1, 5), t.nic(1, 6)};
  net.reroute(nics);
  EXPECT_EQ(net.solver_stats().rerouted, 1);
  const std::vector<ChannelId> now = net.channels_of(rec.ids[0]);
  EXPECT_NE(std::find(now.begin(), now.end(), 2 * c5), now.end());
  run_to_idle(net);
  EXPECT_NEAR(static_cast<double>(rec.done[0].ps()), 272.0 * kUs, 2.0);
  EXPECT_EQ(rec.done[1], rec.done[0]);
  EXPECT_EQ(net.totals().bytes_delivered, 4'000'000);
}

TEST(FlowBackendCoflow, ALinkDownSplitsItAndItsMembersTakeTheRoutesLeft) {
  // Four servers of one GPU under two leaves of a radix-4 fat-tree (two spines): an all-to-all
  // of 1 MB a pair crosses the spines. A leaf-spine cable goes down half way: the coflow splits,
  // its members move to the other spine where they cross the failed one, and every byte arrives.
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(4, 1, 1));
  std::vector<Transfer> all;
  std::uint64_t hash = 1;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i != j) all.push_back(transfer(t.gpu(i, 0), t.gpu(j, 0), 1'000'000, hash++));
    }
  }
  FlowBackend net(t);
  CoflowRecorder rec;
  rec.start(net, all);
  // A cable from a leaf up to a spine that some member crosses.
  fabric::LinkId up = -1;
  for (ChannelId c : net.channels_of(rec.ids[0])) {
    const fabric::Link& l = t.link(link_of_channel(c));
    if (t.node(l.a).kind == fabric::NodeKind::Switch &&
        t.node(l.b).kind == fabric::NodeKind::Switch)
      up = link_of_channel(c);
  }
  ASSERT_GE(up, 0);
  net.advance(Time::microseconds(50));
  net.set_link_rate(up, Rate::bits_per_second(0));
  run_to_idle(net);
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_EQ(net.totals().bytes_delivered, 12'000'000);
  for (const Time& at : rec.done)
    EXPECT_LT(at, Time::max());
  EXPECT_EQ(rec.reported, rec.ids);
}

}  // namespace flow_backend_coflow_test
}  // namespace mfabric::net
