// Chakra trace reader: files -> per-rank node lists -> matched communication -> one TaskGraph.
// Conventions (matching, membership, all-to-all-v, traffic classes) are documented in
// docs/chakra.md; this file follows that document.
#include "workload/chakra.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "workload/chakra/et_def.pb.h"

namespace mfabric::workload {
namespace {

namespace pb = ChakraProtoMsg;

// ---------------------------------------------------------------------------------------------
// Bytes on disk -> messages

bool is_gzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string gunzip(const std::string& path, const std::string& in) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (not a raw zlib stream).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    throw Error(path, "", "cannot initialise zlib to decompress the file");
  }
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};

  const auto* base = reinterpret_cast<const Bytef*>(in.data());
  std::size_t fed = 0;  // input bytes handed to zlib so far
  std::string out;
  std::vector<Bytef> buffer(1 << 16);
  for (;;) {
    // zlib counts in uInt, so feed traces larger than 4 GiB in pieces.
    if (zs.avail_in == 0 && fed < in.size()) {
      const std::size_t chunk = std::min<std::size_t>(in.size() - fed, std::size_t{1} << 30);
      zs.next_in = const_cast<Bytef*>(base + fed);
      zs.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    zs.next_out = buffer.data();
    zs.avail_out = static_cast<uInt>(buffer.size());
    const int ret = inflate(&zs, Z_NO_FLUSH);
    out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - zs.avail_out);
    const std::size_t offset = fed - zs.avail_in;
    if (ret == Z_STREAM_END) {
      if (zs.avail_in == 0 && fed == in.size()) return out;
      // Concatenated gzip members (`cat a.gz b.gz`) are one valid gzip file; anything else after
      // the first member fails the next header check below.
      inflateReset(&zs);
      continue;
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && fed == in.size()) {
      throw Error(path, fmt::format("byte offset {}", offset),
                  "corrupt gzip data: the compressed stream is truncated");
    }
    if (ret != Z_OK) {
      throw Error(
          path, fmt::format("byte offset {}", offset),
          fmt::format("corrupt gzip data: {}", zs.msg != nullptr ? zs.msg : "inflate failed"));
    }
  }
}

struct Framing {
  const std::string& path;
  const std::string& data;
  bool decompressed;
  std::size_t pos = 0;

  // Message k of the file (-1: the GlobalMetadata); text is built only for errors.
  std::string where(std::int64_t k, std::size_t at) const {
    const std::string what = k < 0 ? std::string("GlobalMetadata") : fmt::format("node #{}", k);
    return fmt::format("{} at byte offset {}{}", what, at,
                       decompressed ? " of the decompressed stream" : "");
  }

