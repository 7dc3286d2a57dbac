// Model YAML (workload::load_model on a .yaml file, docs/workload.md "Model files"), and the
// parameter counts every command derives from a loaded model. The input's repeat markers are
// expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "workload/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<std::string> path =
      mfabric::fuzz::expanded_scratch_file("model.yaml", data, size);
  if (!path) return -1;
  mfabric::fuzz::expect_only_mfabric_errors([&] {
    const mfabric::workload::ModelSpec m = mfabric::workload::load_model(*path);
    // A model that loads is valid: its counts must not overflow (UBSan) for any layer kind.
    volatile std::int64_t sink = m.total_params() + m.attention_params_per_layer() +
                                 m.expert_params() + m.shared_expert_params() +
                                 m.dense_ffn_params() + m.router_params();
    (void)sink;
  });
  return 0;
}
