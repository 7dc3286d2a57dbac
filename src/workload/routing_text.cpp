// Reading the text forms of a routing trace (docs/routing.md): records
// "<iteration> <layer> <micro_batch> [[...]]" and the authors' bare [ep x experts] matrix, with
// '#' comments. Errors name the file and the line.
#include "workload/routing_formats.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/error.h"

namespace mfabric::workload::routing_format {
namespace {

// ---------------------------------------------------------------------------------------------
// Text and bare-matrix formats.

// A parse failure at a byte offset of the (comment-blanked) file; turned into "line N".
struct TextError {
  std::size_t pos;
  std::string message;
};

int line_of(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

// Replaces every '#' comment (to the end of its line) by spaces; offsets, and so line numbers,
// stay valid.
std::string blank_comments(std::string text) {
  bool comment = false;
  for (char& c : text) {
    if (c == '\n') {
      comment = false;
    } else if (c == '#' || comment) {
      comment = true;
      c = ' ';
    }
  }
  return text;
}

struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<std::int32_t> values;  // row-major
};

class TextCursor {
 public:
  TextCursor(std::string_view text, std::size_t pos, bool single_line)
      : text_(text), pos_(pos), single_line_(single_line) {}

  std::size_t pos() const { return pos_; }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size() || (single_line_ && text_[pos_] == '\n');
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void expect(char c, const std::string& where) {
    if (peek() != c) {
      throw TextError{pos_, where + ": expected '" + std::string(1, c) + "', got " + describe()};
    }
    ++pos_;
  }
  // The next word: a run of characters up to whitespace or a bracket or comma.
  std::string_view word() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != ',' &&
           text_[pos_] != '[' && text_[pos_] != ']') {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  std::string describe() {
    skip_space();
    if (pos_ >= text_.size() || (single_line_ && text_[pos_] == '\n')) return "end of line";
    std::size_t end = pos_;
    while (end < text_.size() && end - pos_ < 20 && !is_space(text_[end]))
      ++end;
    return "'" + std::string(text_.substr(pos_, std::max<std::size_t>(end - pos_, 1))) + "'";
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_]) && !(single_line_ && text_[pos_] == '\n')) {
      ++pos_;
    }
  }

  std::string_view text_;
  std::size_t pos_;
  bool single_line_;
};

// A non-negative integer that fits `max`; `what` names it in the message.
std::int64_t parse_count(TextCursor& cur, const std::string& what, std::int64_t max) {
  const std::size_t at = cur.pos();
  const std::string_view w = cur.word();
  if (w.empty())
    throw TextError{at, what + ": expected a non-negative integer, got " + cur.describe()};
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
  if (ec == std::errc() && end == w.data() + w.size()) {
    if (value < 0) {
      throw TextError{at,
                      what + ": expected a non-negative integer, got negative " + std::string(w)};
    }
    if (value > max) {
      throw TextError{
          at, what + ": " + std::string(w) + " is too large (at most " + std::to_string(max) + ")"};
    }
    return value;
  }
  if (ec == std::errc::result_out_of_range) {
    throw TextError{
        at, what + ": " + std::string(w) + " is too large (at most " + std::to_string(max) + ")"};
  }
  throw TextError{at, what + ": expected a non-negative integer, got '" + std::string(w) + "'"};
}

// "[[a, b, ...], [c, d, ...], ...]": rows of equal length, at least one row and one column.
Matrix parse_matrix(TextCursor& cur) {
  Matrix m;
  const std::size_t start = cur.pos();
  cur.expect('[', "matrix");
  for (;;) {
    const std::string row_name = "tokens[" + std::to_string(m.rows) + "]";
    const std::size_t row_start = cur.pos();
    cur.expect('[', row_name);
    int cols = 0;
    if (cur.peek() != ']') {
      for (;;) {
        m.values.push_back(static_cast<std::int32_t>(
            parse_count(cur, row_name + "[" + std::to_string(cols) + "]", kMaxCount)));
        ++cols;
        if (cur.peek() != ',') break;
        cur.expect(',', row_name);
      }
    }
    cur.expect(']', row_name);
    if (cols == 0) throw TextError{row_start, row_name + ": empty row"};
    if (m.rows == 0) {
      m.cols = cols;
    } else if (cols != m.cols) {
      throw TextError{row_start, row_name + ": ragged matrix: " + std::to_string(cols) +
                                     " counts, row 0 has " + std::to_string(m.cols)};
    }
    ++m.rows;
    if (cur.peek() != ',') break;
    cur.expect(',', "matrix");
  }
  cur.expect(']', "matrix");
  if (m.rows == 0) throw TextError{start, "empty matrix"};
  return m;
}

RoutingTrace read_bare_matrix(const std::string& path, const std::string& text, std::size_t start) {
  try {
    TextCursor cur(text, start, /*single_line=*/false);
    Matrix m = parse_matrix(cur);
    if (!cur.at_end()) {
      throw TextError{cur.pos(), "unexpected " + cur.describe() + " after the matrix"};
    }
    check_trace_size(path, m.rows, m.cols, 1, 1, 1);
    RoutingTrace trace(m.rows, m.cols, 1, {0}, 1);
    std::copy(m.values.begin(), m.values.end(), trace.matrix(0, 0, 0).begin());
    trace.mark_static();
    return trace;
  } catch (const TextError& e) {
    throw Error(path, "line " + std::to_string(line_of(text, e.pos)), e.message);
  }
}

