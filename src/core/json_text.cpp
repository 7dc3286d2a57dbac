#include "core/json_text.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/json_input.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

using nlohmann::json;

// The JSON path of the value a walk stands on: frames' keys and indices.
struct WalkFrame {
  const json* container;
  json::const_iterator next;
  std::size_t index;  // of `next` in an array
};

std::string walk_path(const std::vector<WalkFrame>& frames) {
  std::string path;
  for (const WalkFrame& f : frames) {
    // `next` has been advanced past the value being looked at.
    if (f.container->is_array()) {
      path += "[" + std::to_string(f.index - 1) + "]";
    } else {
      // Keys reach an error message, which may end up in a terminal or a JSON report.
      if (!path.empty()) path += '.';
      path += printable(std::prev(f.next).key());
    }
  }
  return path;
}

// Throws for the first number that is not finite, naming where it is, and for a value nested
// deeper than kMaxJsonDepth (nlohmann's dump recurses once per level). Walks with an explicit
// stack, so that no value can exhaust the call stack here either.
void require_finite(const json& value) {
  std::vector<WalkFrame> frames;
  const json* current = &value;
  while (true) {
    if (current != nullptr) {
      if (current->is_number_float()) {
        const double x = current->get<double>();
        if (!std::isfinite(x)) {
          throw Error("", walk_path(frames),
                      std::string("is ") + (std::isnan(x) ? "not a number (NaN)" : "infinite") +
                          ": the value is out of the range mfabric can compute (check the "
                          "inputs for values far too large); JSON cannot hold it");
        }
      } else if (current->is_structured() && !current->empty()) {
        if (frames.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
          throw Error("", walk_path(frames),
                      fmt::format("is nested more than {} levels deep; mfabric does not write "
                                  "JSON this deep",
                                  kMaxJsonDepth));
        }
        frames.push_back({current, current->cbegin(), 0});
      }
    }
    if (frames.empty()) return;
    WalkFrame& top = frames.back();
    if (top.next == top.container->cend()) {
      frames.pop_back();
      current = nullptr;
      continue;
    }
    current = &*top.next;
    ++top.next;
    ++top.index;
  }
}

}  // namespace

std::string json_text(const json& value, int indent) {
  require_finite(value);
  return value.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

std::string json_excerpt(const json& value, std::size_t max_chars) {
  switch (value.type()) {
    case json::value_t::array:
      return value.empty() ? "[]" : fmt::format("an array of {}", value.size());
    case json::value_t::object:
      return value.empty() ? "{}"
                           : fmt::format("an object of {} member{}", value.size(),
                                         value.size() == 1 ? "" : "s");
    case json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      auto quoted = [](const std::string& text) {
        return printable(json(text).dump(-1, ' ', false, json::error_handler_t::replace));
      };
      if (s.size() <= max_chars) return quoted(s);
      // Cut at a character boundary, not inside a multi-byte UTF-8 sequence.
      std::size_t cut = max_chars;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
        --cut;
      return quoted(s.substr(0, cut)) + fmt::format("... ({} bytes)", s.size());
    }
    case json::value_t::number_float: {
      const double x = value.get<double>();
      if (!std::isfinite(x)) return std::isnan(x) ? "NaN" : (x > 0 ? "infinity" : "-infinity");
      return value.dump();
    }
    default:
      // null, booleans, integers: short by nature.
      return value.dump();
  }
}

JsonArrayStream::JsonArrayStream(std::ostream& out, const json& head, std::string_view array_key,
                                 int indent)
    : out_(out) {
  if (!head.is_object() || head.contains(array_key)) {
    throw std::logic_error("JsonArrayStream: head must be an object without the array's key");
  }
  const std::string key = json_text(json(std::string(array_key)), -1);
  if (indent >= 0) {
    // One member per line, its value compact: "layers": [1, 4] stays on its line.
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    out_ << "{\n";
    for (auto it = head.begin(); it != head.end(); ++it) {
      out_ << pad << json_text(json(it.key()), -1) << ": " << json_text(it.value(), -1) << ",\n";
    }
    out_ << pad << key << ": [";
    element_indent_ = "\n" + pad + pad;
    close_ = "\n" + pad + "]\n}\n";
  } else {
    std::string text = json_text(head, -1);
    text.pop_back();  // the closing brace
    out_ << text << (head.empty() ? "" : ",") << key << ":[";
    element_indent_ = "\n";
    close_ = "\n]}\n";
  }
}

void JsonArrayStream::add(const json& element) {
  if (!first_) out_ << ',';
  first_ = false;
  out_ << element_indent_ << json_text(element, -1);
}

void JsonArrayStream::finish() {
  if (first_) {
    // An empty array: "[]" without the line break meant for the first element.
    out_ << "]" << close_.substr(close_.find(']') + 1);
    return;
  }
  out_ << close_;
}

}  // namespace mfabric