  // Returns the next message's bytes, or false at the clean end of the stream.
  bool next(std::int64_t k, const char** begin, int* size) {
    if (pos >= data.size()) return false;
    const std::size_t start = pos;
    std::uint64_t length = 0;
    int shift = 0;
    for (;;) {
      if (pos >= data.size()) {
        throw Error(path, where(k, start), "truncated: the file ends inside a length prefix");
      }
      const auto byte = static_cast<unsigned char>(data[pos++]);
      length |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
      shift += 7;
      if (shift >= 64) throw Error(path, where(k, start), "malformed length prefix");
    }
    if (length > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      throw Error(
          path, where(k, start),
          fmt::format("malformed length prefix: {} bytes is larger than any message", length));
    }
    const std::size_t remaining = data.size() - pos;
    if (length > remaining) {
      throw Error(
          path, where(k, start),
          fmt::format("truncated: the message is {} bytes but only {} remain", length, remaining));
    }
    *begin = data.data() + pos;
    *size = static_cast<int>(length);
    pos += static_cast<std::size_t>(length);
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// Messages -> plain per-rank nodes

struct RawNode {
  std::uint64_t id = 0;
  std::string name;
  int type = pb::INVALID_NODE;  // an int: proto3 enums are open, unknown values are "other"
  std::vector<std::uint64_t> dep_ids;
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
  std::vector<std::vector<std::size_t>> deps;  // node index -> dependency node indices
  std::vector<std::size_t> order;              // node indices in topological order
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> pg_ranks;  // from metadata
};

std::string describe(const RawNode& n) {
  return n.name.empty() ? fmt::format("node {}", n.id) : fmt::format("node {} ({})", n.id, n.name);
}

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

std::vector<std::int64_t> integer_list_attr(const pb::AttributeProto& a, const AttrContext& at) {
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

RawNode convert(const pb::Node& node, const std::string& file) {
  RawNode n;
  n.id = node.id();
  n.name = node.name();
  n.type = node.type();
  n.duration_micros = node.duration_micros();
  n.dep_ids.assign(node.data_deps().begin(), node.data_deps().end());
  n.dep_ids.insert(n.dep_ids.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
  std::sort(n.dep_ids.begin(), n.dep_ids.end());
  n.dep_ids.erase(std::unique(n.dep_ids.begin(), n.dep_ids.end()), n.dep_ids.end());

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
      if (a.value_case() == pb::AttributeProto::kDoubleVal) {
        n.num_ops = a.double_val();
      } else if (a.value_case() == pb::AttributeProto::kFloatVal) {
        n.num_ops = a.float_val();
      } else {
        n.num_ops = static_cast<double>(integer_attr(a, at));
      }
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
      n.send_bytes = integer_list_attr(a, at);
    }
  }
  if (n.comm_size && *n.comm_size < 0) {
    throw Error(file, describe(n),
                fmt::format("comm_size must be non-negative, got {}", *n.comm_size));
  }
  if (n.num_ops && !(*n.num_ops >= 0)) {
    throw Error(file, describe(n), fmt::format("num_ops must be non-negative, got {}", *n.num_ops));
  }
  return n;
}

// Names a cycle in a graph given as "deps of v" over the vertices `stuck` (each of which has at
// least one dependency inside `stuck`, which is what Kahn's algorithm leaves behind). Returns the
// cycle in execution order: each element must run before the next, and the last before the first.
std::vector<std::size_t> find_cycle(
    const std::vector<char>& stuck,
    const std::function<std::vector<std::size_t>(std::size_t)>& deps) {
  std::size_t v =
      static_cast<std::size_t>(std::find(stuck.begin(), stuck.end(), 1) - stuck.begin());
  std::vector<std::size_t> path;
  std::unordered_map<std::size_t, std::size_t> position;
  while (position.find(v) == position.end()) {
    position[v] = path.size();
    path.push_back(v);
    for (std::size_t d : deps(v)) {
      if (stuck[d]) {
        v = d;
        break;
      }
    }
  }
  std::vector<std::size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(position[v]),
                                 path.end());
  std::reverse(cycle.begin(), cycle.end());  // walked child -> parent; report parent -> child
  // Start at the earliest vertex so the message does not depend on where the walk began.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

RankTrace read_rank(const std::string& file, ChakraSummary& summary) {
  std::string bytes = read_text_file(file, "Chakra trace", "a Chakra .et file (docs/chakra.md)");
  const bool compressed = is_gzip(bytes);
  if (compressed) bytes = gunzip(file, bytes);

  RankTrace rank;
  rank.file = file;
  // protobuf logs to stderr when a string field is not UTF-8, before the parse fails; the failure
  // is reported as an Error below, so the log line would only be noise next to it.
  const google::protobuf::LogSilencer quiet;
  Framing framing{file, bytes, compressed};
  const char* begin = nullptr;
  int size = 0;
  bool has_metadata = false;
  try {
    has_metadata = framing.next(-1, &begin, &size);
  } catch (const Error& e) {
    // A bad first message usually means the file is not a trace at all.
    throw Error(e.source(), e.field(), e.message() + " (is this a Chakra .et file?)");
  }
  if (!has_metadata) throw Error(file, "", "empty trace: expected a GlobalMetadata message first");
  pb::GlobalMetadata meta;
  if (!meta.ParseFromArray(begin, size)) {
    throw Error(file, framing.where(-1, 0),
                "not a Chakra GlobalMetadata message (is this a Chakra .et file?)");
  }
  for (const pb::AttributeProto& a : meta.attr()) {
    static constexpr std::string_view kPrefix = "pg_ranks:";
    if (a.name().rfind(kPrefix, 0) == 0) {
      rank.pg_ranks.emplace_back(a.name().substr(kPrefix.size()),
                                 integer_list_attr(a, AttrContext{file, nullptr}));
    }
  }

  pb::Node node;
  for (std::size_t k = 0;; ++k) {
    const std::size_t at = framing.pos;
    if (!framing.next(static_cast<std::int64_t>(k), &begin, &size)) break;
    if (!node.ParseFromArray(begin, size)) {
      throw Error(
          file, framing.where(static_cast<std::int64_t>(k), at),
          "not a valid Chakra Node message (malformed protobuf, or text that is not UTF-8)");
    }
    rank.nodes.push_back(convert(node, file));
  }

  const std::size_t n = rank.nodes.size();
  std::unordered_map<std::uint64_t, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const RawNode& node_i = rank.nodes[i];
    auto [it, inserted] = index.emplace(node_i.id, i);
    if (!inserted) {
      throw Error(file, describe(node_i),
                  fmt::format("duplicate node id {}: node #{} of the file has it too", node_i.id,
                              it->second));
    }
    switch (node_i.type) {
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
  rank.deps.resize(n);
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> missing(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint64_t d : rank.nodes[i].dep_ids) {
      auto it = index.find(d);
      if (it == index.end()) {
        throw Error(file, describe(rank.nodes[i]),
                    fmt::format("depends on node {}, which is not in this file", d));
      }
      rank.deps[i].push_back(it->second);
      children[it->second].push_back(i);
    }
    missing[i] = rank.deps[i].size();
  }

  // Kahn's algorithm, smallest id first among ready nodes: trace ids follow program order, and
  // collectives are matched across ranks in this order.
  using Ready = std::pair<std::uint64_t, std::size_t>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (missing[i] == 0) ready.emplace(rank.nodes[i].id, i);
  }
  rank.order.reserve(n);
  while (!ready.empty()) {
    const std::size_t i = ready.top().second;
    ready.pop();
    rank.order.push_back(i);
    for (std::size_t c : children[i]) {
      if (--missing[c] == 0) ready.emplace(rank.nodes[c].id, c);
    }
  }
  if (rank.order.size() != n) {
    std::vector<char> stuck(n, 1);
    for (std::size_t i : rank.order)
      stuck[i] = 0;
    const auto cycle = find_cycle(stuck, [&](std::size_t v) { return rank.deps[v]; });
    std::string text;
    for (std::size_t v : cycle)
      text += fmt::format("node {} -> ", rank.nodes[v].id);
    text += fmt::format("node {}", rank.nodes[cycle.front()].id);
    throw Error(file, describe(rank.nodes[cycle.front()]),
                fmt::format("dependency cycle: {}", text));
  }
  return rank;
}

// ---------------------------------------------------------------------------------------------
// Matching and conversion

Traffic classify(const std::string& pg_name) {
  // Token-based so that "step" or "output" never read as EP or TP: split at anything that is not
  // a letter ("tp0", "ep_group", "DATA_PARALLEL_GROUP").
  std::vector<std::string> tokens(1);
  for (char c : pg_name) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      tokens.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!tokens.back().empty()) {
      tokens.emplace_back();
    }
  }
  auto has = [&](std::string_view abbreviation, std::string_view word) {
    return std::any_of(tokens.begin(), tokens.end(), [&](const std::string& t) {
      return t == abbreviation || t.rfind(word, 0) == 0;
    });
  };
  if (has("tp", "tensor")) return Traffic::TP;
  if (has("ep", "expert")) return Traffic::EP;
  if (has("dp", "data")) return Traffic::DP;
  if (has("pp", "pipe")) return Traffic::PP;
  return Traffic::None;
}

