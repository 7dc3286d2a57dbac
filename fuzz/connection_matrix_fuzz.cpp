// htsim connection matrices (workload::read_connection_matrix, docs/formats.md): the text, then
// the task graph its triggers make.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "workload/connection_matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::string path = fuzz::write_scratch("traffic.cm", fuzz::as_text(data, size));
  fuzz::expect_only_mfabric_errors([&] {
    const workload::ConnectionMatrix cm = workload::read_connection_matrix(path);
    const workload::TaskGraph g = workload::connection_matrix_graph(cm, path);
    // Every dependency comes first, and every flow is one task.
    if (g.size() != cm.flows.size()) __builtin_trap();
    for (workload::TaskId t = 0; t < static_cast<workload::TaskId>(g.size()); ++t) {
      for (workload::TaskId d : g.deps(t)) {
        if (d >= t) __builtin_trap();
      }
    }
  });
  return 0;
}
