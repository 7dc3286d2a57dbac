#include "control/demand_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_input.h"
#include "core/json_text.h"

namespace mfabric::control {
namespace {

using nlohmann::json;

JsonDocument parse_document(const std::string& text, const std::string& source) {
  return parse_json_input(text, source,
                          "every number in a demand file is a non-negative count or byte size");
}

std::string show(const json& v) {
  return json_excerpt(v);
}

// A whole number in [min, max]: a JSON integer, or a float with no fractional part (1e9).
std::int64_t whole_number(const json& v, const std::string& field, std::int64_t min,
                          std::int64_t max, const char* what) {
  std::optional<double> x;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(max) && static_cast<std::int64_t>(u) >= min) {
      return static_cast<std::int64_t>(u);
    }
    x = static_cast<double>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= min && i <= max) return i;
    x = static_cast<double>(i);
  } else if (v.is_number_float()) {
    x = v.get<double>();
    if (std::isfinite(*x) && *x == std::floor(*x) && *x >= static_cast<double>(min) &&
        *x <= static_cast<double>(max)) {
      return static_cast<std::int64_t>(*x);
    }
  }
  if (x && std::isfinite(*x) && *x == std::floor(*x)) {
    throw Error("", field,
                fmt::format("expected {} from {} to {}, got {}", what, min, max, show(v)));
  }
  throw Error("", field, fmt::format("expected {}, got {}", what, show(v)));
}

// A rectangular matrix of whole numbers in [0, max] (row-major); rows and columns at most
// max_rows / max_cols, checked before anything is copied.
std::vector<std::int64_t> whole_matrix(const json& m, const std::string& name, std::int64_t max,
                                       std::size_t max_rows, std::size_t max_cols, int& rows,
                                       int& cols, const char* what) {
  if (!m.is_array() || m.empty()) {
    throw Error("", name, "expected a non-empty array of rows (arrays of numbers)");
  }
  if (m.size() > max_rows) {
    throw Error("", name, fmt::format("{} rows is more than the {} allowed", m.size(), max_rows));
  }
  std::vector<std::int64_t> out;
  for (std::size_t r = 0; r < m.size(); ++r) {
    const std::string row_name = fmt::format("{}[{}]", name, r);
    const json& row = m[r];
    if (!row.is_array() || row.empty()) throw Error("", row_name, "expected a non-empty array");
    if (row.size() != m[0].size()) {
      throw Error("", row_name,
                  fmt::format("ragged matrix: {} entries, row 0 has {}", row.size(), m[0].size()));
    }
    if (row.size() > max_cols) {
      throw Error("", row_name,
                  fmt::format("{} columns is more than the {} allowed", row.size(), max_cols));
    }
    for (std::size_t c = 0; c < row.size(); ++c) {
      out.push_back(whole_number(row[c], fmt::format("{}[{}]", row_name, c), 0, max, what));
    }
  }
  rows = static_cast<int>(m.size());
  cols = static_cast<int>(m[0].size());
  return out;
}

const json& member(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end()) throw Error("", key, "missing (needed with \"tokens\")");
  return *it;
}

ServerDemand demand_from_document(const json& doc) {
  if (!doc.is_object()) {
    throw Error("", "",
                "expected a JSON object with \"demand_bytes\" or \"tokens\" (docs/cli.md, "
                "mfabric plan)");
  }
  static constexpr std::string_view kKnown[] = {"demand_bytes", "tokens", "ep_ranks_per_server",
                                                "experts_per_rank", "bytes_per_token"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) == std::end(kKnown)) {
      throw Error("", it.key(),
                  "unknown key (known: demand_bytes, tokens, ep_ranks_per_server, "
                  "experts_per_rank, bytes_per_token)");
    }
  }
  const bool has_bytes = doc.contains("demand_bytes");
  const bool has_tokens = doc.contains("tokens");
  if (has_bytes == has_tokens) {
    throw Error("", "", "expected exactly one of \"demand_bytes\" and \"tokens\"");
  }
  const auto servers_cap = static_cast<std::size_t>(kMaxRegionServers);
  int rows = 0, cols = 0;
  if (has_bytes) {
    for (const char* key : {"ep_ranks_per_server", "experts_per_rank", "bytes_per_token"}) {
      if (doc.contains(key)) throw Error("", key, "only goes with \"tokens\"");
    }
    const std::vector<std::int64_t> bytes =
        whole_matrix(doc["demand_bytes"], "demand_bytes", kMaxPairBytes, servers_cap, servers_cap,
                     rows, cols, "a non-negative whole number of bytes");
    if (rows != cols) {
      throw Error(
          "", "demand_bytes",
          fmt::format("expected a square server x server matrix, got {} rows of {}", rows, cols));
    }
    return demand_from_server_bytes(bytes, rows);
  }
  TokenLayout layout;
  layout.ep_ranks_per_server =
      static_cast<int>(whole_number(member(doc, "ep_ranks_per_server"), "ep_ranks_per_server", 1,
                                    1024, "a whole number of EP ranks per server"));
  layout.experts_per_rank =
      static_cast<int>(whole_number(member(doc, "experts_per_rank"), "experts_per_rank", 1, 65536,
                                    "a whole number of experts per rank"));
  layout.bytes_per_token = whole_number(member(doc, "bytes_per_token"), "bytes_per_token", 1,
                                        kMaxPairBytes, "a whole number of bytes per token");
  const std::size_t max_ranks = servers_cap * static_cast<std::size_t>(layout.ep_ranks_per_server);
  const std::vector<std::int64_t> tokens =
      whole_matrix(doc["tokens"], "tokens", kMaxPairBytes, max_ranks,
                   max_ranks * static_cast<std::size_t>(layout.experts_per_rank), rows, cols,
                   "a non-negative whole number of tokens");
  return demand_from_tokens(tokens, rows, cols, layout);
}

}  // namespace

ServerDemand parse_demand_json(const std::string& text, const std::string& source) {
  const JsonDocument doc = parse_document(text, source);
  return with_context(source, "", [&] { return demand_from_document(*doc); });
}

ServerDemand read_demand_file(const std::string& path) {
  const std::string text =
      read_text_file(path, "demand file", "a JSON demand file (docs/control-plane.md)");
  return parse_demand_json(text, path);
}

}  // namespace mfabric::control