std::optional<CollectiveKind> collective_kind(std::int64_t comm_type) {
  switch (comm_type) {
    case pb::ALL_REDUCE:
      return CollectiveKind::AllReduce;
    // Rooted collectives map to the symmetric one whose busiest member moves about the same
    // bytes: a ring reduce sends ~S per member like a reduce-scatter's (n-1)/n x S, a gather's
    // root receives (n-1)/n x S like every all-gather member, and a scatter's root sends what a
    // broadcast root does (within (n-1)/n).
    case pb::REDUCE:
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::ReduceScatter;
    case pb::ALL_GATHER:
    case pb::GATHER:
      return CollectiveKind::AllGather;
    case pb::SCATTER:
    case pb::BROADCAST:
      return CollectiveKind::Broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveKind::AllToAll;
    case pb::BARRIER:
      return CollectiveKind::Barrier;
    default:
      return std::nullopt;
  }
}

std::string comm_type_name(std::int64_t comm_type) {
  if (comm_type >= std::numeric_limits<int>::min() &&
      comm_type <= std::numeric_limits<int>::max() &&
      pb::CollectiveCommType_IsValid(static_cast<int>(comm_type))) {
    return pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(comm_type));
  }
  return fmt::format("{}", comm_type);
}

struct NodeRef {
  int rank;
  std::size_t index;
};

