// The flow backend's channel ledger (net/flow/channel_ledger.h): statistics add load x time
// between changes, idle channels add nothing, a mirrored PCIe channel reports its cable's.
#include "net/flow/channel_ledger.h"

#include <gtest/gtest.h>

#include "fabric/builders.h"
#include "net/link_table.h"
#include "net_test_util.h"

namespace mfabric::net::flow {
namespace {

TEST(ChannelLedger, AddsLoadTimesTimeBetweenChanges) {
  const fabric::Topology topo = fabric::build_fabric("fat-tree:radix=8", testing::cluster(4, 1, 1));
  const LinkTable links(topo);
  ChannelLedger ledger;
  ledger.grow(links, 0);
  ASSERT_EQ(ledger.size(), 2 * links.size());
  EXPECT_EQ(ledger.chan(0).cap, links.link(0).rate.bps());
  // 8 Gb/s for 1 us is 1000 bytes; then idle for 1 us; then 16 Gb/s for 0.5 us.
  ledger.chan(0).load = 8e9;
  ledger.settle(0, 1'000'000);
  ledger.chan(0).load = 0;
  ledger.settle(0, 2'000'000);
  ledger.chan(0).load = 16e9;
  PcieMirror none;
  none.resize(ledger.size());
  const auto& stats = ledger.settle_all(2'500'000, none);
  EXPECT_DOUBLE_EQ(stats[0].bytes, 2000.0);
  EXPECT_EQ(stats[0].busy, Time::picoseconds(1'500'000));
  EXPECT_EQ(stats[1].bytes, 0.0);
}

TEST(ChannelLedger, MirroredChannelsReportTheirCable) {
  const fabric::Topology topo = fabric::build_fabric("fat-tree:radix=8", testing::cluster(4, 1, 1));
  const LinkTable links(topo);
  ChannelLedger ledger;
  ledger.grow(links, 0);
  PcieMirror mirrors;
  mirrors.resize(ledger.size());
  mirrors.pair(2, 5);
  ledger.chan(5).load = 8e9;
  const auto& stats = ledger.settle_all(1'000'000, mirrors);
  EXPECT_DOUBLE_EQ(stats[2].bytes, 1000.0);
  EXPECT_EQ(stats[2].busy, stats[5].busy);
  // Taken over: the PCIe channel keeps the cable's past and carries its load from now on.
  ledger.take_over(2, 5, 2'000'000);
  mirrors.unpair(2, 5);
  EXPECT_EQ(ledger.chan(2).load, 8e9);
  EXPECT_DOUBLE_EQ(ledger.stats(2).bytes, 2000.0);
}

}  // namespace
}  // namespace mfabric::net::flow
