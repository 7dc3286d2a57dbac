// Chakra messages -> plain per-rank nodes: attribute decoding and per-node validation, so that
// every later stage works on checked values (docs/chakra.md, "Fields used" and "Validation").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <google/protobuf/stubs/logging.h>

#include "core/error.h"
#include "core/units.h"
#include "workload/chakra_stream.h"
#include "workload/chakra_trace.h"

namespace mfabric::workload::chakra {
namespace {

std::string value_kind(const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::VALUE_NOT_SET) return "no value";
  const auto* field = pb::AttributeProto::descriptor()->FindFieldByNumber(a.value_case());
  return field != nullptr ? field->name() : "an unknown value";
}

// Where an attribute sits (a node, or the GlobalMetadata when node is null); turned into text
// only when an error is reported, since traces have millions of attributes.
struct AttrContext {
  const std::string& file;
  const RawNode* node;
  std::string where() const { return node != nullptr ? describe(*node) : "GlobalMetadata"; }
};

template <class T>
std::optional<std::int64_t> checked(T v) {
  if constexpr (std::is_unsigned_v<T>) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
  }
  return static_cast<std::int64_t>(v);
}

// Integer attributes are documented as int64 or int32, but converters differ in which integer
// encoding they pick, so every integer type of the oneof is accepted.
std::int64_t integer_attr(const pb::AttributeProto& a, const AttrContext& at) {
  std::optional<std::int64_t> v;
  bool integer = true;
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      v = a.int32_val();
      break;
    case pb::AttributeProto::kInt64Val:
      v = a.int64_val();
      break;
    case pb::AttributeProto::kUint32Val:
      v = a.uint32_val();
      break;
    case pb::AttributeProto::kUint64Val:
      v = checked(a.uint64_val());
      break;
    case pb::AttributeProto::kSint32Val:
      v = a.sint32_val();
      break;
    case pb::AttributeProto::kSint64Val:
      v = a.sint64_val();
      break;
    case pb::AttributeProto::kFixed32Val:
      v = a.fixed32_val();
      break;
    case pb::AttributeProto::kFixed64Val:
      v = checked(a.fixed64_val());
      break;
    case pb::AttributeProto::kSfixed32Val:
      v = a.sfixed32_val();
      break;
    case pb::AttributeProto::kSfixed64Val:
      v = a.sfixed64_val();
      break;
    default:
      integer = false;
  }
  if (!integer) {
    throw Error(
        at.file, at.where(),
        fmt::format("attribute '{}': expected an integer, got {}", a.name(), value_kind(a)));
  }
  if (!v)
    throw Error(at.file, at.where(), fmt::format("attribute '{}': integer out of range", a.name()));
  return *v;
}

template <class List>
std::vector<std::int64_t> widen(const List& list, bool* ok) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(list.values_size()));
  for (auto v : list.values()) {
    const auto c = checked(v);
    if (!c) *ok = false;
    out.push_back(c.value_or(0));
  }
  return out;
}

int list_size(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32List:
      return a.int32_list().values_size();
    case pb::AttributeProto::kInt64List:
      return a.int64_list().values_size();
    case pb::AttributeProto::kUint32List:
      return a.uint32_list().values_size();
    case pb::AttributeProto::kUint64List:
      return a.uint64_list().values_size();
    case pb::AttributeProto::kSint32List:
      return a.sint32_list().values_size();
    case pb::AttributeProto::kSint64List:
      return a.sint64_list().values_size();
    case pb::AttributeProto::kFixed32List:
      return a.fixed32_list().values_size();
    case pb::AttributeProto::kFixed64List:
      return a.fixed64_list().values_size();
    case pb::AttributeProto::kSfixed32List:
      return a.sfixed32_list().values_size();
    case pb::AttributeProto::kSfixed64List:
      return a.sfixed64_list().values_size();
    default:
      return 0;
  }
}

