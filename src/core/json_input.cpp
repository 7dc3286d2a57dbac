#include "core/json_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <new>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

using nlohmann::json;

// Estimated heap bytes of the parsed form, per piece: each allocation also pays the allocator's
// header (16 bytes with glibc). A value inside an array is the array's 16-byte slot (charged as
// the array's capacity grows); an object member is a std::map node (three pointers and a colour,
// the key's std::string, the value).
constexpr std::int64_t kAllocationOverhead = 16;
constexpr std::int64_t kContainerBytes = 48 + kAllocationOverhead;
constexpr std::int64_t kMemberBytes = 32 + 32 + 16 + kAllocationOverhead;
constexpr std::int64_t kStringBytes = 32 + kAllocationOverhead;

std::int64_t string_heap(const std::string& s) {
  // Short strings live inside the std::string object.
  return s.size() > 15 ? static_cast<std::int64_t>(s.size()) + 1 + kAllocationOverhead : 0;
}

// Builds the DOM from nlohmann's SAX events, so that the limits are checked as values arrive
// (before a document that cannot fit is built) and the partial document of a failed parse is
// freed with release_json.
class DomBuilder : public nlohmann::json_sax<json> {
 public:
  enum class Failure { none, syntax, number, depth, repeated_key, memory, out_of_memory };

  explicit DomBuilder(const JsonLimits& limits) : limits_(limits) {
    frames_.reserve(static_cast<std::size_t>(std::clamp(limits.max_depth, 0, 4096)) + 1);
  }
  DomBuilder(const DomBuilder&) = delete;
  DomBuilder& operator=(const DomBuilder&) = delete;
  ~DomBuilder() override { release_json(root_); }

