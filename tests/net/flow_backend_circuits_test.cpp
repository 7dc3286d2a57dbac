// The flow backend's circuits (flow/flow_backend_circuits.cpp): a circuit torn down under a
// transfer pauses it without losing bytes, resuming and re-routing by the NICs whose circuits
// came up, bounded link ids, and which NICs a circuit may join.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace flow_backend_circuits_test {

using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

// Two mFabric servers at 100G with a circuit between their NIC 5s carrying 1 MB from GPU 5 to
// GPU 5 (80 us; the circuit adds 2 us, both fibres to the OCS), torn down half way, at 40 us.
class TornDown : public ::testing::Test {
 protected:
  TornDown()
      : t(fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8))), net(t) {
    c = net.connect(t.nic(0, 5), t.nic(1, 5));
    id = rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));
    net.advance(Time::microseconds(40));
    net.disconnect(c);
  }
  const fabric::Topology t;
  FlowBackend net;
  Recorder rec;
  fabric::LinkId c = -1;
  TransferId id = -1;
};

TEST_F(TornDown, ItsTransferPausesAndResumesOnTheNewPlan) {
  EXPECT_EQ(net.paused_transfers(), 1u);
  EXPECT_FALSE(net.next_event_time().has_value());  // paused: nothing moves
  const auto stalled = net.stalled_transfers(4);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(stalled[0].why, StalledTransfer::Why::Paused);
  EXPECT_EQ(stalled[0].remaining.count(), 500'000);
  net.advance(Time::microseconds(1040));                // a 1 ms reconfiguration
  EXPECT_EQ(net.connect(t.nic(0, 5), t.nic(1, 5)), c);  // the slot is reused
  net.resume_paused();
  EXPECT_EQ(net.paused_transfers(), 0u);
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(1040 + 40 + 2));
  EXPECT_EQ(net.totals().bytes_delivered, 1'000'000);
}

TEST(FlowBackendCircuits, ResumingAtSomeNicsResumesTheTransfersOfTheirServersOnly) {
  // Two regions of two servers, a circuit and a transfer in each, both torn down: resuming at
  // region 1's NICs resumes region 1's transfer; region 0's stays paused until resumed.
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(4, 8, 8));
  FlowBackend net(t);
  Recorder rec;
  const fabric::LinkId c0 = net.connect(t.nic(0, 5), t.nic(1, 5));
  const fabric::LinkId c1 = net.connect(t.nic(2, 5), t.nic(3, 5));
  const TransferId in0 = rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));
  const TransferId in1 = rec.start(net, transfer(t.gpu(3, 5), t.gpu(2, 5), 1'000'000));
  net.advance(Time::microseconds(40));
  net.disconnect(c0);
  net.disconnect(c1);
  ASSERT_EQ(net.paused_transfers(), 2u);
  const std::vector<fabric::NodeId> region1{t.nic(2, 4), t.nic(3, 2)};  // any NIC of each server
  net.resume_paused(region1);
  EXPECT_EQ(net.paused_transfers(), 1u);
  EXPECT_TRUE(net.channels_of(in0).empty());  // paused: no route
  EXPECT_FALSE(net.channels_of(in1).empty());
  net.resume_paused();
  EXPECT_EQ(net.paused_transfers(), 0u);
  run_to_idle(net);
  EXPECT_EQ(net.totals().delivered, 2);
  // Only NICs name servers.
  const std::vector<fabric::NodeId> gpu{t.gpu(0, 0)};
  EXPECT_THROW(net.resume_paused(gpu), Error);
  EXPECT_THROW(net.reroute(std::vector<fabric::NodeId>{-1}), Error);
}

TEST_F(TornDown, APausedTransferMayResumeOverTheElectricalFabric) {
  net.resume_paused();  // no circuit now: through proxy GPUs and the EPS leaf (2 cables, 2 us)
  const auto path = net.channels_of(id);
  ASSERT_EQ(path.size(), 8u);
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(40 + 40 + 2));
  EXPECT_EQ(net.totals().delivered, 1);
}

