// A model small enough to count every task of its training graph by hand: 4 layers (the first
// dense), 4 experts top-2. Shared by the workload and control tests.
#pragma once

#include "workload/model.h"

namespace mfabric::workload::testing {

// Its model file, for tests that write one.
inline constexpr const char* kTinyModelYaml = R"(name: tiny
layers: 4
hidden: 64
attention: {kind: mha, heads: 4}
ffn_dense: 128
ffn_expert: 32
experts: 4
top_k: 2
dense_layers: 1
vocab: 1000
)";

inline ModelSpec tiny_model() {
  return parse_model(kTinyModelYaml, "tiny.yaml");
}

}  // namespace mfabric::workload::testing
