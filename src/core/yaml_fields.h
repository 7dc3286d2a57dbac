// Strict reading of YAML maps for every file mfabric reads (models, experiments, ...): a map has
// a fixed set of fields; an unknown field (with a "did you mean" hint) or a repeated one is an
// error naming the file and the field path, and typed getters say what they expected.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/input_files.h"
#include "core/units.h"

namespace mfabric {

// "'abc'", "a list", "a map" or "nothing", for messages.
std::string describe(const YAML::Node& node);
// "a, b, c".
std::string join(const std::vector<std::string>& items);

class Fields {
 public:
  // Throws mfabric::Error(source, path, ...) if `node` is not a map, has a key outside `known`,
  // or repeats a key.
  Fields(const YAML::Node& node, std::string source, std::string path,
         std::vector<std::string> known);

  std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  bool has(const std::string& key) const { return static_cast<bool>(node_[key]); }
  YAML::Node get(const std::string& key) const { return node_[key]; }
  const std::string& source() const { return source_; }

  // A decimal integer (yaml-cpp's as<int>() would also take hex and octal forms).
  std::optional<int> optional_int(const std::string& key) const;
  int required_int(const std::string& key) const;
  std::optional<std::uint64_t> optional_uint64(const std::string& key) const;
  std::optional<double> optional_double(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  std::optional<bool> optional_bool(const std::string& key) const;
  // Values with units, parsed by core/units.h ("25ms", "400G", "1GiB").
  std::optional<Time> optional_time(const std::string& key) const;
  std::optional<Rate> optional_rate(const std::string& key) const;
  std::optional<Bytes> optional_bytes(const std::string& key) const;

 private:
  std::string scalar(const std::string& key, const char* expected) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::vector<std::string> known_;
};

// Parses a whole YAML document, turning yaml-cpp's exceptions into mfabric::Error with the line
// and column.
YAML::Node parse_yaml(const std::string& text, const std::string& source);

}  // namespace mfabric