// An integer list with at most `max_entries` entries: lists name one entry per rank, so a longer
// one is an error before it is copied (a hostile file cannot make the reader hold it twice).
std::vector<std::int64_t> integer_list_attr(const pb::AttributeProto& a, const AttrContext& at,
                                            int max_entries) {
  if (list_size(a) > max_entries) {
    throw Error(at.file, at.where(),
                fmt::format("attribute '{}': {} entries, more than the trace's {} ranks", a.name(),
                            list_size(a), max_entries));
  }
  bool ok = true;
  std::vector<std::int64_t> out;
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32List:
      out = widen(a.int32_list(), &ok);
      break;
    case pb::AttributeProto::kInt64List:
      out = widen(a.int64_list(), &ok);
      break;
    case pb::AttributeProto::kUint32List:
      out = widen(a.uint32_list(), &ok);
      break;
    case pb::AttributeProto::kUint64List:
      out = widen(a.uint64_list(), &ok);
      break;
    case pb::AttributeProto::kSint32List:
      out = widen(a.sint32_list(), &ok);
      break;
    case pb::AttributeProto::kSint64List:
      out = widen(a.sint64_list(), &ok);
      break;
    case pb::AttributeProto::kFixed32List:
      out = widen(a.fixed32_list(), &ok);
      break;
    case pb::AttributeProto::kFixed64List:
      out = widen(a.fixed64_list(), &ok);
      break;
    case pb::AttributeProto::kSfixed32List:
      out = widen(a.sfixed32_list(), &ok);
      break;
    case pb::AttributeProto::kSfixed64List:
      out = widen(a.sfixed64_list(), &ok);
      break;
    default:
      throw Error(at.file, at.where(),
                  fmt::format("attribute '{}': expected a list of integers (int64_list), got {}",
                              a.name(), value_kind(a)));
  }
  if (!ok)
    throw Error(at.file, at.where(), fmt::format("attribute '{}': integer out of range", a.name()));
  return out;
}

double number_attr(const pb::AttributeProto& a, const AttrContext& at) {
  double v = 0;
  if (a.value_case() == pb::AttributeProto::kDoubleVal) {
    v = a.double_val();
  } else if (a.value_case() == pb::AttributeProto::kFloatVal) {
    v = a.float_val();
  } else {
    v = static_cast<double>(integer_attr(a, at));
  }
  if (!std::isfinite(v)) {
    throw Error(at.file, at.where(),
                fmt::format("attribute '{}': expected a finite number, got {}", a.name(), v));
  }
  return v;
}

// Bytes a node moves: non-negative and at most kMaxChakraCommBytes.
void check_bytes(std::int64_t v, const char* attr, const std::string& file, const RawNode& n) {
  if (v < 0)
    throw Error(file, describe(n), fmt::format("{} must be non-negative, got {}", attr, v));
  if (v > kMaxChakraCommBytes) {
    throw Error(file, describe(n),
                fmt::format("{} of {} bytes is more than the {} (2^50 bytes) one transfer may "
                            "move",
                            attr, v, to_string(Bytes(kMaxChakraCommBytes))));
  }
}

// Sorted, without repeats.
void sort_unique(std::vector<std::uint64_t>::iterator begin,
                 std::vector<std::uint64_t>::iterator end, std::vector<std::uint64_t>& all) {
  std::sort(begin, end);
  all.erase(std::unique(begin, end), end);
}

// Names only appear in messages; a longer one is cut so that names cannot hold memory in
// proportion to the decoded stream.
constexpr std::size_t kMaxKeptName = 256;

RawNode convert(const pb::Node& node, const std::string& file, int ranks) {
  RawNode n;
  n.id = node.id();
  n.name = node.name().size() <= kMaxKeptName ? node.name()
                                              : node.name().substr(0, kMaxKeptName) + "...";
  n.type = node.type();
  n.duration_micros = node.duration_micros();
  n.dep_ids.reserve(static_cast<std::size_t>(node.data_deps_size() + node.ctrl_deps_size()));
  n.dep_ids.assign(node.data_deps().begin(), node.data_deps().end());
  sort_unique(n.dep_ids.begin(), n.dep_ids.end(), n.dep_ids);
  n.data_deps = static_cast<std::uint32_t>(n.dep_ids.size());
  for (std::uint64_t c : node.ctrl_deps()) {
    // A dependency that is both data and control is a data dependency.
    if (!std::binary_search(n.dep_ids.begin(), n.dep_ids.begin() + n.data_deps, c)) {
      n.dep_ids.push_back(c);
    }
  }
  sort_unique(n.dep_ids.begin() + n.data_deps, n.dep_ids.end(), n.dep_ids);

  const AttrContext at{file, &n};
  for (const pb::AttributeProto& a : node.attr()) {
    const std::string& key = a.name();
    if (key == "is_cpu_op") {
      if (a.value_case() == pb::AttributeProto::kBoolVal) {
        n.is_cpu_op = a.bool_val();
      } else {
        n.is_cpu_op = integer_attr(a, at) != 0;
      }
    } else if (key == "num_ops") {
      n.num_ops = number_attr(a, at);
    } else if (key == "comm_type") {
      n.comm_type = integer_attr(a, at);
    } else if (key == "comm_size") {
      n.comm_size = integer_attr(a, at);
    } else if (key == "comm_src") {
      n.comm_src = integer_attr(a, at);
    } else if (key == "comm_dst") {
      n.comm_dst = integer_attr(a, at);
    } else if (key == "comm_tag") {
      n.comm_tag = integer_attr(a, at);
    } else if (key == "pg_name") {
      if (a.value_case() == pb::AttributeProto::kStringVal) {
        n.pg_name = a.string_val();
      } else if (a.value_case() == pb::AttributeProto::kBytesVal) {
        n.pg_name = a.bytes_val();
      } else {
        throw Error(file, describe(n),
                    fmt::format("attribute 'pg_name': expected a string, got {}", value_kind(a)));
      }
    } else if (key == "send_bytes_per_rank") {
      n.send_bytes = integer_list_attr(a, at, ranks);
    }
  }
  if (n.comm_size) check_bytes(*n.comm_size, "comm_size", file, n);
  if (n.send_bytes) {
    for (std::int64_t b : *n.send_bytes)
      check_bytes(b, "an entry of send_bytes_per_rank", file, n);
  }
  if (n.num_ops && *n.num_ops < 0) {
    throw Error(file, describe(n), fmt::format("num_ops must be non-negative, got {}", *n.num_ops));
  }
  return n;
}

