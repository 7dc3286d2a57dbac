// JSON input files (routing traces, demand files, communicator groups, sweep journals): one
// parser front end so that every JSON input reports errors the same way and is held to the same
// limits (docs/reliability.md, "Limits on input"):
//  - nesting: arrays and objects nested at most kMaxJsonDepth deep (mfabric's JSON files are a
//    few levels deep; without a bound, 100,000 brackets reach recursive code and overflow the
//    stack);
//  - memory: the parsed document's estimated size, counted as values arrive, at most
//    kMaxJsonMemory (a 240 MB file of small numbers would take nearly 4 GB as a DOM);
//  - a key repeated in one object is an error (nlohmann would silently keep the last one).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace mfabric {

inline constexpr int kMaxJsonDepth = 256;
inline constexpr std::int64_t kMaxJsonMemory = std::int64_t{2} << 30;  // 2 GiB

struct JsonLimits {
  int max_depth = kMaxJsonDepth;
  std::int64_t max_memory = kMaxJsonMemory;
};

// Frees `value`'s tree without allocating. nlohmann's destructor moves a container's children
// to a heap-allocated stack first, which throws inside a noexcept destructor (std::terminate)
// when a large document is destroyed because memory ran out; this takes leaves off one at a time.
void release_json(nlohmann::json& value) noexcept;

// A parsed JSON document. Its destructor releases the tree with release_json, so that a
// std::bad_alloc thrown while a reader converts the document unwinds to main's "out of memory"
// line instead of terminating.
class JsonDocument {
 public:
  JsonDocument() = default;
  explicit JsonDocument(nlohmann::json value) : value_(std::move(value)) {}
  JsonDocument(JsonDocument&&) = default;
  JsonDocument& operator=(JsonDocument&& other) noexcept {
    release_json(value_);
    value_ = std::move(other.value_);
    return *this;
  }
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
  ~JsonDocument() { release_json(value_); }

  const nlohmann::json& root() const { return value_; }
  const nlohmann::json& operator*() const { return value_; }
  const nlohmann::json* operator->() const { return &value_; }

 private:
  nlohmann::json value_;
};

// Parses `text`, the contents of `source`. Errors are mfabric::Error naming the source:
//  - a syntax error with nlohmann's line and column ("invalid JSON: parse error at line 3,
//    column 5: ...");
//  - a number too large for a double ("1e999") with its JSON path as the field
//    ("records[3].tokens[2][1]"), its line and column, and `number_rule` saying what numbers
//    the file holds;
//  - nesting deeper than limits.max_depth, a repeated key, or an estimated size above
//    limits.max_memory, with the JSON path where it happened;
//  - running out of memory while parsing ("out of memory reading ..."), the partial document
//    freed without allocating.
JsonDocument parse_json_input(const std::string& text, const std::string& source,
                              const std::string& number_rule, const JsonLimits& limits = {});

}  // namespace mfabric