  bool null() override {
    return guarded([&] { return place(json(nullptr)); });
  }
  bool boolean(bool b) override {
    return guarded([&] { return place(json(b)); });
  }
  bool number_integer(number_integer_t v) override {
    return guarded([&] { return place(json(v)); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return guarded([&] { return place(json(v)); });
  }
  bool number_float(number_float_t v, const string_t&) override {
    return guarded([&] { return place(json(v)); });
  }
  bool string(string_t& s) override {
    return guarded(
        [&] { return charge(kStringBytes + string_heap(s)) && place(json(std::move(s))); });
  }
  bool binary(binary_t& b) override {
    // JSON text has no binary values; kept for completeness of the interface.
    return guarded([&] {
      return charge(kStringBytes + static_cast<std::int64_t>(b.size())) &&
             place(json::binary(std::move(b)));
    });
  }
  bool start_object(std::size_t) override {
    return guarded([&] { return open(false); });
  }
  bool key(string_t& k) override {
    return guarded([&] {
      Frame& frame = frames_.back();
      auto& object = frame.value->get_ref<json::object_t&>();
      frame.key = k;
      if (object.contains(k)) return fail(Failure::repeated_key);
      if (!charge(kMemberBytes + string_heap(k))) return false;
      member_ = &object[std::move(k)];
      return true;
    });
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    return guarded([&] { return open(true); });
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const json::exception& e) override {
    // nlohmann reports a number too large for a double (id 406) here too, with its position.
    position_ = position;
    token_ = token;
    message_ = e.what();
    path_ = path();
    failure_ = e.id == 406 ? Failure::number : Failure::syntax;
    return false;
  }

  Failure failure() const { return failure_; }
  std::size_t position() const { return position_; }
  const std::string& token() const { return token_; }
  const std::string& message() const { return message_; }
  // The JSON path where the parse stopped.
  const std::string& failure_path() const { return path_; }
  std::int64_t charged() const { return charged_; }
  std::int64_t values() const { return values_; }

  json take() { return std::move(root_); }

 private:
  struct Frame {
    json* value;
    bool array;
    std::size_t count;
    std::string key;
  };

  template <class F>
  bool guarded(F&& f) {
    try {
      return f();
    } catch (const std::bad_alloc&) {
      return fail(Failure::out_of_memory);
    }
  }

  bool fail(Failure failure) {
    failure_ = failure;
    path_ = path();
    return false;
  }

  bool charge(std::int64_t bytes) {
    charged_ += bytes;
    if (charged_ > limits_.max_memory) return fail(Failure::memory);
    return true;
  }

  bool place(json&& value) {
    ++values_;
    if (frames_.empty()) {
      root_ = std::move(value);
      return true;
    }
    Frame& parent = frames_.back();
    if (parent.array) {
      auto& array = parent.value->get_ref<json::array_t&>();
      const std::size_t before = array.capacity();
      if (array.size() == before) {
        // Charged before the vector grows, so that the limit stops a document before the
        // allocation that would exhaust memory.
        const std::size_t after = std::max<std::size_t>(1, 2 * before);
        if (!charge(static_cast<std::int64_t>((after - before) * sizeof(json)) +
                    (before == 0 ? kAllocationOverhead : 0))) {
          return false;
        }
        array.reserve(after);
      }
      array.push_back(std::move(value));
      ++parent.count;
      last_ = &array.back();
      return true;
    }
    *member_ = std::move(value);
    last_ = member_;
    return true;
  }

  bool open(bool array) {
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      // Counted before the container is entered: the path names the deepest one allowed.
      return fail(Failure::depth);
    }
    if (!charge(kContainerBytes)) return false;
    if (!place(array ? json::array() : json::object())) return false;
    frames_.push_back({frames_.empty() ? &root_ : last_, array, 0, ""});
    return true;
  }

  // "records[3].tokens[2]": at most the first eight and the last two steps of a deep path.
  std::string path() const {
    std::string out;
    const std::size_t n = frames_.size();
    for (std::size_t f = 0; f < n; ++f) {
      if (n > 12 && f == 8) {
        out += fmt::format("...({} levels)...", n - 10);
        f = n - 3;
        continue;
      }
      const Frame& frame = frames_[f];
      if (frame.array) {
        // An enclosing array has counted the container being read; the innermost one has not
        // yet counted the value that failed.
        const std::size_t index =
            f + 1 < n ? (frame.count == 0 ? 0 : frame.count - 1) : frame.count;
        out += fmt::format("[{}]", index);
      } else {
        if (!out.empty()) out += '.';
        out += printable(frame.key.size() > 64 ? frame.key.substr(0, 61) + "..." : frame.key);
      }
    }
    return out;
  }

  JsonLimits limits_;
  json root_;
  std::vector<Frame> frames_;
  json* member_ = nullptr;
  json* last_ = nullptr;
  std::int64_t charged_ = 0;
  std::int64_t values_ = 0;
  Failure failure_ = Failure::none;
  std::size_t position_ = 0;
  std::string token_;
  std::string message_;
  std::string path_;
};

// 1-based line and column of byte `offset` of `text`.
std::pair<std::int64_t, std::int64_t> line_and_column(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::size_t line_start = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const std::size_t column = line_start == std::string::npos ? offset + 1 : offset - line_start;
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
  return {line, static_cast<std::int64_t>(column)};
}

}  // namespace

