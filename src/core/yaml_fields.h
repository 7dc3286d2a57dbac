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

// Limits of every YAML input (experiments, models, price files, sweeps: configuration), checked
// by parse_yaml (docs/reliability.md, "Limits on input"). A YAML node costs yaml-cpp up to 250
// bytes per byte of text (a flow list of small numbers), so the size cap keeps a parse under
// about 256 MB; the node count bounds what aliases can expand to.
inline constexpr std::int64_t kMaxYamlFileBytes = std::int64_t{1} << 20;  // 1 MiB
inline constexpr std::int64_t kMaxYamlNodes = 1'000'000;
inline constexpr int kMaxYamlDepth = 64;

// Reads a YAML input file: read_text_file with the YAML size cap.
std::string read_yaml_file(const std::string& path, const std::string& what,
                           const std::string& expected);

// Parses YAML text holding one document (none: a null node), turning yaml-cpp's exceptions into
// mfabric::Error with the line and column. Refused, each as one line: text over
// kMaxYamlFileBytes, a second document, nesting deeper than kMaxYamlDepth (or yaml-cpp's own
// 500), and more than kMaxYamlNodes nodes with aliases expanded (an alias bomb, or an alias to
// its own ancestor).
YAML::Node parse_yaml(const std::string& text, const std::string& source);

}  // namespace mfabric