// One task-to-be: a single node (compute, other), a matched collective or a matched send/recv.
struct Unit {
  std::vector<NodeRef> nodes;
  Task task;
  std::vector<std::int32_t> members;  // collective
  std::optional<ByteMatrix> matrix;   // all-to-all-v
  std::string heading;                // collective: "collective #k of process group 'pg'"
};

class Converter {
 public:
  Converter(std::vector<RankTrace> ranks, const ChakraOptions& options)
      : ranks_(std::move(ranks)), options_(options) {
    unit_of_.resize(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      unit_of_[r].assign(ranks_[r].nodes.size(), kNone);
    }
  }

  TaskGraph run() {
    match_collectives();
    match_p2p();
    add_single_nodes();
    return build();
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  const RawNode& node(NodeRef ref) const {
    return ranks_[static_cast<std::size_t>(ref.rank)].nodes[ref.index];
  }
  const std::string& file(int rank) const { return ranks_[static_cast<std::size_t>(rank)].file; }
  std::string where(NodeRef ref) const {
    return fmt::format("{} {}", file(ref.rank), describe(node(ref)));
  }
  int rank_count() const { return static_cast<int>(ranks_.size()); }

  void assign(Unit unit) {
    const std::size_t id = units_.size();
    for (NodeRef ref : unit.nodes)
      unit_of_[static_cast<std::size_t>(ref.rank)][ref.index] = id;
    units_.push_back(std::move(unit));
  }

  // Explicit process-group membership from GlobalMetadata ("pg_ranks:<pg_name>"), which must
  // agree across every rank that declares it.
  std::map<std::string, std::vector<std::int32_t>> declared_groups() const {
    std::map<std::string, std::pair<int, std::vector<std::int64_t>>> seen;
    std::map<std::string, std::vector<std::int32_t>> groups;
    for (int r = 0; r < rank_count(); ++r) {
      for (const auto& [pg, list] : ranks_[static_cast<std::size_t>(r)].pg_ranks) {
        const std::string field = "GlobalMetadata: attribute 'pg_ranks:" + pg + "'";
        auto [it, inserted] = seen.emplace(pg, std::make_pair(r, list));
        if (!inserted) {
          if (it->second.second != list) {
            throw Error(file(r), field,
                        fmt::format("lists ranks [{}] but {} lists [{}]", fmt::join(list, ", "),
                                    file(it->second.first), fmt::join(it->second.second, ", ")));
          }
          continue;
        }
        std::vector<std::int32_t> members;
        std::vector<char> present(ranks_.size(), 0);
        for (std::int64_t m : list) {
          if (m < 0 || m >= rank_count()) {
            throw Error(
                file(r), field,
                fmt::format("rank {} is not in the trace (ranks 0..{})", m, rank_count() - 1));
          }
          if (present[static_cast<std::size_t>(m)]++) {
            throw Error(file(r), field, fmt::format("rank {} is listed twice", m));
          }
          members.push_back(static_cast<std::int32_t>(m));
        }
        if (members.empty()) throw Error(file(r), field, "lists no ranks");
        groups.emplace(pg, std::move(members));
      }
    }
    return groups;
  }

  void match_collectives() {
    // pg_name -> rank -> that rank's collective nodes of the group, in topological order.
    std::map<std::string, std::map<int, std::vector<std::size_t>>> sequences;
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
      for (std::size_t i : rank.order) {
        const RawNode& n = rank.nodes[i];
        const bool all_to_all =
            n.type == pb::COMM_COLL_NODE && n.comm_type.value_or(-1) == pb::ALL_TO_ALL;
        if (n.send_bytes && !all_to_all) {
          throw Error(rank.file, describe(n),
                      "send_bytes_per_rank is only meaningful on ALL_TO_ALL collectives");
        }
        if (n.type != pb::COMM_COLL_NODE) continue;
        if (!n.comm_type) throw Error(rank.file, describe(n), "collective without comm_type");
        if (!collective_kind(*n.comm_type)) {
          throw Error(rank.file, describe(n),
                      fmt::format("unknown comm_type {} (known: 0..9, see CollectiveCommType)",
                                  *n.comm_type));
        }
        sequences[n.pg_name][r].push_back(i);
      }
    }

    const auto declared = declared_groups();
    for (const auto& [pg, per_rank] : sequences) {
      std::vector<std::int32_t> members;
      if (auto it = declared.find(pg); it != declared.end()) {
        members = it->second;
        for (const auto& [r, seq] : per_rank) {
          if (std::find(members.begin(), members.end(), r) == members.end()) {
            const NodeRef ref{r, seq.front()};
            throw Error(file(r), describe(node(ref)),
                        fmt::format("rank {} is not a member of process group '{}' (pg_ranks:{} "
                                    "in GlobalMetadata lists [{}])",
                                    r, pg, pg, fmt::join(members, ", ")));
          }
        }
      } else if (pg.empty()) {
        for (int r = 0; r < rank_count(); ++r)
          members.push_back(r);
      } else {
        for (const auto& entry : per_rank)
          members.push_back(entry.first);  // sorted: std::map
      }
      match_group(pg, members, per_rank);
    }
  }

