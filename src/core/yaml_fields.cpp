#include "core/yaml_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"

namespace mfabric {
namespace {

// Edit distance, to suggest the field a typo meant.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

// yaml-cpp keeps both copies of a repeated key and lookups see only the first, so a repeated key
// would otherwise silently lose one value: keys are checked up front.
Fields::Fields(const YAML::Node& node, std::string source, std::string path,
               std::vector<std::string> known)
    : node_(node), source_(std::move(source)), path_(std::move(path)), known_(std::move(known)) {
  if (!node_.IsMap()) {
    throw Error(source_, path_,
                fmt::format("expected a map ({}), got {}", join(known_), describe(node_)));
  }
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      throw Error(source_, path_,
                  fmt::format("expected field names as keys, got {}", describe(entry.first)));
    }
    const std::string& key = entry.first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      std::string hint;
      for (const std::string& k : known_) {
        if (edit_distance(key, k) <= 2) {
          hint = fmt::format("did you mean '{}'? ", k);
          break;
        }
      }
      throw Error(source_, field(key),
                  fmt::format("unknown field; {}(known: {})", hint, join(known_)));
    }
    if (!seen.insert(key).second) throw Error(source_, field(key), "is given twice");
  }
}

std::string Fields::scalar(const std::string& key, const char* expected) const {
  const YAML::Node value = node_[key];
  if (!value.IsScalar()) {
    throw Error(source_, field(key), fmt::format("expected {}, got {}", expected, describe(value)));
  }
  return value.Scalar();
}

std::optional<int> Fields::optional_int(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) return std::nullopt;
  if (value.IsScalar()) {
    const std::string& text = value.Scalar();
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (begin != end && *begin == '+') ++begin;
    int out = 0;
    auto [ptr, ec] = std::from_chars(begin, end, out);
    if (ec == std::errc() && ptr == end && begin != end) return out;
    if (ec == std::errc::result_out_of_range) {
      throw Error(source_, field(key), fmt::format("integer out of range: {}", describe(value)));
    }
  }
  throw Error(source_, field(key), fmt::format("expected an integer, got {}", describe(value)));
}

int Fields::required_int(const std::string& key) const {
  if (!has(key)) throw Error(source_, field(key), "is required; expected an integer");
  return *optional_int(key);
}

std::optional<std::uint64_t> Fields::optional_uint64(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = scalar(key, "a non-negative integer");
  std::uint64_t out = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    throw Error(source_, field(key),
                fmt::format("expected a non-negative integer, got '{}'", text));
  }
  return out;
}

std::optional<double> Fields::optional_double(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = scalar(key, "a number");
  double out = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() ||
      !std::isfinite(out)) {
    throw Error(source_, field(key), fmt::format("expected a number, got '{}'", text));
  }
  return out;
}

std::optional<std::string> Fields::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return scalar(key, "text");
}

std::optional<bool> Fields::optional_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  std::string text = scalar(key, "true or false");
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true") return true;
  if (text == "false") return false;
  throw Error(source_, field(key), fmt::format("expected true or false, got '{}'", text));
}

std::optional<Time> Fields::optional_time(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = scalar(key, "a time such as '25ms'");
  return with_context(source_, field(key), [&] { return parse_time(text); });
}

std::optional<Rate> Fields::optional_rate(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = scalar(key, "a rate such as '400G'");
  return with_context(source_, field(key), [&] { return parse_rate(text); });
}

std::optional<Bytes> Fields::optional_bytes(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = scalar(key, "a size such as '1GiB'");
  return with_context(source_, field(key), [&] { return parse_bytes(text); });
}

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(source, "",
                fmt::format("YAML syntax error at line {}, column {}: {}", e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
}


}  // namespace mfabric
