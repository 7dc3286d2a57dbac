// Chakra trace reader: rank files -> per-rank nodes (chakra_nodes.cpp, chakra_order.cpp) ->
// process groups (chakra_groups.cpp) -> matched communication (chakra_collectives.cpp,
// chakra_p2p.cpp; the single nodes here) -> one TaskGraph (chakra_assembly.cpp). This file checks
// the options and runs the passes. Conventions (matching, send/receive, sizes, membership,
// traffic classes) are documented in docs/chakra.md; the reader follows that document.
#include "workload/chakra.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload/chakra_groups.h"
#include "workload/chakra_trace.h"
#include "workload/chakra_units.h"

namespace mfabric::workload {
namespace {

using chakra::describe;
using chakra::NodeRef;
using chakra::RankTrace;
using chakra::RawNode;
using chakra::Unit;
using chakra::UnitTable;
namespace pb = ChakraProtoMsg;

// A compute node's time on rank `rank`, counted into the rank's compute time (`total`), which is
// capped.
Time compute_time(const RawNode& n, const std::string& file_name, const ChakraOptions& options,
                  double& total) {
  // Host-side ops overlap the GPU kernels they launch; charging their time to the GPU would
  // serialise host time onto it (see docs/chakra.md).
  if (n.is_cpu_op) return Time::zero();
  double seconds = 0;
  if (n.duration_micros > 0) {
    seconds = static_cast<double>(n.duration_micros) * 1e-6;
  } else if (n.num_ops && options.gpu.peak_bf16_flops > 0) {
    seconds = *n.num_ops / (options.gpu.peak_bf16_flops * options.efficiency);
  }
  total += seconds;
  if (!(total <= kMaxChakraRankComputeSeconds)) {
    throw Error(file_name, describe(n),
                fmt::format("the rank's compute time reaches {:.6g} s here, more than the "
                            "{:.0f} s (about 11.6 days) mfabric simulates per rank",
                            total, kMaxChakraRankComputeSeconds));
  }
  if (n.duration_micros > 0) {
    return Time::microseconds(static_cast<std::int64_t>(n.duration_micros));
  }
  return Time::from_seconds(seconds);
}

// The last pass of matching (chakra_units.h): every node no collective or transfer took becomes
// a task of its own on its rank: compute nodes with their time, the others (receives, metadata,
// memory) in zero time, so that dependencies through them still hold.
void add_single_nodes(UnitTable& table, const ChakraOptions& options) {
  for (int r = 0; r < table.rank_count(); ++r) {
    const RankTrace& rank = table.rank(r);
    double compute_seconds = 0;  // the rank's, for the cap
    for (std::size_t i : rank.order) {
      if (table.unit_of(r, i) != UnitTable::kNone) continue;
      const RawNode& n = rank.nodes[i];
      Unit unit;
      unit.nodes = {NodeRef{r, i}};
      unit.task.kind = TaskKind::Compute;
      unit.task.set_gpu(r);
      if (n.type == pb::COMP_NODE)
        unit.task.set_duration(compute_time(n, rank.file, options, compute_seconds));
      table.assign(std::move(unit));
    }
  }
}

void check_options(const ChakraOptions& options) {
  if (!(options.efficiency > 0 && options.efficiency <= 1)) {
    throw Error("", "efficiency",
                fmt::format("expected a fraction of peak in (0, 1], got {}", options.efficiency));
  }
  if (!(options.gpu.peak_bf16_flops >= 0) || !std::isfinite(options.gpu.peak_bf16_flops)) {
    throw Error("", "gpu", "peak FLOP/s must be a non-negative number");
  }
  const ChakraLimits& l = options.limits;
  const auto positive = [](std::int64_t v, const char* field, std::int64_t max) {
    if (v < 1 || v > max) {
      throw Error("", field, fmt::format("expected a value in 1..{}, got {}", max, v));
    }
  };
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  positive(l.max_rank_bytes, "limits.max_rank_bytes", kInt64Max);
  // protobuf counts a message's bytes in an int.
  positive(l.max_message_bytes, "limits.max_message_bytes", std::numeric_limits<int>::max() - 16);
  positive(l.max_memory, "limits.max_memory", kInt64Max);
}

// Members of named groups, in precedence order: mfabric's GlobalMetadata attributes, the
// communicator-group file, PyTorch's metadata nodes.
chakra::ProcessGroups process_groups(const std::vector<RankTrace>& ranks,
                                     const ChakraOptions& options) {
  using Kind = chakra::GroupDeclaration::Kind;
  const int n = static_cast<int>(ranks.size());
  chakra::ProcessGroups groups;
  for (const RankTrace& rank : ranks) {
    for (const auto& [pg, members] : rank.pg_ranks) {
      groups.declare(pg, {Kind::GlobalMetadata, members, rank.file,
                          "GlobalMetadata: attribute 'pg_ranks:" + pg + "'"});
    }
  }
  if (!options.comm_groups.empty()) {
    for (auto& [key, members] : chakra::read_comm_groups(options.comm_groups, n)) {
      groups.declare(key, {Kind::CommGroupFile, std::move(members), options.comm_groups,
                           fmt::format("group \"{}\"", key)});
    }
  }
  std::vector<std::int32_t> everyone(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    everyone[static_cast<std::size_t>(r)] = r;
  for (const RankTrace& rank : ranks) {
    for (const chakra::PytorchGroup& g : rank.pytorch_groups) {
      groups.declare(g.pg_name,
                     {Kind::PytorchMetadata, g.ranks.empty() ? everyone : g.ranks, rank.file,
                      fmt::format("{}: process group \"{}\"", g.node, g.pg_name)});
      groups.describe(g.pg_name, g.pg_desc);
    }
  }
  return groups;
}

}  // namespace

const char* to_string(ControlDeps c) {
  switch (c) {
    case ControlDeps::Strict:
      return "strict";
    case ControlDeps::Relaxed:
      return "relaxed";
    case ControlDeps::Ignore:
      return "ignore";
  }
  return "?";
}

ControlDeps parse_control_deps(std::string_view text) {
  for (ControlDeps c : {ControlDeps::Strict, ControlDeps::Relaxed, ControlDeps::Ignore}) {
    if (text == to_string(c)) return c;
  }
  throw Error("", "",
              fmt::format("unknown control-dependency policy '{}' (known: strict, relaxed, "
                          "ignore)",
                          text));
}

TaskGraph read_chakra(const std::string& prefix, const ChakraOptions& options,
                      ChakraSummary* summary) {
  check_options(options);
  // Ranks are counted before any file is read: lists in the files (group members, bytes per
  // rank) are checked against the number of ranks as they are decoded.
  int rank_count = 0;
  for (;; ++rank_count) {
    std::error_code ec;
    if (!std::filesystem::exists(fmt::format("{}.{}.et", prefix, rank_count), ec)) break;
  }
  if (rank_count == 0) {
    throw Error(fmt::format("{}.0.et", prefix), "",
                fmt::format("no Chakra trace: file not found (expected {0}.0.et, {0}.1.et, ... "
                            "one per rank)",
                            prefix));
  }
  ChakraSummary counts;
  counts.ranks = rank_count;
  std::vector<RankTrace> ranks;
  ranks.reserve(static_cast<std::size_t>(rank_count));
  chakra::MemoryEstimate memory{0, options.limits.max_memory};
  for (int r = 0; r < rank_count; ++r) {
    ranks.push_back(
        chakra::read_rank(fmt::format("{}.{}.et", prefix, r), rank_count, options, counts, memory));
  }
  chakra::ProcessGroups groups = process_groups(ranks, options);
  chakra::UnitTable table(std::move(ranks));
  chakra::match_collectives(table, groups);
  chakra::match_p2p(table, groups);
  add_single_nodes(table, options);
  TaskGraph graph = chakra::assemble_graph(table);
  if (summary != nullptr) *summary = counts;
  return graph;
}

}  // namespace mfabric::workload
