#include "core/yaml_fields.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/output_text.h"
#include "core/suggest.h"

namespace mfabric {
namespace {

// Edit distance, to suggest the field a typo meant.
}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return quote_input(node.Scalar());
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
      // The key is input: shown escaped and cut, like any quoted input.
      const std::string shown = key.size() > 80 ? quote_input(key) : printable(key);
      // closest_name skips fields much longer or shorter than the key: a 1 MiB key must not
      // cost 1 MiB x the field's length per field (the model harness's fuzzing found such a key
      // taking 11 s under the sanitizers).
      std::string hint;
      if (const auto k = closest_name(key, known_)) hint = fmt::format("did you mean '{}'? ", *k);
      throw Error(source_, field(shown),
                  fmt::format("unknown field; {}(known: {})", hint, join(known_)));
    }
    if (!seen.insert(key).second) throw Error(source_, field(printable(key)), "is given twice");
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
                fmt::format("expected a non-negative integer, got {}", quote_input(text)));
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
    throw Error(source_, field(key), fmt::format("expected a number, got {}", quote_input(text)));
  }
  return out;
}

std::optional<std::string> Fields::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return scalar(key, "text");
}

std::optional<bool> Fields::optional_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string text = ascii_lower(scalar(key, "true or false"));
  if (text == "true") return true;
  if (text == "false") return false;
  throw Error(source_, field(key),
              fmt::format("expected true or false, got {}", quote_input(text)));
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

namespace {

// yaml-cpp's marks are 0-based; editors count from 1.
std::string at(const YAML::Mark& mark) {
  return fmt::format("line {}, column {}", mark.line + 1, mark.column + 1);
}

// Counts the parser's events without building nodes, and stops it at the first event past a
// limit: a second document, more than kMaxYamlNodes nodes, nesting deeper than kMaxYamlDepth.
class YamlEventLimits : public YAML::EventHandler {
 public:
  explicit YamlEventLimits(std::string source) : source_(std::move(source)) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      throw Error(source_, "",
                  fmt::format("the file holds a second YAML document (a line '---' starts "
                              "another, at {}); mfabric reads one document per file",
                              at(mark)));
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void node(const YAML::Mark& mark) {
    if (++nodes_ > kMaxYamlNodes) {
      throw Error(source_, "",
                  fmt::format("the document has more than {} nodes (at {}); mfabric's YAML "
                              "files are far smaller",
                              kMaxYamlNodes, at(mark)));
    }
  }
  void open(const YAML::Mark& mark) {
    node(mark);
    if (++depth_ > kMaxYamlDepth) {
      throw Error(source_, "",
                  fmt::format("lists and maps are nested more than {} levels deep at {}; "
                              "mfabric's YAML files are a few levels deep",
                              kMaxYamlDepth, at(mark)));
    }
  }

  std::string source_;
  int documents_ = 0;
  std::int64_t nodes_ = 0;
  int depth_ = 0;
};

void check_yaml_events(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlEventLimits limits(source);
  while (parser.HandleNextDocument(limits)) {
  }
}

// Walks every node as a reader would, aliases expanded (an alias is the node it names, again),
// with an explicit stack: refuses nesting deeper than kMaxYamlDepth and more than kMaxYamlNodes
// nodes in all, so that no walk over the document (a reader's, the sweep's emitter) can recurse
// too deep, loop on an alias to its own ancestor or expand an alias bomb.
void check_yaml_shape(const YAML::Node& root, const std::string& source) {
  struct Item {
    YAML::Node node;
    int depth;
  };
  std::vector<Item> stack{{root, 0}};
  std::int64_t nodes = 0;
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    if (++nodes > kMaxYamlNodes) {
      throw Error(source, "",
                  fmt::format("the document has more than {} nodes once its aliases are "
                              "expanded (an alias repeats everything its anchor names); "
                              "mfabric's YAML files are far smaller",
                              kMaxYamlNodes));
    }
    if (!item.node.IsSequence() && !item.node.IsMap()) continue;
    if (item.depth >= kMaxYamlDepth) {
      throw Error(source, "",
                  fmt::format("lists and maps are nested more than {} levels deep at {}; "
                              "mfabric's YAML files are a few levels deep",
                              kMaxYamlDepth, at(item.node.Mark())));
    }
    for (const auto& child : item.node) {
      if (item.node.IsMap()) {
        stack.push_back({child.first, item.depth + 1});
        stack.push_back({child.second, item.depth + 1});
      } else {
        stack.push_back({child, item.depth + 1});
      }
    }
  }
}

}  // namespace

std::string read_yaml_file(const std::string& path, const std::string& what,
                           const std::string& expected) {
  return read_text_file(path, what, expected, kMaxYamlFileBytes);
}

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  if (static_cast<std::int64_t>(text.size()) > kMaxYamlFileBytes) {
    throw Error(source, "",
                fmt::format("the YAML file is {}, more than the {} mfabric reads (YAML files are "
                            "configuration; a parsed YAML node takes up to 250 times its text)",
                            describe_cap(static_cast<std::int64_t>(text.size())),
                            describe_cap(kMaxYamlFileBytes)));
  }
  YAML::Node root;
  try {
    // The events first, without building anything: a second document, nesting and the node
    // count are refused before yaml-cpp builds nodes (on some malformed text it builds a second
    // document without end: 31 bytes found by the fuzzer took 4 GB).
    check_yaml_events(text, source);
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw Error(source, "",
                fmt::format("YAML nested more than {} levels deep at {}; mfabric's YAML files are "
                            "a few levels deep",
                            e.depth(), at(e.mark)));
  } catch (const YAML::Exception& e) {
    throw Error(source, "", fmt::format("YAML syntax error at {}: {}", at(e.mark), e.msg));
  }
  check_yaml_shape(root, source);
  return root;
}

}  // namespace mfabric
