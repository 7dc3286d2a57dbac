#include "core/json_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace mfabric {
namespace {

using nlohmann::json;

// Where the DOM parser gave up with an error that carries no position: the SAX parser reports
// the byte offset of the same error; this handler tracks the JSON path to it.
class JsonErrorLocator : public nlohmann::json_sax<json> {
 public:
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& token,
                   const json::exception&) override {
    position_ = position;
    token_ = token;
    path_.clear();
    for (std::size_t f = 0; f < frames_.size(); ++f) {
      const Frame& frame = frames_[f];
      if (frame.array) {
        // An enclosing array has counted the container being read; the innermost one has not
        // yet counted the value that failed.
        const std::size_t index = f + 1 < frames_.size() ? frame.count - 1 : frame.count;
        path_ += '[';
        path_ += std::to_string(index);
        path_ += ']';
      } else {
        if (!path_.empty()) path_ += '.';
        path_ += frame.key;
      }
    }
    return false;
  }

  std::size_t position() const { return position_; }
  const std::string& token() const { return token_; }
  const std::string& path() const { return path_; }

 private:
  struct Frame {
    bool array;
    std::size_t count;
    std::string key;
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
    return true;
  }
  bool open(bool array) {
    value();
    frames_.push_back({array, 0, ""});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  std::vector<Frame> frames_;
  std::size_t position_ = 0;
  std::string token_;
  std::string path_;
};

}  // namespace

json parse_json_input(const std::string& text, const std::string& source,
                      const std::string& number_rule) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep "parse error at line..".
    std::string what = e.what();
    if (auto tag = what.find("] "); what.starts_with("[json.") && tag != std::string::npos) {
      what.erase(0, tag + 2);
    }
    throw Error(source, "", "invalid JSON: " + what);
  } catch (const json::exception&) {
    JsonErrorLocator locator;
    json::sax_parse(text, &locator);
    // The position is just past the offending token.
    const std::size_t end = std::min(text.size(), locator.position());
    const std::size_t start = end - std::min(end, locator.token().size());
    const std::size_t line_start = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
    const std::size_t column = line_start == std::string::npos ? start + 1 : start - line_start;
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(start), '\n');
    throw Error(
        source, locator.path(),
        fmt::format("number {} at line {}, column {} is out of range; {}",
                    locator.token().empty() ? "?" : locator.token(), line, column, number_rule));
  }
}

}  // namespace mfabric
