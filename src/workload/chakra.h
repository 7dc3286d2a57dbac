// Chakra execution traces (MLCommons): one file per rank, "<prefix>.<rank>.et", a stream of
// varint-length-delimited protobuf messages (GlobalMetadata first, then Nodes), optionally
// gzip-compressed. Schema: src/workload/chakra/et_def.proto, written from the published format
// (docs/formats.md). Conventions (send/receive, collective sizes, process groups, control
// dependencies, limits) are in docs/chakra.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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
  // Control dependencies the reader did not keep (see ControlDeps): naming a node that is not in
  // the file (relaxed), closing a cycle (relaxed), or all of them (ignore).
  std::int64_t dangling_control_deps = 0;
  std::int64_t cyclic_control_deps = 0;
  std::int64_t ignored_control_deps = 0;
};

// What to do with a node's ctrl_deps. Data dependencies are always kept, and a node depending on
// a missing node or a cycle among data dependencies is always an error.
enum class ControlDeps : std::uint8_t {
  Strict,   // kept; one naming a missing node, or a cycle through them, is an error
  Relaxed,  // kept, except those naming a missing node or closing a cycle: dropped and counted
  Ignore,   // all dropped (as the mlcommons reference feeder does)
};

const char* to_string(ControlDeps c);
// "strict", "relaxed" or "ignore"; throws mfabric::Error without a location otherwise (the
// caller names its option or field).
ControlDeps parse_control_deps(std::string_view text);

// Caps that keep hostile files from exhausting time or memory (docs/chakra.md, "Limits").
struct ChakraLimits {
  // Bytes of one rank's decoded (decompressed) stream, counted as they are read.
  std::int64_t max_rank_bytes = std::int64_t{1} << 30;
  // Bytes of one message (GlobalMetadata or Node) without its length prefix.
  std::int64_t max_message_bytes = std::int64_t{64} << 20;
  // Estimated memory of the whole trace while it is converted (kChakraBytesPerNode, ...),
  // counted as nodes are read; the same default as a generated job's (training.h).
  std::int64_t max_memory = std::int64_t{8} << 30;
};

// What the reader holds, about, for each node, each dependency and each entry of an integer
// list attribute (measured: a chain of 1.6 million nodes takes 1.2 GB).
inline constexpr std::int64_t kChakraBytesPerNode = 700;
inline constexpr std::int64_t kChakraBytesPerDependency = 64;
inline constexpr std::int64_t kChakraBytesPerListEntry = 8;

// The largest amount of data one collective or transfer may move (2^50 bytes, 1 PiB): far above
// any real buffer, far below where byte counts and transfer times overflow.
inline constexpr std::int64_t kMaxChakraCommBytes = std::int64_t{1} << 50;
// The largest compute time of one rank (the sum over its compute nodes), in seconds: about 11.6
// days, well inside what Time represents (2^63 ps, about 106 days).
inline constexpr double kMaxChakraRankComputeSeconds = 1e6;

struct ChakraOptions {
  // Used for COMP nodes without duration_micros but with num_ops (roofline on peak x efficiency).
  GpuSpec gpu;
  double efficiency = 0.5;
  ControlDeps control_deps = ControlDeps::Relaxed;
  // ASTRA-sim communicator-group file (--comm-group-configuration): {"0": [0, 1], "1": [2, 3]},
  // the members of each numeric pg_name. Empty: none.
  std::string comm_groups;
  ChakraLimits limits;
};

// Reads <prefix>.0.et, <prefix>.1.et, ... (stops at the first missing rank; at least one must
// exist). Throws mfabric::Error naming the file and node on malformed or truncated input.
TaskGraph read_chakra(const std::string& prefix, const ChakraOptions& options,
                      ChakraSummary* summary = nullptr);

}  // namespace mfabric::workload
