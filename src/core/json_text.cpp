#include "core/json_text.h"

#include <cmath>
#include <ostream>
#include <stdexcept>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

using nlohmann::json;

std::string member_path(const std::string& parent, const std::string& key) {
  // Keys reach an error message, which may end up in a terminal or a JSON report.
  const std::string safe = printable(key);
  return parent.empty() ? safe : parent + "." + safe;
}

// Throws for the first number that is not finite, naming where it is.
void require_finite(const json& value, const std::string& path) {
  switch (value.type()) {
    case json::value_t::number_float: {
      const double x = value.get<double>();
      if (!std::isfinite(x)) {
        throw Error("", path,
                    std::string("is ") + (std::isnan(x) ? "not a number (NaN)" : "infinite") +
                        ": the value is out of the range mfabric can compute (check the inputs "
                        "for values far too large); JSON cannot hold it");
      }
      break;
    }
    case json::value_t::object:
      for (auto it = value.begin(); it != value.end(); ++it) {
        require_finite(it.value(), member_path(path, it.key()));
      }
      break;
    case json::value_t::array: {
      std::size_t i = 0;
      for (const json& element : value) {
        require_finite(element, path + "[" + std::to_string(i++) + "]");
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::string json_text(const json& value, int indent) {
  require_finite(value, "");
  return value.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
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
