#include "runtime/proxy_alltoallv.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "runtime/circuit_source.h"
#include "runtime/token_payload.h"

namespace mfabric::runtime {
namespace {

constexpr std::uint64_t kSeed = 7;
constexpr std::uint32_t kLayer = 3;

// Up to 5 tokens from each rank to each rank, seeded; some pairs carry none.
TokenRouting random_routing(int ranks, std::int64_t token_bytes, std::uint64_t seed) {
  Rng rng(seed);
  TokenRouting r;
  r.ranks = ranks;
  r.token_bytes = token_bytes;
  for (int i = 0; i < ranks * ranks; ++i)
    r.tokens.push_back(static_cast<std::int64_t>(rng.below(6)));
  return r;
}

// Each rank's tokens in send order (by expert, then index), as moe-bench draws them.
std::map<int, std::vector<std::byte>> send_buffers(const TokenRouting& r) {
  const auto tb = static_cast<std::size_t>(r.token_bytes);
  std::map<int, std::vector<std::byte>> out;
  for (int s = 0; s < r.ranks; ++s) {
    std::vector<std::byte>& buffer = out[s];
    buffer.resize(static_cast<std::size_t>(r.sent_by(s)) * tb);
    std::uint32_t index = 0;
    for (int e = 0; e < r.ranks; ++e) {
      for (std::int64_t t = 0; t < r.at(s, e); ++t, ++index) {
        fill_token(std::span(buffer).subspan(index * tb, tb), kSeed, kLayer,
                   {static_cast<std::uint32_t>(s), index, static_cast<std::uint32_t>(e)});
      }
    }
  }
  return out;
}

// What a direct all-to-all-v of the same routing delivers: at each rank, the blocks of every
// source rank in rank order.
std::map<int, std::vector<std::byte>> direct_alltoallv(
    const TokenRouting& r, const std::map<int, std::vector<std::byte>>& send) {
  const auto tb = static_cast<std::size_t>(r.token_bytes);
  std::map<int, std::vector<std::byte>> out;
  for (int d = 0; d < r.ranks; ++d)
    out[d];
  for (int s = 0; s < r.ranks; ++s) {
    std::size_t at = 0;
    for (int d = 0; d < r.ranks; ++d) {
      const std::size_t bytes = static_cast<std::size_t>(r.at(s, d)) * tb;
      const auto& block = send.at(s);
      out[d].insert(out[d].end(), block.begin() + static_cast<std::ptrdiff_t>(at),
                    block.begin() + static_cast<std::ptrdiff_t>(at + bytes));
      at += bytes;
    }
  }
  return out;
}

// Dispatch and combine over the in-process transport; checks every token at its expert and back
// at its source, and both directions against a direct all-to-all-v.
void check_round_trip(const TokenRouting& r, const RankLayout& layout,
                      const CircuitsInForce& circuits) {
  const auto tb = static_cast<std::size_t>(r.token_bytes);
  InProcessTransport transport;
  const auto send = send_buffers(r);
  const ProxyPlan dispatch = plan_proxy(dispatch_moves(r), layout, circuits, r.token_bytes);
  auto at_expert = run_proxy(dispatch, transport, send);
  EXPECT_EQ(at_expert, direct_alltoallv(r, send));
  std::int64_t tokens = 0;
  for (auto& [rank, buffer] : at_expert) {
    const auto& keys = dispatch.arrivals[static_cast<std::size_t>(rank)];
    ASSERT_EQ(buffer.size(), keys.size() * tb);
    for (std::size_t t = 0; t < keys.size(); ++t) {
      auto token = std::span(buffer).subspan(t * tb, tb);
      const TokenId id{static_cast<std::uint32_t>(keys[t] >> 32),
                       static_cast<std::uint32_t>(keys[t] & 0xFFFFFFFFu),
                       static_cast<std::uint32_t>(rank)};
      EXPECT_EQ(check_token(token, kSeed, kLayer, id, kNotProcessed), "");
      mark_processed(token, static_cast<std::uint32_t>(rank));
      ++tokens;
    }
  }
  std::int64_t routed = 0;
  for (std::int64_t n : r.tokens)
    routed += n;
  EXPECT_EQ(tokens, routed);  // every token once

  const ProxyPlan combine = plan_proxy(combine_moves(r), layout, circuits, r.token_bytes);
  const auto back = run_proxy(combine, transport, at_expert);
  EXPECT_EQ(back, direct_alltoallv(TokenRouting{r.ranks,
                                                [&] {
                                                  std::vector<std::int64_t> t(r.tokens.size());
                                                  for (int i = 0; i < r.ranks; ++i)
                                                    for (int j = 0; j < r.ranks; ++j)
                                                      t[static_cast<std::size_t>(j * r.ranks + i)] =
                                                          r.at(i, j);
                                                  return t;
                                                }(),
                                                r.token_bytes},
                                   at_expert));
  for (int s = 0; s < r.ranks; ++s) {
    std::uint32_t index = 0;
    for (int e = 0; e < r.ranks; ++e) {
      for (std::int64_t t = 0; t < r.at(s, e); ++t, ++index) {
        EXPECT_EQ(check_token(std::span(back.at(s)).subspan(index * tb, tb), kSeed, kLayer,
                              {static_cast<std::uint32_t>(s), index, static_cast<std::uint32_t>(e)},
                              static_cast<std::uint32_t>(e)),
                  "");
      }
    }
  }
}

// 8 ranks on 2 servers of 4; NICs 2 and 3 of each on the OCS.
const RankLayout kTwoServers{8, 2, 2};

CircuitsInForce two_circuits() {
  return {1, {{0, 2, 1, 3}, {0, 3, 1, 2}}};
}

TEST(ProxyAllToAllV, EveryTokenArrivesOnceAtItsExpertAndBackOverCircuits) {
  check_round_trip(random_routing(8, 64, 1), kTwoServers, two_circuits());
}

TEST(ProxyAllToAllV, EveryTokenArrivesOnceOverTheEpsOnly) {
  check_round_trip(random_routing(8, 40, 2), kTwoServers, {});
}

TEST(ProxyAllToAllV, FourServersWithPlannedCircuits) {
  const RankLayout layout{16, 4, 2};
  const TokenRouting r = random_routing(16, 100, 3);
  LocalCircuitSource source(layout, "greedy", Rate::gbps(400));
  const CircuitsInForce circuits = source.request(layer_demand(r, layout));
  EXPECT_FALSE(circuits.circuits.empty());
  check_round_trip(r, layout, circuits);
}

TEST(ProxyAllToAllV, CircuitBytesOnlyBetweenNicsHoldingACircuit) {
  const TokenRouting r = random_routing(8, 64, 4);
  const CircuitsInForce circuits = two_circuits();
  std::set<std::pair<std::pair<int, int>, std::pair<int, int>>> ends;
  for (const auto& c : circuits.circuits) {
    ends.insert({{c.server, c.nic}, {c.peer_server, c.peer_nic}});
    ends.insert({{c.peer_server, c.peer_nic}, {c.server, c.nic}});
  }
  for (const auto& moves : {dispatch_moves(r), combine_moves(r)}) {
    const ProxyPlan plan = plan_proxy(moves, kTwoServers, circuits, r.token_bytes);
    EXPECT_GT(plan.bytes_over(Path::Circuit), 0);
    // Both servers have circuits between them: nothing goes over the EPS.
    EXPECT_EQ(plan.bytes_over(Path::Eps), 0);
    for (const auto& step : plan.steps) {
      for (const Transfer& t : step) {
        const auto from = std::pair{kTwoServers.server_of(t.from), kTwoServers.nic_of(t.from)};
        const auto to = std::pair{kTwoServers.server_of(t.to), kTwoServers.nic_of(t.to)};
        if (t.path == Path::Circuit)
          EXPECT_TRUE(ends.count({from, to})) << t.from << " -> " << t.to;
        else
          EXPECT_EQ(from.first, to.first) << "NVSwitch between servers";
      }
    }
  }
}

TEST(ProxyAllToAllV, WithoutCircuitsEveryInterServerByteGoesOverTheEps) {
  const TokenRouting r = random_routing(8, 64, 5);
  const ProxyPlan plan = plan_proxy(dispatch_moves(r), kTwoServers, {}, r.token_bytes);
  std::int64_t between_servers = 0;
  for (int s = 0; s < 8; ++s)
    for (int d = 0; d < 8; ++d)
      if (kTwoServers.server_of(s) != kTwoServers.server_of(d))
        between_servers += r.at(s, d) * r.token_bytes;
  EXPECT_EQ(plan.bytes_over(Path::Circuit), 0);
  EXPECT_EQ(plan.bytes_over(Path::Eps), between_servers);
  for (const Transfer& t : plan.steps[1]) {
    if (t.path != Path::Eps) continue;
    EXPECT_FALSE(kTwoServers.on_ocs(kTwoServers.nic_of(t.from)));
    EXPECT_FALSE(kTwoServers.on_ocs(kTwoServers.nic_of(t.to)));
  }
}

TEST(ProxyAllToAllV, SamePlanForTheSameInput) {
  const TokenRouting r = random_routing(8, 64, 6);
  const ProxyPlan a = plan_proxy(dispatch_moves(r), kTwoServers, two_circuits(), 64);
  const ProxyPlan b = plan_proxy(dispatch_moves(r), kTwoServers, two_circuits(), 64);
  for (std::size_t s = 0; s < 3; ++s) {
    ASSERT_EQ(a.steps[s].size(), b.steps[s].size());
    for (std::size_t k = 0; k < a.steps[s].size(); ++k)
      EXPECT_EQ(a.steps[s][k].tokens, b.steps[s][k].tokens);
  }
}

TEST(ProxyAllToAllV, RefusesCircuitsOnEpsNicsOrSharedNics) {
  const TokenRouting r = random_routing(8, 64, 7);
  const auto moves = dispatch_moves(r);
  EXPECT_THROW(plan_proxy(moves, kTwoServers, {1, {{0, 0, 1, 3}}}, 64), Error);
  EXPECT_THROW(plan_proxy(moves, kTwoServers, {1, {{0, 2, 1, 3}, {0, 2, 1, 2}}}, 64), Error);
  EXPECT_THROW(plan_proxy(moves, kTwoServers, {1, {{0, 2, 0, 3}}}, 64), Error);
  EXPECT_THROW((RankLayout{8, 3, 1}.validate()), Error);
  EXPECT_THROW((RankLayout{8, 2, 4}.validate()), Error);
}

// Flips one bit of the first message of every step, as a faulty link would.
class CorruptingTransport final : public Transport {
 public:
  bool hosts(int) const override { return true; }
  void exchange(std::span<const Transfer>, std::int64_t,
                std::vector<std::vector<std::byte>>& payloads) override {
    if (!payloads.empty() && payloads[0].size() > 30) payloads[0][30] ^= std::byte{4};
  }
};

TEST(ProxyAllToAllV, AFaultyLinkIsCaughtAtTheExpert) {
  const TokenRouting r = random_routing(8, 64, 8);
  const ProxyPlan plan = plan_proxy(dispatch_moves(r), kTwoServers, two_circuits(), 64);
  CorruptingTransport transport;
  const auto received = run_proxy(plan, transport, send_buffers(r));
  int wrong = 0;
  for (const auto& [rank, buffer] : received) {
    const auto& keys = plan.arrivals[static_cast<std::size_t>(rank)];
    for (std::size_t t = 0; t < keys.size(); ++t) {
      const TokenId id{static_cast<std::uint32_t>(keys[t] >> 32),
                       static_cast<std::uint32_t>(keys[t] & 0xFFFFFFFFu),
                       static_cast<std::uint32_t>(rank)};
      if (!check_token(std::span(buffer).subspan(t * 64, 64), kSeed, kLayer, id, kNotProcessed)
               .empty())
        ++wrong;
    }
  }
  EXPECT_GE(wrong, 1);
  EXPECT_LE(wrong, 3);  // one per step at most
}

TEST(TokenPayload, DetectsACorruptedByte) {
  std::vector<std::byte> token(64);
  fill_token(token, kSeed, kLayer, {1, 2, 3});
  EXPECT_EQ(check_token(token, kSeed, kLayer, {1, 2, 3}, kNotProcessed), "");
  token[40] ^= std::byte{1};
  EXPECT_NE(check_token(token, kSeed, kLayer, {1, 2, 3}, kNotProcessed), "");
  fill_token(token, kSeed, kLayer, {1, 2, 3});
  EXPECT_NE(check_token(token, kSeed, kLayer, {1, 4, 3}, kNotProcessed), "");
  EXPECT_NE(check_token(token, kSeed, kLayer, {1, 2, 3}, 3), "");
}

// A source that hands out a new generation on every request, recording the demands.
class CountingSource final : public CircuitSource {
 public:
  CircuitsInForce request(const control::ServerDemand&) override {
    ++requests;
    CircuitsInForce c{static_cast<std::uint64_t>(requests), {}};
    if (requests % 2 == 1) c.circuits.push_back({0, 2, 1, 3});
    return c;
  }
  int requests = 0;
};

TEST(LayerCircuitSchedule, BlockWaitsForEachLayersCircuits) {
  CountingSource source;
  LayerCircuitSchedule schedule(source, CircuitPolicy::Block);
  const control::ServerDemand demand(2);
  const LayerCircuits first = schedule.before_layer(demand);
  EXPECT_EQ(first.circuits.circuits.size(), 1u);
  EXPECT_TRUE(first.reconfigured);
  EXPECT_TRUE(first.waited);
  schedule.after_layer(demand);
  const LayerCircuits second = schedule.before_layer(demand);
  EXPECT_TRUE(second.circuits.circuits.empty());
  EXPECT_TRUE(second.reconfigured);
  EXPECT_EQ(source.requests, 2);
}

TEST(LayerCircuitSchedule, ReusePreviousRunsOnThePreviousLayersCircuits) {
  CountingSource source;
  LayerCircuitSchedule schedule(source, CircuitPolicy::ReusePrevious);
  const control::ServerDemand demand(2);
  const LayerCircuits first = schedule.before_layer(demand);
  EXPECT_TRUE(first.circuits.circuits.empty());  // nothing planned before the first layer
  EXPECT_FALSE(first.waited);
  schedule.after_layer(demand);
  const LayerCircuits second = schedule.before_layer(demand);
  EXPECT_EQ(second.circuits.circuits.size(), 1u);
  EXPECT_TRUE(second.reconfigured);
  EXPECT_FALSE(second.waited);
  EXPECT_EQ(CircuitPolicy::Block, circuit_policy_from("block"));
  EXPECT_THROW(circuit_policy_from("eager"), Error);
}

// A source with circuits in force before the run, as a controller may have from an earlier job.
class SourceWithCircuitsInForce final : public CircuitSource {
 public:
  CircuitsInForce request(const control::ServerDemand&) override { return {8, {}}; }
  CircuitsInForce current() override { return {7, {{0, 2, 1, 3}}}; }
};

TEST(LayerCircuitSchedule, ReusePreviousRunsTheFirstLayerOnTheCircuitsInForce) {
  SourceWithCircuitsInForce source;
  LayerCircuitSchedule schedule(source, CircuitPolicy::ReusePrevious);
  const control::ServerDemand demand(2);
  const LayerCircuits first = schedule.before_layer(demand);
  EXPECT_EQ(first.circuits.generation, 7u);
  EXPECT_EQ(first.circuits.circuits.size(), 1u);
  EXPECT_FALSE(first.reconfigured);
  schedule.after_layer(demand);
  const LayerCircuits second = schedule.before_layer(demand);
  EXPECT_EQ(second.circuits.generation, 8u);
  EXPECT_TRUE(second.reconfigured);
}

}  // namespace
}  // namespace mfabric::runtime
