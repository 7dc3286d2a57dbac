// Chakra execution traces (MLCommons): one file per rank, "<prefix>.<rank>.et", a stream of
// varint32-length-delimited protobuf messages (GlobalMetadata first, then Nodes), optionally
// gzip-compressed. Schema: src/workload/chakra/et_def.proto, written from the published format
// (docs/formats.md).
#pragma once

#include <string>

#include "workload/compute.h"
#include "workload/task_graph.h"

namespace mfabric::workload {

struct ChakraSummary {
  int ranks = 0;
  std::int64_t compute = 0;
  std::int64_t collective = 0;
  std::int64_t send = 0;
  std::int64_t recv = 0;
  std::int64_t other = 0;  // metadata, memory load/store, invalid
};

struct ChakraOptions {
  // Used for COMP nodes without duration_micros but with num_ops (roofline on peak x efficiency).
  GpuSpec gpu;
  double efficiency = 0.5;
};

// Reads <prefix>.0.et, <prefix>.1.et, ... (stops at the first missing rank; at least one must
// exist). Throws mfabric::Error naming the file and node on malformed or truncated input.
TaskGraph read_chakra(const std::string& prefix, const ChakraOptions& options,
                      ChakraSummary* summary = nullptr);

}  // namespace mfabric::workload
