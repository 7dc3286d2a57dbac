// Packet spraying in both backends: a permutation whose per-flow ECMP routes collide runs at
// line rate when its transfers are sprayed, in the flow backend (equal parts over the paths) and
// in the packet backend (packets over the paths in turn), and the two agree.
#include "net/flow/spraying_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/backends.h"
#include "net/flow/flow_backend.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace spraying_test {

using fabric::Topology;
using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

// 64 hosts of one GPU and one 400G NIC on a fat-tree; host i sends 16 MB to host 7i + 13 mod 64
// (every flow leaves its leaf).
Time permutation(const Topology& t, const std::string& backend, int spray_paths,
                 TransferTotals* totals = nullptr) {
  BackendOptions o;
  o.spray_paths = spray_paths;
  const auto net = make_backend(backend, t, o);
  Recorder rec;
  std::vector<TransferId> ids;
  for (int i = 0; i < 64; ++i) {
    ids.push_back(rec.start(*net, transfer(t.gpu(i, 0), t.gpu((7 * i + 13) % 64, 0), 16'000'000,
                                           static_cast<std::uint64_t>(i))));
  }
  run_to_idle(*net);
  Time end;
  for (TransferId id : ids)
    end = std::max(end, rec.at(id));
  if (totals != nullptr) *totals = net->stats()->totals();
  return end;
}

TEST(Spraying, APermutationThatCollidesUnderEcmpRunsAtLineRateWhenSprayed) {
  const Topology t = fabric::build_fabric("fat-tree", cluster(64, 1, 1, Rate::gbps(400)));
  // Line rate: 16 MB / 400G = 320 us, plus the path's latency (a few us).
  const double ideal = 320e-6;
  const Time flow_ecmp = permutation(t, "flow", 1);
  TransferTotals totals;
  const Time flow_spray = permutation(t, "flow", 16, &totals);
  EXPECT_EQ(totals.started, 64);
  EXPECT_EQ(totals.delivered, 64);
  EXPECT_EQ(totals.bytes_delivered, 64 * 16'000'000LL);
  // ECMP puts several flows on one uplink (measured: 3 on the worst, 964 us).
  EXPECT_GT(flow_ecmp.seconds(), 2 * ideal);
  EXPECT_LT(flow_spray.seconds(), 1.1 * ideal);
  // The packet backend: the same collision under ECMP, about line rate when sprayed (DCTCP
  // tolerates the reordering: 32 duplicate ACKs before a fast retransmission). Measured 351 us:
  // headers (1.6%) and slow start up to the 600 kB bandwidth-delay product (about 20 us), which
  // a lone flow per path cannot hide behind others' traffic.
  const Time packet_ecmp = permutation(t, "packet", 1);
  const Time packet_spray = permutation(t, "packet", 16, &totals);
  EXPECT_EQ(totals.bytes_delivered, 64 * 16'000'000LL);
  EXPECT_GT(packet_ecmp.seconds(), 2 * ideal);
  EXPECT_LT(packet_spray.seconds(), 1.1 * flow_spray.seconds());
  EXPECT_GT(packet_spray.seconds(), flow_spray.seconds());
}

TEST(Spraying, SmallTransfersAreSplitIntoFewerPartsAndTheBadCountIsRefused) {
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(4, 1, 1));
  SprayingBackend net(std::make_unique<FlowBackend>(t), 8);
  Recorder rec;
  // 3 parts of 4096 bytes at most: 10,000 bytes; a single byte; zero bytes.
  const TransferId a = rec.start(net, transfer(t.gpu(0, 0), t.gpu(3, 0), 10'000));
  const TransferId b = rec.start(net, transfer(t.gpu(0, 0), t.gpu(3, 0), 1));
  const TransferId c = rec.start(net, transfer(t.gpu(1, 0), t.gpu(2, 0), 0));
  EXPECT_EQ(net.active_transfers(), 3u);
  EXPECT_EQ(net.inner().stats()->active_transfers(), 4u);  // 2 + 1 + 1 parts
  run_to_idle(net);
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_GT(rec.at(a), rec.at(b));
  EXPECT_GE(rec.at(b), rec.at(c));
  EXPECT_EQ(net.totals().bytes_delivered, 10'001);
  EXPECT_THROW(SprayingBackend(std::make_unique<FlowBackend>(t), 0), Error);
  EXPECT_THROW(SprayingBackend(std::make_unique<FlowBackend>(t), kMaxSprayPaths + 1), Error);
}

}  // namespace spraying_test
}  // namespace mfabric::net
