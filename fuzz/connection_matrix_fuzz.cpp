// htsim connection matrices (workload::read_connection_matrix, docs/formats.md): the text, then
// the task graph its triggers make. The input's repeat markers are expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "workload/connection_matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path = fuzz::expanded_scratch_file("traffic.cm", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const workload::ConnectionMatrix cm = workload::read_connection_matrix(*path);
    const workload::TaskGraph g = workload::connection_matrix_graph(cm, *path);
    // Every dependency comes first; every flow is one P2P task, and the only other tasks are
    // the barriers that several flows fire and several wait for (a zero-byte barrier of one
    // GPU each); the dependencies are at most one per fired trigger and one per waiting flow
    // (a barrier's firing plus waiting flows, never their product).
    if (g.size() != static_cast<std::size_t>(cm.tasks)) __builtin_trap();
    std::size_t p2p = 0;
    std::size_t fired = 0;
    std::size_t dependencies = 0;
    for (const workload::CmFlow& f : cm.flows)
      fired += f.fires.size() + (f.trigger != 0 ? 1 : 0);
    for (workload::TaskId t = 0; t < static_cast<workload::TaskId>(g.size()); ++t) {
      const workload::Task& task = g.task(t);
      if (task.kind == workload::TaskKind::P2P) {
        ++p2p;
      } else if (task.kind != workload::TaskKind::Collective ||
                 task.collective != workload::CollectiveKind::Barrier ||
                 g.group(task.group()).size() != 1 || task.bytes().count() != 0 ||
                 g.deps(t).size() < 2) {
        __builtin_trap();
      }
      for (workload::TaskId d : g.deps(t)) {
        if (d >= t) __builtin_trap();
      }
      dependencies += g.deps(t).size();
    }
    if (p2p != cm.flows.size()) __builtin_trap();
    if (dependencies != static_cast<std::size_t>(cm.dependencies) || dependencies > fired) {
      __builtin_trap();
    }
  });
  return 0;
}