void count_type(int type, ChakraSummary& summary) {
  switch (type) {
    case pb::COMP_NODE:
      ++summary.compute;
      break;
    case pb::COMM_COLL_NODE:
      ++summary.collective;
      break;
    case pb::COMM_SEND_NODE:
      ++summary.send;
      break;
    case pb::COMM_RECV_NODE:
      ++summary.recv;
      break;
    default:
      ++summary.other;
  }
}

}  // namespace

std::string describe(const RawNode& n) {
  return n.name.empty() ? fmt::format("node {}", n.id) : fmt::format("node {} ({})", n.id, n.name);
}

RankTrace read_rank(const std::string& file, int ranks, const ChakraOptions& options,
                    ChakraSummary& summary, MemoryEstimate& memory) {
  const ChakraLimits& limits = options.limits;
  RankTrace rank;
  rank.file = file;
  // protobuf logs to stderr when a string field is not UTF-8, before the parse fails; the failure
  // is reported as an Error, so the log line would only be noise next to it.
  const google::protobuf::LogSilencer quiet;
  DelimitedReader reader(file, limits.max_rank_bytes, limits.max_message_bytes);

  pb::GlobalMetadata meta;
  bool has_metadata = false;
  try {
    has_metadata = reader.next(meta, -1);
  } catch (const Error& e) {
    // A bad first message usually means the file is not a trace at all.
    throw Error(e.source(), e.field(), e.message() + " (is this a Chakra .et file?)");
  }
  if (!has_metadata) throw Error(file, "", "empty trace: expected a GlobalMetadata message first");
  for (const pb::AttributeProto& a : meta.attr()) {
    static constexpr std::string_view kPrefix = "pg_ranks:";
    if (a.name().rfind(kPrefix, 0) != 0) continue;
    const std::string field = "GlobalMetadata: attribute '" + a.name() + "'";
    rank.pg_ranks.emplace_back(
        a.name().substr(kPrefix.size()),
        checked_members(integer_list_attr(a, AttrContext{file, nullptr}, ranks), ranks, file,
                        field));
  }

  pb::Node node;
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::int64_t k = 0;; ++k) {
    if (!reader.next(node, k)) break;
    RawNode n = convert(node, file, ranks);
    // Every term is bounded by the message cap, so the sum cannot overflow before the check.
    memory.used += kChakraBytesPerNode + static_cast<std::int64_t>(n.name.size()) +
                   kChakraBytesPerDependency * static_cast<std::int64_t>(n.dep_ids.size()) +
                   kChakraBytesPerListEntry *
                       static_cast<std::int64_t>(n.send_bytes ? n.send_bytes->size() : 0);
    if (memory.used > memory.limit) {
      throw Error(file, describe(n),
                  fmt::format("the trace needs more than the {} of memory mfabric allows it "
                              "(about {} bytes per node and {} per dependency; "
                              "ChakraOptions::limits.max_memory, --max-memory raises it)",
                              to_string(Bytes(memory.limit)), kChakraBytesPerNode,
                              kChakraBytesPerDependency));
    }
    // Checked as nodes arrive, so that a stream of identical empty nodes (a run of zero bytes)
    // stops at the second one.
    const auto [it, inserted] = index.emplace(n.id, rank.nodes.size());
    if (!inserted) {
      throw Error(
          file, describe(n),
          fmt::format("duplicate node id {}: node #{} of the file has it too", n.id, it->second));
    }
    count_type(n.type, summary);
    if (n.type == pb::METADATA_NODE &&
        node.name().find("process_group:init") != std::string::npos) {
      for (PytorchGroup& g :
           parse_pytorch_groups(node.inputs().values(), ranks, file, describe(n))) {
        rank.pytorch_groups.push_back(std::move(g));
      }
    }
    rank.nodes.push_back(std::move(n));
  }
  resolve_dependencies(rank, options.control_deps, summary);
  return rank;
}

}  // namespace mfabric::workload::chakra
