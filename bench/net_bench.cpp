// Throughput of the flow backend (src/net/flow/flow_backend.h): transfers and events simulated per
// second of wall time, on the workloads docs/network.md reports.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <queue>
#include <vector>

#include "core/rng.h"
#include "fabric/builders.h"
#include "net/flow/flow_backend.h"
#include "net/flow/max_min_solver.h"

namespace {

using mfabric::Bytes;
using mfabric::Rate;
using mfabric::Rng;
using mfabric::Time;
using mfabric::fabric::ClusterSpec;
using mfabric::fabric::NodeId;
using mfabric::fabric::Topology;
using mfabric::net::FlowBackend;
using mfabric::net::Transfer;
using mfabric::net::TransferId;

// 1024 GPUs: 128 servers of 8 GPUs and 8 NICs at 400G; radix-64 fat-tree (32 leaves, 32 spines).
const Topology& cluster_1024() {
  static const Topology t = [] {
    ClusterSpec c;
    c.servers = 128;
    c.link = Rate::gbps(400);
    return mfabric::fabric::build_fabric("fat-tree", c);
  }();
  return t;
}

NodeId gpu(const Topology& t, int g) {
  const int per = t.cluster().gpus_per_server;
  return t.gpu(g / per, g % per);
}

Transfer make(NodeId src, NodeId dst, std::int64_t bytes, std::uint64_t hash) {
  Transfer tr;
  tr.src = src;
  tr.dst = dst;
  tr.size = Bytes(bytes);
  tr.flow_hash = hash;
  return tr;
}

void run_to_idle(FlowBackend& net) {
  while (const auto t = net.next_event_time())
    net.advance(*t);
}

void report(benchmark::State& state, std::int64_t transfers, std::int64_t events,
            const FlowBackend* last) {
  state.counters["transfers/s"] =
      benchmark::Counter(static_cast<double>(transfers), benchmark::Counter::kIsRate);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  if (!last) return;
  // How much work one recomputation does: flows re-filled (the set V, docs/network.md), flows
  // whose rate actually changed, and water-fillings run (V may grow and be re-filled).
  const auto s = last->solver_stats();
  const double per = s.recomputations ? 1.0 / static_cast<double>(s.recomputations) : 0.0;
  state.counters["recomputes"] = static_cast<double>(s.recomputations);
  state.counters["V/recompute"] = static_cast<double>(s.flows_recomputed) * per;
  state.counters["changed/recompute"] = static_cast<double>(s.rates_changed) * per;
  state.counters["fills/recompute"] = static_cast<double>(s.water_fills) * per;
}

// (a) N transfers of different sizes from N GPUs through one NIC's cable: every completion
// changes the rate of all the others.
void BM_FlowsOnOneLink(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  ClusterSpec c;
  c.servers = 2;
  c.gpus_per_server = n;
  c.nics_per_server = 1;
  c.numa_nodes = 1;
  const Topology t = mfabric::fabric::build_fabric("fat-tree", c);
  std::int64_t transfers = 0, events = 0;
  std::unique_ptr<FlowBackend> net;
  for (auto _ : state) {
    net = std::make_unique<FlowBackend>(t);
    for (int k = 0; k < n; ++k) {
      net->start(make(t.gpu(0, k), t.gpu(1, k), 1'000'000 + 1000LL * k, 0), nullptr);
    }
    run_to_idle(*net);
    transfers += n;
    events += net->events_processed();
  }
  report(state, transfers, events, net.get());
}
BENCHMARK(BM_FlowsOnOneLink)->Arg(16)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

// (b) All-to-all among 64 GPUs (servers 0-7) on the 1024-GPU fat-tree, 4032 transfers of
// 0.5-1.5 MB each, repeated `range(0)` times back to back.
void BM_AllToAll64(benchmark::State& state) {
  const Topology& t = cluster_1024();
  const int repeats = static_cast<int>(state.range(0));
  std::int64_t transfers = 0, events = 0;
  std::unique_ptr<FlowBackend> net;
  for (auto _ : state) {
    net = std::make_unique<FlowBackend>(t);
    Rng rng(1);
    for (int r = 0; r < repeats; ++r) {
      for (int s = 0; s < 64; ++s) {
        for (int d = 0; d < 64; ++d) {
          if (s == d) continue;
          const auto bytes = static_cast<std::int64_t>(500'000 + rng.uniform() * 1'000'000);
          net->start(make(gpu(t, s), gpu(t, d), bytes, rng.next_u64()), nullptr);
          ++transfers;
        }
      }
      run_to_idle(*net);
    }
    events += net->events_processed();
  }
  report(state, transfers, events, net.get());
}
BENCHMARK(BM_AllToAll64)->Arg(10)->Unit(benchmark::kMillisecond);

// (c) Random permutations on the 1024-GPU fat-tree, closed loop: each GPU sends 0.1-10 MB to the
// next GPU of its own random sequence as soon as its previous transfer is done, 98 transfers
// per GPU (100,352 in all), about 1024 active at once.
void BM_RandomPermutation(benchmark::State& state) {
  const Topology& t = cluster_1024();
  constexpr int kGpus = 1024;
  const int waves = static_cast<int>(state.range(0));
  std::vector<std::vector<int>> dest(static_cast<std::size_t>(waves));
  {
    Rng rng(7);
    for (auto& p : dest) {
      p.resize(kGpus);
      std::iota(p.begin(), p.end(), 0);
      for (int i = kGpus - 1; i > 0; --i) {
        std::swap(p[static_cast<std::size_t>(i)], p[rng.below(static_cast<std::uint64_t>(i) + 1)]);
      }
    }
  }
  std::int64_t transfers = 0, events = 0;
  std::unique_ptr<FlowBackend> net;
  for (auto _ : state) {
    net = std::make_unique<FlowBackend>(t);
    Rng rng(3);
    std::vector<int> wave(kGpus, 0);
    std::function<void(int)> send = [&](int g) {
      const int w = wave[static_cast<std::size_t>(g)]++;
      if (w >= waves) return;
      const auto bytes = static_cast<std::int64_t>(100'000 + rng.uniform() * 9'900'000);
      net->start(
          make(gpu(t, g), gpu(t, dest[static_cast<std::size_t>(w)][static_cast<std::size_t>(g)]),
               bytes, static_cast<std::uint64_t>(w) * kGpus + static_cast<std::uint64_t>(g)),
          [&send, g](TransferId, Time) { send(g); });
      ++transfers;
    };
    for (int g = 0; g < kGpus; ++g)
      send(g);
    run_to_idle(*net);
    events += net->events_processed();
  }
  report(state, transfers, events, net.get());
}
BENCHMARK(BM_RandomPermutation)->Arg(98)->Unit(benchmark::kMillisecond);

// (d) The shape of Mixtral 8x22B's expert traffic on 1024 GPUs (TP 8, EP 8, DP 2, PP 8): 16
// regions of 8 servers; in each, 8 all-to-alls run together (one per rail: GPU k of the 8
// servers), 56 transfers each, skewed sizes averaging ~3 MB; a region starts its next round
// 1 ms of "compute" after the previous one is done. range(0) rounds per region (224 = one
// iteration's 7 layers x 8 micro-batches x 4 all-to-alls).
void BM_MixtralExpertTraffic(benchmark::State& state) {
  const Topology& t = cluster_1024();
  const int rounds = static_cast<int>(state.range(0));
  constexpr int kRegions = 16;
  std::int64_t transfers = 0, events = 0;
  std::unique_ptr<FlowBackend> net;
  for (auto _ : state) {
    net = std::make_unique<FlowBackend>(t);
    Rng rng(11);
    std::vector<int> round(kRegions, 0);
    std::vector<int> outstanding(kRegions, 0);
    using Timer = std::pair<std::int64_t, int>;  // (time ps, region)
    std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
    std::function<void(int)> start_round = [&](int g) {
      // One 8x8 byte matrix per round, shared by the 8 rails (the TP ranks see the same tokens).
      double m[8][8];
      for (auto& row : m) {
        for (double& v : row) {
          const double u = rng.uniform();
          v = 3.1e6 * (0.3 + 2.1 * u * u);
        }
      }
      for (int k = 0; k < 8; ++k) {
        for (int i = 0; i < 8; ++i) {
          for (int j = 0; j < 8; ++j) {
            if (i == j) continue;
            const NodeId src = t.gpu(8 * g + i, k);
            const NodeId dst = t.gpu(8 * g + j, k);
            ++outstanding[static_cast<std::size_t>(g)];
            net->start(make(src, dst, static_cast<std::int64_t>(m[i][j]), rng.next_u64()),
                       [&, g](TransferId, Time at) {
                         if (--outstanding[static_cast<std::size_t>(g)] == 0 &&
                             ++round[static_cast<std::size_t>(g)] < rounds) {
                           timers.push({at.ps() + 1'000'000'000, g});
                         }
                       });
            ++transfers;
          }
        }
      }
    };
    for (int g = 0; g < kRegions; ++g)
      timers.push({static_cast<std::int64_t>(g) * 50'000'000, g});
    for (;;) {
      const auto next = net->next_event_time();
      if (!timers.empty() && (!next || timers.top().first <= next->ps())) {
        const Timer tm = timers.top();
        timers.pop();
        net->advance(Time::picoseconds(tm.first));
        start_round(tm.second);
      } else if (next) {
        net->advance(*next);
      } else {
        break;
      }
    }
    events += net->events_processed();
  }
  report(state, transfers, events, net.get());
}
BENCHMARK(BM_MixtralExpertTraffic)->Arg(28)->Arg(224)->Unit(benchmark::kMillisecond);

// The max-min solver alone (net/flow/max_min_solver.h): state.range(0) flows of 2 to 6 channels
// each, drawn from 1,024 channels of 1 to 100 Gb/s, solved from scratch every iteration.
void BM_MaxMinSolver(benchmark::State& state) {
  namespace flow = mfabric::net::flow;
  constexpr std::int32_t kStride = 6;
  constexpr std::size_t kChannels = 1024;
  const auto flows = static_cast<std::size_t>(state.range(0));
  Rng rng(11);
  std::vector<flow::Hot> hot(flows);
  std::vector<flow::Chan> chans(kChannels);
  std::vector<std::vector<std::int32_t>> on(kChannels);
  std::vector<mfabric::net::ChannelId> path(flows * kStride);
  std::int32_t stride = kStride;
  mfabric::net::SolverStats stats;
  flow::MaxMinSolver solver(hot, chans, on, path, stride, stats);
  solver.resize_channels(kChannels);
  for (flow::Chan& c : chans)
    c.cap = 1e9 * static_cast<double>(1 + rng.below(100));
  for (std::size_t f = 0; f < flows; ++f) {
    hot[f].len = 2 + static_cast<std::int32_t>(rng.below(kStride - 1));
    hot[f].state = flow::FlowState::Active;
    for (std::int32_t i = 0; i < hot[f].len; ++i) {
      const auto c = static_cast<mfabric::net::ChannelId>(rng.below(kChannels));
      path[f * kStride + static_cast<std::size_t>(i)] = c;
      on[static_cast<std::size_t>(c)].push_back(static_cast<std::int32_t>(f));
    }
  }
  std::vector<mfabric::net::ChannelId> every(kChannels);
  std::iota(every.begin(), every.end(), 0);
  for (auto _ : state) {
    for (flow::Hot& f : hot) {
      f.rate = 0;
      f.fresh = true;
    }
    for (flow::Chan& c : chans)
      c.load = 0;
    solver.gather(every, 0.0);
    solver.solve(0.0);
    benchmark::DoNotOptimize(hot.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * flows));
}
BENCHMARK(BM_MaxMinSolver)->Arg(1000)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
