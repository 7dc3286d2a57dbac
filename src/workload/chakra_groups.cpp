#include "workload/chakra_groups.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_input.h"
#include "core/json_text.h"

namespace mfabric::workload::chakra {
namespace {

using Json = nlohmann::json;

std::string group_field(const std::string& key) {
  return fmt::format("group \"{}\"", key);
}

// A JSON value as a rank, or an explanation of why it is not one.
std::int64_t json_rank(const Json& v, const std::string& source, const std::string& field) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw Error(source, field, fmt::format("rank {} is out of range", u));
    }
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  throw Error(source, field,
              fmt::format("expected an integer rank, got {} ({})", json_excerpt(v), v.type_name()));
}

std::vector<std::int64_t> json_ranks(const Json& list, const std::string& source,
                                     const std::string& field) {
  if (!list.is_array()) {
    throw Error(
        source, field,
        fmt::format("expected a list of ranks such as [0, 1, 2, 3], got {}", list.type_name()));
  }
  std::vector<std::int64_t> out;
  out.reserve(list.size());
  for (const Json& v : list)
    out.push_back(json_rank(v, source, field));
  return out;
}

// `text` as JSON under the limits of every JSON input (core/json_input.h), or nothing if it is
// not JSON within them.
std::optional<JsonDocument> parse_json_value(const std::string& text) {
  try {
    return parse_json_input(text, "", "");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The text inside a Python string literal 'like \'this\'' (Chakra's converter writes
// inputs.values with Python's str() of a list).
std::optional<std::string> python_single_string_list(std::string_view s) {
  if (s.size() < 4 || s.substr(0, 2) != "['" || s.substr(s.size() - 2) != "']") return std::nullopt;
  s = s.substr(2, s.size() - 4);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case '\\':
      case '\'':
      case '"':
        out += c;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      default:  // \uXXXX and the like: JSON reads them itself
        out += '\\';
        out += c;
    }
  }
  return out;
}

std::string trimmed(const std::string& s) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto begin = std::find_if_not(s.begin(), s.end(), space);
  auto end = std::find_if_not(s.rbegin(), std::string::const_reverse_iterator(begin), space).base();
  return std::string(begin, end);
}

}  // namespace

std::vector<std::int32_t> checked_members(const std::vector<std::int64_t>& list, int ranks,
                                          const std::string& source, const std::string& field) {
  std::vector<std::int32_t> members;
  std::vector<char> present(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t m : list) {
    if (m < 0 || m >= ranks) {
      throw Error(source, field,
                  fmt::format("rank {} is not a rank of the trace (ranks 0..{})", m, ranks - 1));
    }
    if (present[static_cast<std::size_t>(m)]++ != 0) {
      throw Error(source, field, fmt::format("rank {} is listed twice", m));
    }
    members.push_back(static_cast<std::int32_t>(m));
  }
  if (members.empty()) throw Error(source, field, "lists no ranks");
  return members;
}

