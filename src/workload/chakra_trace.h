// The Chakra reader's per-rank view of a trace: plain nodes decoded from the messages, their
// dependencies resolved under the control-dependency policy, in topological order. Internal to
// the reader: chakra_nodes.cpp decodes, chakra_order.cpp orders, chakra_units.h matches ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workload/chakra.h"
#include "workload/chakra/et_def.pb.h"
#include "workload/chakra_groups.h"

namespace mfabric::workload::chakra {

namespace pb = ChakraProtoMsg;

struct RawNode {
  std::uint64_t id = 0;
  std::string name;
  int type = pb::INVALID_NODE;  // an int: proto3 enums are open, unknown values are "other"
  // Data dependencies first (dep_ids[0, data_deps)), then control dependencies that are not also
  // data dependencies; each part sorted and without repeats.
  std::vector<std::uint64_t> dep_ids;
  std::uint32_t data_deps = 0;
  std::uint64_t duration_micros = 0;
  bool is_cpu_op = false;
  std::optional<double> num_ops;
  std::optional<std::int64_t> comm_type;
  std::optional<std::int64_t> comm_size;
  std::optional<std::int64_t> comm_src;
  std::optional<std::int64_t> comm_dst;
  std::optional<std::int64_t> comm_tag;
  std::string pg_name;
  std::optional<std::vector<std::int64_t>> send_bytes;  // send_bytes_per_rank
};

struct RankTrace {
  std::string file;
  std::vector<RawNode> nodes;
  // Kept dependencies of node i (node indices): deps[dep_begin[i], dep_begin[i + 1]).
  std::vector<std::size_t> dep_begin;
  std::vector<std::size_t> deps;
  std::vector<std::size_t> order;  // node indices in topological order
  // "pg_ranks:<pg_name>" attributes of the GlobalMetadata (mfabric's convention), checked.
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> pg_ranks;
  // Groups described by PyTorch's "## process_group:init ##" metadata nodes.
  std::vector<PytorchGroup> pytorch_groups;

  std::pair<const std::size_t*, const std::size_t*> deps_of(std::size_t i) const {
    return {deps.data() + dep_begin[i], deps.data() + dep_begin[i + 1]};
  }
};

// "node 12 (name)", or "node 12" without a name.
std::string describe(const RawNode& n);

// The memory estimate of the whole trace, checked against ChakraLimits::max_memory as nodes
// arrive, so that reading stops before the memory is taken.
struct MemoryEstimate {
  std::int64_t used = 0;
  std::int64_t limit = 0;
};

// Reads one rank file of a trace of `ranks` ranks: decodes every message (chakra_nodes.cpp),
// then resolves and orders the dependencies (resolve_dependencies). Counts nodes by type and
// dropped control dependencies in `summary`, and what it holds in `memory`.
RankTrace read_rank(const std::string& file, int ranks, const ChakraOptions& options,
                    ChakraSummary& summary, MemoryEstimate& memory);

// Maps dependency ids to node indices under the control-dependency policy and fills
// rank.dep_begin, rank.deps and rank.order (smallest id first among ready nodes). Throws
// mfabric::Error naming the file and node for a missing data dependency, a data cycle, and in
// strict mode a missing control dependency or any cycle.
void resolve_dependencies(RankTrace& rank, ControlDeps policy, ChakraSummary& summary);

// Names a cycle in a graph given as "deps of v" over the vertices `stuck` (each of which has at
// least one dependency inside `stuck`, which is what Kahn's algorithm leaves behind). Returns the
// cycle in execution order, each element before the next and the last before the first,
// starting at the smallest vertex.
std::vector<std::size_t> find_cycle(
    const std::vector<char>& stuck,
    const std::function<std::vector<std::size_t>(std::size_t)>& deps);

}  // namespace mfabric::workload::chakra
