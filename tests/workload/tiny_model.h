// A model small enough to count every task of its training graph by hand: 4 layers (the first
// dense), 4 experts top-2. Shared by the workload and control tests.
#pragma once

#include "workload/compute.h"
#include "workload/model.h"
#include "workload/training.h"

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

// A training job of the tiny model on H800s: sequences of `seq` tokens, `micro_batch` per
// micro-batch, `global_batch` per iteration.
inline TrainingSpec tiny_job(const ParallelismSpec& parallelism, int gpus_per_server,
                             int micro_batch, int seq, int global_batch) {
  TrainingSpec spec;
  spec.model = tiny_model();
  spec.parallelism = parallelism;
  spec.gpus_per_server = gpus_per_server;
  spec.micro_batch = micro_batch;
  spec.seq = seq;
  spec.global_batch = global_batch;
  spec.gpu = find_gpu("h800");
  return spec;
}

}  // namespace mfabric::workload::testing
