// How long it takes to build a fabric and count its bill of materials, from the paper's
// 128-server setup to its 4096-server scale study (32,768 GPUs).
#include <benchmark/benchmark.h>

#include "fabric/builders.h"
#include "fabric/cost.h"

namespace {

using mfabric::fabric::ClusterSpec;

void build(benchmark::State& state, const char* fabric) {
  ClusterSpec cluster;
  cluster.servers = static_cast<int>(state.range(0));
  std::size_t links = 0;
  for (auto _ : state) {
    auto t = mfabric::fabric::build_fabric(fabric, cluster);
    links = t.links().size();
    benchmark::DoNotOptimize(links);
  }
  state.counters["links"] = static_cast<double>(links);
  state.counters["servers"] = static_cast<double>(cluster.servers);
}

void BM_BuildFatTree(benchmark::State& s) {
  build(s, "fat-tree");
}
void BM_BuildRailOptimized(benchmark::State& s) {
  build(s, "rail-optimized");
}
void BM_BuildMfabric(benchmark::State& s) {
  build(s, "mfabric");
}
void BM_BuildTopoOpt(benchmark::State& s) {
  build(s, "topoopt");
}

BENCHMARK(BM_BuildFatTree)->Arg(128)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildRailOptimized)->Arg(128)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildMfabric)->Arg(128)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildTopoOpt)->Arg(128)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_CountBillOfMaterials(benchmark::State& state) {
  ClusterSpec cluster;
  cluster.servers = static_cast<int>(state.range(0));
  const auto t = mfabric::fabric::build_fabric("fat-tree", cluster);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mfabric::fabric::count_bill_of_materials(t));
  }
}
BENCHMARK(BM_CountBillOfMaterials)->Arg(128)->Arg(4096)->Unit(benchmark::kMicrosecond);

}  // namespace