  void match_group(const std::string& pg, const std::vector<std::int32_t>& members,
                   const std::map<int, std::vector<std::size_t>>& per_rank) {
    static const std::vector<std::size_t> kEmpty;
    std::vector<const std::vector<std::size_t>*> seqs;
    std::size_t longest = 0;
    for (std::int32_t m : members) {
      auto it = per_rank.find(m);
      seqs.push_back(it == per_rank.end() ? &kEmpty : &it->second);
      longest = std::max(longest, seqs.back()->size());
    }
    const std::string group_text = pg.empty() ? std::string("the default process group (all ranks)")
                                              : fmt::format("process group '{}'", pg);

    const Traffic traffic = classify(pg);

    for (std::size_t k = 0; k < longest; ++k) {
      // The first member that has a k-th collective is the reference the others must agree with.
      std::size_t ref_member = 0;
      while (seqs[ref_member]->size() <= k)
        ++ref_member;
      const NodeRef ref{members[ref_member], (*seqs[ref_member])[k]};
      const RawNode& first = node(ref);
      const std::string heading = fmt::format("collective #{} of {}", k, group_text);

      Unit unit;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const int r = members[m];
        if (seqs[m]->size() <= k) {
          throw Error(
              file(ref.rank), describe(first),
              fmt::format("{} ({}) has no counterpart on member rank {} ({}), which has "
                          "only {} collective(s) on that group",
                          heading, comm_type_name(*first.comm_type), r, file(r), seqs[m]->size()));
        }
        const NodeRef here{r, (*seqs[m])[k]};
        const RawNode& n = node(here);
        if (*n.comm_type != *first.comm_type) {
          throw Error(file(r), describe(n),
                      fmt::format("{}: comm_type {} here but {} on rank {} ({})", heading,
                                  comm_type_name(*n.comm_type), comm_type_name(*first.comm_type),
                                  ref.rank, where(ref)));
        }
        unit.nodes.push_back(here);
      }

      const CollectiveKind kind = *collective_kind(*first.comm_type);
      Task& task = unit.task;
      task.kind = TaskKind::Collective;
      task.collective = kind;
      task.traffic = traffic;
      unit.members = members;
      unit.heading = heading;

      const bool all_to_all_v = kind == CollectiveKind::AllToAll && uneven(unit, heading);
      if (all_to_all_v) {
        ByteMatrix matrix(static_cast<int>(members.size()));
        for (std::size_t m = 0; m < members.size(); ++m) {
          const auto& row = *node(unit.nodes[m]).send_bytes;
          for (std::size_t j = 0; j < members.size(); ++j) {
            matrix.at(static_cast<int>(m), static_cast<int>(j)) = row[j];
          }
        }
        task.bytes = Bytes(matrix.off_diagonal_sum());
        unit.matrix = std::move(matrix);
      } else if (kind != CollectiveKind::Barrier) {
        for (NodeRef here : unit.nodes) {
          const RawNode& n = node(here);
          if (!n.comm_size) {
            throw Error(file(here.rank), describe(n), fmt::format("{}: no comm_size", heading));
          }
          if (*n.comm_size != *first.comm_size) {
            throw Error(
                file(here.rank), describe(n),
                fmt::format("{}: comm_size {} here but {} on rank {} ({})", heading, *n.comm_size,
                            first.comm_size ? *first.comm_size : 0, ref.rank, where(ref)));
          }
        }
        task.bytes = Bytes(*first.comm_size);
      }
      assign(std::move(unit));
    }
  }

  // True if every member carries send_bytes_per_rank (all-to-all-v); false if none does.
  bool uneven(const Unit& unit, const std::string& heading) const {
    const NodeRef* with = nullptr;
    const NodeRef* without = nullptr;
    for (const NodeRef& ref : unit.nodes) {
      (node(ref).send_bytes ? with : without) = &ref;
    }
    if (with == nullptr) return false;
    if (without != nullptr) {
      throw Error(file(without->rank), describe(node(*without)),
                  fmt::format("{}: send_bytes_per_rank is missing here but given on rank {} ({}); "
                              "an all-to-all-v needs it on every member",
                              heading, with->rank, where(*with)));
    }
    for (const NodeRef& ref : unit.nodes) {
      const auto& row = *node(ref).send_bytes;
      if (row.size() != unit.members.size()) {
        throw Error(
            file(ref.rank), describe(node(ref)),
            fmt::format("{}: send_bytes_per_rank has {} entries, expected {} (one per "
                        "member, in group order [{}])",
                        heading, row.size(), unit.members.size(), fmt::join(unit.members, ", ")));
      }
      for (std::int64_t b : row) {
        if (b < 0) {
          throw Error(file(ref.rank), describe(node(ref)),
                      fmt::format("{}: send_bytes_per_rank has a negative entry {}", heading, b));
        }
      }
    }
    return true;
  }

  // Built only for the deadlock message: traces have millions of units.
  std::string describe_unit(const Unit& unit) const {
    switch (unit.task.kind) {
      case TaskKind::Collective:
        return fmt::format("{} {} ({})", unit.heading,
                           comm_type_name(*node(unit.nodes.front()).comm_type),
                           where_list(unit.nodes));
      case TaskKind::P2P:
        return fmt::format("send {} -> receive {}", where(unit.nodes[0]), where(unit.nodes[1]));
      case TaskKind::Compute:
        break;
    }
    return where(unit.nodes.front());
  }

  std::string where_list(const std::vector<NodeRef>& refs) const {
    std::string text;
    for (NodeRef ref : refs) {
      if (!text.empty()) text += ", ";
      text += where(ref);
    }
    return text;
  }

  // Validates a send's comm_dst or a recv's comm_src and returns it.
  int peer_of(NodeRef ref, const char* attr) const {
    const RawNode& n = node(ref);
    const auto peer = std::string_view(attr) == "comm_dst" ? n.comm_dst : n.comm_src;
    if (!peer) {
      throw Error(
          file(ref.rank), describe(n),
          fmt::format("{} without {}", n.type == pb::COMM_SEND_NODE ? "send" : "receive", attr));
    }
    if (*peer < 0 || *peer >= rank_count()) {
      throw Error(file(ref.rank), describe(n),
                  fmt::format("{} {} is not a rank of this trace (ranks 0..{})", attr, *peer,
                              rank_count() - 1));
    }
    if (*peer == ref.rank) {
      throw Error(file(ref.rank), describe(n), fmt::format("{} is this node's own rank", attr));
    }
    return static_cast<int>(*peer);
  }

  void match_p2p() {
    // (sender, receiver, tag) -> nodes in each rank's topological order.
    using Key = std::tuple<int, int, std::int64_t>;
    std::map<Key, std::vector<NodeRef>> sends;
    std::map<Key, std::vector<NodeRef>> recvs;
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
      for (std::size_t i : rank.order) {
        const RawNode& n = rank.nodes[i];
        const NodeRef ref{r, i};
        if (n.type == pb::COMM_SEND_NODE) {
          if (!n.comm_size) throw Error(rank.file, describe(n), "send without comm_size");
          sends[{r, peer_of(ref, "comm_dst"), n.comm_tag.value_or(0)}].push_back(ref);
        } else if (n.type == pb::COMM_RECV_NODE) {
          recvs[{peer_of(ref, "comm_src"), r, n.comm_tag.value_or(0)}].push_back(ref);
        }
      }
    }
    static const std::vector<NodeRef> kEmpty;
    auto unmatched = [&](const std::vector<NodeRef>& mine, const std::vector<NodeRef>& theirs,
                         const Key& key, bool sending) {
      const auto& [src, dst, tag] = key;
      const NodeRef ref = mine[theirs.size()];
      const int other = sending ? dst : src;
      throw Error(
          file(ref.rank), describe(node(ref)),
          fmt::format("{0} #{1} {2} rank {3} with tag {4} has no matching {5} on rank {3} ({6}), "
                      "which has only {1} {5}(s) {7} rank {8} with that tag",
                      sending ? "send" : "receive", theirs.size(), sending ? "to" : "from", other,
                      tag, sending ? "receive" : "send", file(other), sending ? "from" : "to",
                      ref.rank));
    };
    for (const auto& [key, list] : sends) {
      auto it = recvs.find(key);
      const auto& other = it == recvs.end() ? kEmpty : it->second;
      if (list.size() > other.size()) unmatched(list, other, key, true);
    }
    for (const auto& [key, list] : recvs) {
      auto it = sends.find(key);
      const auto& other = it == sends.end() ? kEmpty : it->second;
      if (list.size() > other.size()) unmatched(list, other, key, false);
    }
    for (const auto& [key, list] : sends) {
      const auto& receives = recvs.at(key);
      for (std::size_t k = 0; k < list.size(); ++k) {
        const RawNode& send = node(list[k]);
        const RawNode& recv = node(receives[k]);
        if (recv.comm_size && *recv.comm_size != *send.comm_size) {
          throw Error(file(receives[k].rank), describe(recv),
                      fmt::format("receive of comm_size {} matches a send of comm_size {} ({})",
                                  *recv.comm_size, *send.comm_size, where(list[k])));
        }
        Unit unit;
        unit.nodes = {list[k], receives[k]};
        unit.task.kind = TaskKind::P2P;
        unit.task.gpu = list[k].rank;
        unit.task.peer = receives[k].rank;
        unit.task.bytes = Bytes(*send.comm_size);
        unit.task.traffic = classify(send.pg_name.empty() ? recv.pg_name : send.pg_name);
        assign(std::move(unit));
      }
    }
  }

  Time compute_time(const RawNode& n, const std::string& file_name) const {
    // Host-side ops overlap the GPU kernels they launch; charging their time to the GPU would
    // serialise host time onto it (see docs/chakra.md).
    if (n.is_cpu_op) return Time::zero();
    double seconds = 0;
    if (n.duration_micros > 0) {
      seconds = static_cast<double>(n.duration_micros) * 1e-6;
    } else if (n.num_ops && options_.gpu.peak_bf16_flops > 0) {
      seconds = *n.num_ops / (options_.gpu.peak_bf16_flops * options_.efficiency);
    }
    // Time counts picoseconds in an int64 (about 106 days).
    if (seconds > 9e6) {
      throw Error(file_name, describe(n), fmt::format("compute time of {} s is too long", seconds));
    }
    if (n.duration_micros > 0) {
      return Time::microseconds(static_cast<std::int64_t>(n.duration_micros));
    }
    return Time::from_seconds(seconds);
  }

  void add_single_nodes() {
    for (int r = 0; r < rank_count(); ++r) {
      const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
      for (std::size_t i : rank.order) {
        if (unit_of_[static_cast<std::size_t>(r)][i] != kNone) continue;
        const RawNode& n = rank.nodes[i];
        Unit unit;
        unit.nodes = {NodeRef{r, i}};
        unit.task.kind = TaskKind::Compute;
        unit.task.gpu = r;
        // Non-compute nodes (metadata, memory) stay as zero-time tasks so that dependencies
        // through them still hold.
        if (n.type == pb::COMP_NODE) unit.task.duration = compute_time(n, rank.file);
        assign(std::move(unit));
      }
    }
  }

  TaskGraph build() {
    const std::size_t count = units_.size();
    // Ready units are taken in (rank, topological position) order of their first node, so the
    // task ids read like the trace: deterministic and close to program order.
    std::vector<std::size_t> priority(count, kNone);
    std::size_t next = 0;
    for (int r = 0; r < rank_count(); ++r) {
      for (std::size_t i : ranks_[static_cast<std::size_t>(r)].order) {
        const std::size_t u = unit_of_[static_cast<std::size_t>(r)][i];
        if (priority[u] == kNone) priority[u] = next++;
      }
    }
    std::vector<std::vector<std::size_t>> deps(count);
    std::vector<std::vector<std::size_t>> children(count);
    std::vector<std::size_t> missing(count, 0);
    for (std::size_t u = 0; u < count; ++u) {
      auto& d = deps[u];
      for (NodeRef ref : units_[u].nodes) {
        const RankTrace& rank = ranks_[static_cast<std::size_t>(ref.rank)];
        for (std::size_t dep : rank.deps[ref.index]) {
          d.push_back(unit_of_[static_cast<std::size_t>(ref.rank)][dep]);
        }
      }
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      missing[u] = d.size();
      for (std::size_t p : d)
        children[p].push_back(u);
    }

    TaskGraph graph(rank_count());
    std::vector<TaskId> task_of(count, -1);
    using Ready = std::pair<std::size_t, std::size_t>;  // (priority, unit)
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    for (std::size_t u = 0; u < count; ++u) {
      if (missing[u] == 0) ready.emplace(priority[u], u);
    }
    std::vector<TaskId> task_deps;
    std::size_t added = 0;
    while (!ready.empty()) {
      const std::size_t u = ready.top().second;
      ready.pop();
      Unit& unit = units_[u];
      Task task = unit.task;
      if (task.kind == TaskKind::Collective) {
        task.group = graph.add_group(unit.members);
        if (unit.matrix) task.matrix = graph.add_matrix(std::move(*unit.matrix));
      }
      task_deps.clear();
      for (std::size_t p : deps[u])
        task_deps.push_back(task_of[p]);
      task_of[u] = graph.add(task, task_deps);
      ++added;
      for (std::size_t c : children[u]) {
        if (--missing[c] == 0) ready.emplace(priority[c], c);
      }
    }
    if (added != count) {
      std::vector<char> stuck(count, 1);
      for (std::size_t u = 0; u < count; ++u)
        stuck[u] = task_of[u] >= 0 ? 0 : 1;
      const auto cycle = find_cycle(stuck, [&](std::size_t v) { return deps[v]; });
      std::string text;
      for (std::size_t v : cycle)
        text += describe_unit(units_[v]) + " -> ";
      text += "the first again";
      const NodeRef first = units_[cycle.front()].nodes.front();
      throw Error(file(first.rank), describe(node(first)),
                  fmt::format("deadlock: the ranks order their communication inconsistently, so "
                              "the matched tasks form a cycle: {}",
                              text));
    }
    return graph;
  }

  std::vector<RankTrace> ranks_;
  const ChakraOptions& options_;
  std::vector<Unit> units_;
  std::vector<std::vector<std::size_t>> unit_of_;  // rank -> node index -> unit
};

}  // namespace

TaskGraph read_chakra(const std::string& prefix, const ChakraOptions& options,
                      ChakraSummary* summary) {
  if (!(options.efficiency > 0 && options.efficiency <= 1)) {
    throw Error("", "efficiency",
                fmt::format("expected a fraction of peak in (0, 1], got {}", options.efficiency));
  }
  if (!(options.gpu.peak_bf16_flops >= 0)) {
    throw Error("", "gpu", "peak FLOP/s must be non-negative");
  }
  ChakraSummary counts;
  std::vector<RankTrace> ranks;
  for (int r = 0;; ++r) {
    const std::string file = fmt::format("{}.{}.et", prefix, r);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      if (r == 0) {
        throw Error(file, "",
                    fmt::format("no Chakra trace: file not found (expected {0}.0.et, {0}.1.et, "
                                "... one per rank)",
                                prefix));
      }
      break;
    }
    ranks.push_back(read_rank(file, counts));
  }
  counts.ranks = static_cast<int>(ranks.size());
  TaskGraph graph = Converter(std::move(ranks), options).run();
  if (summary != nullptr) *summary = counts;
  return graph;
}

}  // namespace mfabric::workload