void release_json(json& value) noexcept {
  // Takes the last leaf (a scalar or an empty container, whose destruction allocates nothing)
  // off the deepest last container, over and over. The path down is kept in a fixed array, so
  // that a flat or shallow document is freed in linear time; below its depth each leaf costs a
  // walk down from the deepest container remembered.
  constexpr std::size_t kPath = 64;
  std::array<json*, kPath> path{};
  std::size_t depth = 0;
  auto last_child = [](json& parent) -> json& {
    if (parent.is_array()) return parent.get_ref<json::array_t&>().back();
    return std::prev(parent.get_ref<json::object_t&>().end())->second;
  };
  auto drop_last_child = [](json& parent) {
    if (parent.is_array()) {
      parent.get_ref<json::array_t&>().pop_back();
    } else {
      auto& object = parent.get_ref<json::object_t&>();
      object.erase(std::prev(object.end()));
    }
  };
  json* parent = &value;
  while (true) {
    if (!parent->is_structured() || parent->empty()) {
      if (depth == 0) break;
      parent = path[--depth];
      continue;
    }
    json& child = last_child(*parent);
    if (child.is_structured() && !child.empty() && parent->size() == 1) {
      // An only child that is a container takes its parent's place: one level fewer, no
      // allocation (the parent is emptied before it is overwritten), so a long chain of
      // single-element containers is freed in linear time.
      json only = std::move(child);
      drop_last_child(*parent);
      *parent = std::move(only);
      continue;
    }
    if (child.is_structured() && !child.empty()) {
      if (depth < kPath) {
        path[depth++] = parent;
        parent = &child;
        continue;
      }
      // Too deep for the fixed path: drop one leaf of the deepest branch, then look again from
      // the deepest container remembered.
      json* deeper = &child;
      while (true) {
        json& next = last_child(*deeper);
        if (!next.is_structured() || next.empty()) break;
        deeper = &next;
      }
      drop_last_child(*deeper);
      continue;
    }
    drop_last_child(*parent);
  }
  value = nullptr;
}

JsonDocument parse_json_input(const std::string& text, const std::string& source,
                              const std::string& number_rule, const JsonLimits& limits) {
  DomBuilder builder(limits);
  bool parsed = false;
  try {
    parsed = json::sax_parse(text, &builder);
  } catch (const std::bad_alloc&) {
    // The lexer's own buffers (a huge string token) can run out of memory outside the handler.
    // The builder's destructor frees the partial document without allocating.
    throw Error(source, "",
                fmt::format("out of memory reading this JSON document of {}",
                            describe_cap(static_cast<std::int64_t>(text.size()))));
  }
  if (parsed && builder.failure() == DomBuilder::Failure::none) return JsonDocument(builder.take());

  using Failure = DomBuilder::Failure;
  const std::string& path = builder.failure_path();
  switch (builder.failure()) {
    case Failure::syntax: {
      // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep "parse error at line..".
      std::string what = builder.message();
      if (auto tag = what.find("] "); what.starts_with("[json.") && tag != std::string::npos) {
        what.erase(0, tag + 2);
      }
      throw Error(source, "", "invalid JSON: " + what);
    }
    case Failure::number: {
      // The position is just past the offending token.
      const std::size_t end = std::min(text.size(), builder.position());
      const std::size_t start = end - std::min(end, builder.token().size());
      const auto [line, column] = line_and_column(text, start);
      const std::string token = builder.token().empty() ? "?" : builder.token();
      throw Error(source, path,
                  fmt::format("number {} at line {}, column {} is out of range; {}",
                              printable(token.size() > 40 ? token.substr(0, 37) + "..." : token),
                              line, column, number_rule));
    }
    case Failure::depth:
      throw Error(source, path,
                  fmt::format("arrays and objects are nested more than {} levels deep here; "
                              "mfabric's JSON files are a few levels deep",
                              limits.max_depth));
    case Failure::repeated_key:
      throw Error(source, path,
                  "this key appears twice in one object; JSON keys must be unique (a reader "
                  "would keep only one of the values)");
    case Failure::memory:
      throw Error(source, path,
                  fmt::format("the parsed document would take more than the {} of memory "
                              "allowed for one JSON input ({} values read of a {} file)",
                              describe_cap(limits.max_memory), builder.values(),
                              describe_cap(static_cast<std::int64_t>(text.size()))));
    case Failure::out_of_memory:
      throw Error(source, path,
                  fmt::format("out of memory after {} values (about {} estimated) of a {} "
                              "JSON document",
                              builder.values(), describe_cap(builder.charged()),
                              describe_cap(static_cast<std::int64_t>(text.size()))));
    case Failure::none:
      break;
  }
  // sax_parse returned false without a handler saying why: nothing in nlohmann does this.
  throw Error(source, "", "invalid JSON");
}

}  // namespace mfabric
