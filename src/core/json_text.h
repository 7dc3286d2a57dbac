// The one way mfabric turns JSON into text for output. nlohmann::json::dump throws
// (type_error 316) on a string that is not valid UTF-8, which a file or model name can hold, and
// writes NaN and infinity as null; json_text never throws for the first and refuses the second,
// so every JSON file or line mfabric prints is valid and means what it says.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>

namespace mfabric {

// `value` as JSON text: pretty-printed with `indent` spaces, or on one line when indent < 0.
// Invalid UTF-8 in strings and keys is replaced by U+FFFD. A number that is not finite is an
// mfabric::Error whose field is its JSON path ("cost_usd.total"): it is a value mfabric could
// not compute, and printing null would hide that.
// A value nested deeper than kMaxJsonDepth (json_input.h) is an mfabric::Error too: nlohmann's
// dump recurses once per level.
std::string json_text(const nlohmann::json& value, int indent = 2);

// A short, printable description of `value` for an error message, whatever its size or depth:
// a scalar as JSON text (a string cut after `max_chars` bytes and its length given), an array
// or object by its size ("an array of 3", "an object of 2 members"), never dumped whole.
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 40);

// Streams a JSON object whose last member is a long array, one element at a time, so that a
// large document (a Perfetto trace of a million events, a routing trace) never exists in memory
// as a whole. Each element and the leading members go through json_text; only the brackets and
// commas between them are written here:
//
//   JsonArrayStream s(out, {{"displayTimeUnit", "ms"}}, "traceEvents", -1);
//   s.add(event);  ...  s.finish();
//
// With indent >= 0 each leading member and each element sits on its own line, indented, its
// value compact; with indent < 0 the document is compact with one element per line.
class JsonArrayStream {
 public:
  // `head` must be an object (possibly empty) without `array_key`.
  JsonArrayStream(std::ostream& out, const nlohmann::json& head, std::string_view array_key,
                  int indent);
  void add(const nlohmann::json& element);
  // Closes the array and the object. Required; the destructor does not write.
  void finish();

 private:
  std::ostream& out_;
  std::string element_indent_;
  std::string close_;
  bool first_ = true;
};

}  // namespace mfabric