std::vector<PytorchGroup> parse_pytorch_groups(const std::string& values, int ranks,
                                               const std::string& file, const std::string& node) {
  const auto fail = [&](const std::string& why) {
    return Error(file, node,
                 fmt::format("process-group metadata (inputs.values): {}; expected PyTorch's "
                             "list of {{\"pg_name\", \"pg_desc\", \"ranks\"}} objects "
                             "(docs/chakra.md)",
                             why));
  };
  const std::string text = trimmed(values);
  JsonDocument document;
  if (auto parsed = parse_json_value(text)) {
    document = std::move(*parsed);
  } else {
    const auto inner = python_single_string_list(text);
    if (inner) parsed = parse_json_value(*inner);
    if (!parsed) throw fail("not JSON");
    document = std::move(*parsed);
  }
  Json j = *document;
  // Unwrap [[...]] and ["<json text>"] (a list holding the list, or holding it as a string).
  for (int unwrap = 0; unwrap < 4 && j.is_array() && j.size() == 1; ++unwrap) {
    if (j[0].is_string()) {
      auto inner = parse_json_value(j[0].get<std::string>());
      if (!inner) throw fail("the quoted text is not JSON");
      j = **inner;
    } else if (j[0].is_array()) {
      Json inner = std::move(j[0]);
      j = std::move(inner);
    } else {
      break;
    }
  }
  if (!j.is_array()) throw fail(fmt::format("got a JSON {}", j.type_name()));
  std::vector<PytorchGroup> groups;
  for (const Json& entry : j) {
    if (!entry.is_object()) throw fail(fmt::format("an entry is a JSON {}", entry.type_name()));
    PytorchGroup g;
    g.node = node;
    const auto name = entry.find("pg_name");
    if (name == entry.end()) throw fail("an entry has no \"pg_name\"");
    if (name->is_string()) {
      g.pg_name = name->get<std::string>();
    } else if (name->is_number_integer()) {
      g.pg_name = json_text(*name, -1);
    } else {
      throw fail(fmt::format("\"pg_name\" is a JSON {}", name->type_name()));
    }
    const std::string field = fmt::format("{}: process group \"{}\"", node, g.pg_name);
    if (const auto desc = entry.find("pg_desc"); desc != entry.end() && desc->is_string()) {
      g.pg_desc = desc->get<std::string>();
    }
    const auto list = entry.find("ranks");
    if (list == entry.end()) throw fail(fmt::format("group \"{}\" has no \"ranks\"", g.pg_name));
    const std::vector<std::int64_t> raw = json_ranks(*list, file, field);
    if (!raw.empty()) g.ranks = checked_members(raw, ranks, file, field);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::pair<std::string, std::vector<std::int32_t>>> read_comm_groups(
    const std::string& path, int ranks) {
  const std::string text =
      read_text_file(path, "communicator-group file",
                     "a JSON object of rank lists such as {\"0\": [0, 1], \"1\": [2, 3]} "
                     "(docs/chakra.md)");
  // The common JSON front end refuses repeated keys, deep nesting and oversized documents.
  const JsonDocument document = parse_json_input(
      text, path, "every number in a communicator-group file is a rank (a small integer)");
  const Json& j = *document;
  if (!j.is_object()) {
    throw Error(path, "",
                fmt::format("expected a JSON object of rank lists such as {{\"0\": [0, 1]}}, got "
                            "a JSON {}",
                            j.type_name()));
  }
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> groups;
  for (const auto& [key, list] : j.items()) {
    const std::string field = group_field(key);
    groups.emplace_back(key, checked_members(json_ranks(list, path, field), ranks, path, field));
  }
  return groups;
}

Traffic classify(std::string_view name) {
  // Token-based so that "step" or "output" never read as EP or TP: split at anything that is not
  // a letter ("tp0", "ep_group", "DATA_PARALLEL_GROUP").
  std::vector<std::string> tokens(1);
  for (char c : name) {
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

void ProcessGroups::declare(const std::string& pg, GroupDeclaration declaration) {
  auto [it, inserted] = declared_.emplace(pg, declaration);
  if (inserted) return;
  const GroupDeclaration& first = it->second;
  bool same = first.members == declaration.members;
  if (!same && first.kind != declaration.kind) {
    auto a = first.members;
    auto b = declaration.members;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    same = a == b;
  }
  if (!same) {
    throw Error(declaration.source, declaration.field,
                fmt::format("lists ranks [{}] for process group '{}' but {} ({}) lists [{}]",
                            fmt::join(declaration.members, ", "), pg, first.source, first.field,
                            fmt::join(first.members, ", ")));
  }
}

void ProcessGroups::describe(const std::string& pg, const std::string& description) {
  if (!description.empty()) descriptions_.emplace(pg, description);
}

const GroupDeclaration* ProcessGroups::find(const std::string& pg) const {
  const auto it = declared_.find(pg);
  return it == declared_.end() ? nullptr : &it->second;
}

Traffic ProcessGroups::traffic(const std::string& pg) const {
  if (const Traffic t = classify(pg); t != Traffic::None) return t;
  if (const auto it = descriptions_.find(pg); it != descriptions_.end()) {
    if (const Traffic t = classify(it->second); t != Traffic::None) return t;
  }
  return Traffic::Other;
}

}  // namespace mfabric::workload::chakra