struct TextRecord {
  int iteration, layer, micro_batch, line;
  std::vector<std::int32_t> values;
};

RoutingTrace read_text(const std::string& path, const std::string& text) {
  std::vector<TextRecord> records;
  std::map<std::tuple<int, int, int>, int> seen;  // key -> line
  int ep = 0, experts = 0, first_line = 0;
  std::size_t line_start = 0;
  for (int line = 1; line_start < text.size(); ++line) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string where = "line " + std::to_string(line);
    try {
      TextCursor cur(text, line_start, /*single_line=*/true);
      if (!cur.at_end()) {
        TextRecord rec{};
        rec.line = line;
        const int max_index = std::numeric_limits<int>::max() - 1;
        rec.iteration = static_cast<int>(parse_count(cur, "iteration", max_index));
        rec.layer = static_cast<int>(parse_count(cur, "layer", max_index));
        rec.micro_batch = static_cast<int>(parse_count(cur, "micro_batch", max_index));
        Matrix m = parse_matrix(cur);
        if (!cur.at_end()) {
          throw TextError{cur.pos(), "unexpected " + cur.describe() + " after the matrix"};
        }
        if (records.empty()) {
          ep = m.rows;
          experts = m.cols;
          first_line = line;
        } else if (m.rows != ep) {
          throw TextError{line_start, "tokens: " + std::to_string(m.rows) +
                                          " rows, expected ep = " + std::to_string(ep) +
                                          " (as on line " + std::to_string(first_line) + ")"};
        } else if (m.cols != experts) {
          throw TextError{line_start, "tokens: " + std::to_string(m.cols) +
                                          " experts per row, expected " + std::to_string(experts) +
                                          " (as on line " + std::to_string(first_line) + ")"};
        }
        const auto key = std::make_tuple(rec.iteration, rec.layer, rec.micro_batch);
        if (auto [it, fresh] = seen.emplace(key, line); !fresh) {
          throw TextError{line_start, "duplicate record (iteration " +
                                          std::to_string(rec.iteration) + ", layer " +
                                          std::to_string(rec.layer) + ", micro-batch " +
                                          std::to_string(rec.micro_batch) + "), also on line " +
                                          std::to_string(it->second)};
        }
        rec.values = std::move(m.values);
        records.push_back(std::move(rec));
      }
    } catch (const TextError& e) {
      throw Error(path, where, e.message);
    }
    line_start = line_end + 1;
  }
  if (records.empty()) throw Error(path, "", "no routing records");

  int iterations = 0, micro_batches = 0;
  std::set<int> layer_set;
  for (const auto& r : records) {
    iterations = std::max(iterations, r.iteration + 1);
    micro_batches = std::max(micro_batches, r.micro_batch + 1);
    layer_set.insert(r.layer);
  }
  const std::vector<int> layers(layer_set.begin(), layer_set.end());
  // Every (iteration, layer, micro-batch) must be there. Walking the combinations in order stops
  // at the first gap after at most records + 1 steps, however large the indices are.
  for (int it = 0; it < iterations; ++it) {
    for (int layer : layers) {
      for (int mb = 0; mb < micro_batches; ++mb) {
        if (!seen.count({it, layer, mb})) {
          throw Error(path, "",
                      "missing record: iteration " + std::to_string(it) + ", layer " +
                          std::to_string(layer) + ", micro-batch " + std::to_string(mb) +
                          " (the records give iterations 0.." + std::to_string(iterations - 1) +
                          ", " + std::to_string(layers.size()) + " layers, micro-batches 0.." +
                          std::to_string(micro_batches - 1) + "; each combination is needed)");
        }
      }
    }
  }
  check_trace_size(path, ep, experts, iterations, static_cast<std::int64_t>(layers.size()),
                   micro_batches);
  RoutingTrace trace = with_context(
      path, "", [&] { return RoutingTrace(ep, experts, iterations, layers, micro_batches); });
  for (const auto& r : records) {
    auto m = trace.matrix(r.iteration, trace.layer_index(r.layer), r.micro_batch);
    std::copy(r.values.begin(), r.values.end(), m.begin());
  }
  return trace;
}

}  // namespace

RoutingTrace read_text_trace(const std::string& path, const std::string& raw) {
  // Text and bare matrix may start with '#' comments; the first other character decides.
  const std::string text = blank_comments(raw);
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) throw Error(path, "", "no routing records (empty file)");
  if (text[start] == '[') return read_bare_matrix(path, text, start);
  if (!std::isdigit(static_cast<unsigned char>(text[start]))) {
    throw Error(path, "line " + std::to_string(line_of(text, start)),
                "unknown format: expected a JSON routing trace ('{'), a bare matrix ('[[...]]') "
                "or text records ('<iteration> <layer> <micro_batch> [[...]]')");
  }
  return read_text(path, text);
}

}  // namespace mfabric::workload::routing_format
