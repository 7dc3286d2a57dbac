// Completion batching of the flow backend (FlowBackendOptions, docs/network.md): large
// all-to-alls against the exact evolution, feasibility of the rates in between, and exactness
// where batching does not apply.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "fabric/builders.h"
#include "net/flow/completion_batching.h"
#include "net/flow/flow_backend.h"
#include "net_test_util.h"

namespace mfabric::net::completion_batching_test {
namespace {

using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::transfer;

struct Outcome {
  std::vector<Time> done;  // by transfer, in start order
  SolverStats solver;
  TransferTotals totals;
};

// An all-to-all among `hosts` single-GPU servers, 0.5-4 MB per pair, all started at once:
// hosts x (hosts - 1) flows.
Outcome all_to_all(const fabric::Topology& t, int hosts, double batching, std::uint64_t seed) {
  FlowBackendOptions o;
  o.completion_batching = batching;
  FlowBackend net(t, o);
  Recorder rec;
  Rng rng(seed);
  std::vector<TransferId> ids;
  for (int s = 0; s < hosts; ++s) {
    for (int d = 0; d < hosts; ++d) {
      if (s == d) continue;
      const auto bytes = static_cast<std::int64_t>(5e5 + rng.uniform() * 3.5e6);
      ids.push_back(rec.start(net, transfer(t.gpu(s, 0), t.gpu(d, 0), bytes,
                                            static_cast<std::uint64_t>(s * hosts + d))));
    }
  }
  run_to_idle(net);
  Outcome out;
  for (TransferId id : ids)
    out.done.push_back(rec.at(id));
  out.solver = net.solver_stats();
  out.totals = net.totals();
  return out;
}

fabric::Topology oversubscribed(int hosts) {
  return fabric::build_fabric("fat-tree:radix=8,oversubscription=3", cluster(hosts, 1, 1));
}

// 48 hosts, 2,256 flows: exact recomputations re-fill hundreds to thousands of flows. Measured
// with the default batching (0.02): the all-to-all ends 0.02-0.03% later than exactly, a
// transfer at most 5% off, with 4-9x less work (docs/network.md).
void expect_close_to_exact(const fabric::Topology& t, int hosts) {
  const Outcome exact = all_to_all(t, hosts, 0, 7);
  const Outcome batched = all_to_all(t, hosts, 0.02, 7);
  EXPECT_EQ(batched.totals.delivered, batched.totals.started);
  EXPECT_EQ(batched.totals.bytes_delivered, batched.totals.bytes_sent);
  const Time exact_end = *std::max_element(exact.done.begin(), exact.done.end());
  const Time batched_end = *std::max_element(batched.done.begin(), batched.done.end());
  EXPECT_NEAR(static_cast<double>(batched_end.ps()), static_cast<double>(exact_end.ps()),
              1e-3 * static_cast<double>(exact_end.ps()));
  double worst = 0;
  for (std::size_t i = 0; i < exact.done.size(); ++i) {
    const double e = static_cast<double>(exact.done[i].ps());
    worst = std::max(worst, std::abs(static_cast<double>(batched.done[i].ps()) - e) / e);
  }
  EXPECT_LT(worst, 0.06);
  EXPECT_EQ(exact.solver.local_fills, 0);
  EXPECT_GT(batched.solver.local_fills, 0);
  EXPECT_LT(batched.solver.recomputations * 2, exact.solver.recomputations);
  EXPECT_LT(batched.solver.flows_recomputed * 3, exact.solver.flows_recomputed);
}

TEST(CompletionBatching, LargeAllToAllStaysWithinATenthOfAPercentOfExact) {
  expect_close_to_exact(fabric::build_fabric("fat-tree:radix=16", cluster(48, 1, 1)), 48);
  expect_close_to_exact(oversubscribed(48), 48);
}

TEST(CompletionBatching, SmallRecomputationsStayExact) {
  // 12 flows: no recomputation re-fills enough flows to be batched, so every time is exact.
  const fabric::Topology t = oversubscribed(4);
  const Outcome exact = all_to_all(t, 4, 0, 3);
  const Outcome batched = all_to_all(t, 4, kMaxCompletionBatching, 3);
  EXPECT_EQ(batched.done, exact.done);
  EXPECT_EQ(batched.solver.local_fills, 0);
}

TEST(CompletionBatching, RatesStayFeasibleWhileABatchIsPending) {
  const int hosts = 24;
  const fabric::Topology t = oversubscribed(hosts);
  FlowBackendOptions o;
  o.completion_batching = kMaxCompletionBatching;
  FlowBackend net(t, o);
  Recorder rec;
  Rng rng(11);
  std::vector<TransferId> ids;
  for (int s = 0; s < hosts; ++s) {
    for (int d = 0; d < hosts; ++d) {
      if (s != d) {
        ids.push_back(rec.start(
            net, transfer(t.gpu(s, 0), t.gpu(d, 0),
                          static_cast<std::int64_t>(5e5 + rng.uniform() * 3.5e6), s * 31 + d)));
      }
    }
  }
  int checked = 0;
  while (net.next_event_time()) {
    net.advance(*net.next_event_time());
    std::map<ChannelId, double> load;
    for (TransferId id : ids) {
      const auto r = net.rate_of(id);
      if (!r) continue;
      for (ChannelId c : net.channels_of(id))
        load[c] += r->bps();
    }
    for (const auto& [c, l] : load) {
      const double cap = net.links().link(link_of_channel(c)).rate.bps();
      ASSERT_LE(l, cap * (1 + 1e-9)) << "channel " << c;
    }
    ++checked;
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(net.solver_stats().local_fills, 0);
  EXPECT_EQ(net.totals().bytes_delivered, net.totals().bytes_sent);
}

TEST(CompletionBatching, OutOfRangeIsAnError) {
  const fabric::Topology t = oversubscribed(2);
  for (const double bad : {-0.01, kMaxCompletionBatching * 2, std::nan("")}) {
    FlowBackendOptions o;
    o.completion_batching = bad;
    EXPECT_THROW(FlowBackend(t, o), Error) << bad;
  }
}

}  // namespace
}  // namespace mfabric::net::completion_batching_test

// CompletionBatching on its own (net/flow/completion_batching.h).
namespace mfabric::net::flow {
namespace {

Cold completed_flow(std::int32_t last_v, std::int64_t started) {
  Cold c;
  c.last_v = last_v;
  c.started = started;
  return c;
}

TEST(CompletionBatchingAlone, WithoutBatchingEveryRecomputationIsDueAtOnce) {
  CompletionBatching b(0);
  Hot f;
  f.bneck = 3;
  b.completed(f, completed_flow(10'000, 0), 5e9, 1'000);
  EXPECT_EQ(b.due(), 1'000);
  EXPECT_FALSE(b.waits(1'000, true));
  EXPECT_TRUE(b.local_seeds().empty());
}

TEST(CompletionBatchingAlone, SmallRecomputationsAreNotBatched) {
  CompletionBatching b(0.05);
  Hot f;
  f.bneck = 3;
  b.completed(f, completed_flow(CompletionBatching::kBatchFrom - 1, 0), 5e9, 1'000'000);
  EXPECT_EQ(b.due(), 1'000'000);
  EXPECT_TRUE(b.local_seeds().empty());
}

TEST(CompletionBatchingAlone, LargeOnesWaitAFractionOfTheirAge) {
  CompletionBatching b(0.05);
  Hot f;
  f.bneck = 3;
  // Started at 1 us, done at 11 us: waits 5% of 10 us = 500 ns; the earliest due wins.
  b.completed(f, completed_flow(CompletionBatching::kBatchFrom, 1'000'000), 5e9, 11'000'000);
  EXPECT_EQ(b.due(), 11'500'000);
  f.bneck = 7;
  b.completed(f, completed_flow(1'000, 10'000'000), 2e9, 11'000'000);
  EXPECT_EQ(b.due(), 11'050'000);
  EXPECT_TRUE(b.waits(11'000'000, true));
  EXPECT_FALSE(b.waits(11'000'000, false)) << "nothing drains: no rate for it to change";
  EXPECT_FALSE(b.waits(11'050'000, true));
  EXPECT_EQ(b.local_seeds(), (std::vector<ChannelId>{3, 7}));
  EXPECT_EQ(b.take_local_level(), 2e9);
  EXPECT_EQ(b.take_local_level(), kInf);
}

TEST(CompletionBatchingAlone, CloseHandsOverEachTouchedChannelOnce) {
  CompletionBatching b(0.05);
  b.refilled({4, 2}, false, 10);
  b.refilled({2, 9}, true, 10);
  std::vector<ChannelId> seeds{1};
  EXPECT_TRUE(b.close(seeds)) << "a re-fill lowered a rate";
  EXPECT_EQ(seeds, (std::vector<ChannelId>{1, 4, 2, 9}));
  EXPECT_EQ(b.due(), CompletionBatching::kNever);
  // The next batch starts empty.
  b.refilled({2}, false, 10);
  seeds.clear();
  EXPECT_FALSE(b.close(seeds));
  EXPECT_EQ(seeds, (std::vector<ChannelId>{2}));
}

}  // namespace
}  // namespace mfabric::net::flow