TEST(FlowBackendCircuits, RerouteMovesTheRemainingBytesOntoANewCircuit) {
  // 1 MB from GPU 5 to GPU 5 at 100G starts over the EPS (through proxy GPUs); at 40 us a
  // circuit joins the two GPUs' own NICs and reroute() moves the other 500 kB onto it.
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 5), t.gpu(1, 5), 1'000'000));
  EXPECT_EQ(net.channels_of(id).size(), 8u);  // EPS: NVSwitch detours, 2 cables
  net.advance(Time::microseconds(40));
  const fabric::LinkId c = net.connect(t.nic(0, 5), t.nic(1, 5));
  const std::vector<fabric::NodeId> destination{t.nic(1, 5)};
  net.reroute(destination);  // the destination's server: its transfers only, nothing moves
  EXPECT_EQ(net.channels_of(id).size(), 8u);
  const std::vector<fabric::NodeId> both{t.nic(0, 5), t.nic(1, 5)};
  net.reroute(both);
  const auto path = net.channels_of(id);
  EXPECT_NE(std::find(path.begin(), path.end(), 2 * c), path.end());
  run_to_idle(net);
  EXPECT_EQ(rec.at(id), Time::microseconds(40 + 40 + 2));
  EXPECT_NEAR(net.channel_stats()[static_cast<std::size_t>(2 * c)].bytes, 500'000, 1);
  EXPECT_EQ(net.totals().bytes_delivered, 1'000'000);
  // A route no better than the one in use is kept.
  net.reroute(both);
}

TEST(FlowBackendCircuits, LinkIdsStayBoundedOverManyReconfigurations) {
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8));
  FlowBackend net(t);
  // 2 servers x 6 OCS NICs: at most 6 circuits at once.
  EXPECT_EQ(net.links().circuit_capacity(), 6u);
  const auto limit = static_cast<fabric::LinkId>(t.links().size() + 6);
  for (int round = 0; round < 5000; ++round) {
    std::vector<fabric::LinkId> ids;
    for (int k = 2; k < 8; ++k) {
      ids.push_back(net.connect(t.nic(0, k), t.nic(1, 2 + (k - 2 + round) % 6)));
      EXPECT_LT(ids.back(), limit);
    }
    for (fabric::LinkId id : ids)
      net.disconnect(id);
  }
  EXPECT_EQ(net.links().circuits(), 0u);
}

TEST(FlowBackendCircuits, CircuitsOnlyJoinFreeOcsNicsOfOneRegion) {
  const fabric::Topology t =
      fabric::build_fabric("mfabric:alpha=2,region=2,radix=8", cluster(4, 4, 4));
  FlowBackend net(t);
  // NICs 2-3 are on the OCS; servers 0-1 form region 0, servers 2-3 region 1.
  EXPECT_THROW(net.connect(t.nic(0, 2), t.nic(2, 2)), Error);  // two regions
  EXPECT_THROW(net.connect(t.nic(0, 2), t.nic(0, 3)), Error);  // one server
  EXPECT_THROW(net.connect(t.nic(0, 0), t.nic(1, 2)), Error);  // an EPS NIC
  EXPECT_THROW(net.connect(t.gpu(0, 0), t.nic(1, 2)), Error);  // not a NIC
  net.connect(t.nic(0, 2), t.nic(1, 2));
  EXPECT_THROW(net.connect(t.nic(0, 2), t.nic(1, 3)), Error);  // already holds one
  EXPECT_THROW(net.disconnect(0), Error);                      // not a circuit
  // A fabric without optical NICs has no circuit slots.
  const fabric::Topology ft = fabric::build_fabric("fat-tree", cluster(2, 2, 2));
  FlowBackend eps(ft);
  EXPECT_EQ(eps.links().circuit_capacity(), 0u);
  EXPECT_THROW(eps.connect(ft.nic(0, 0), ft.nic(1, 0)), Error);
}

}  // namespace flow_backend_circuits_test
}  // namespace mfabric::net
