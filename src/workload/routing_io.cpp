// Reading and writing routing traces (formats in docs/routing.md): JSON, plain-text records and
// the authors' bare matrix. Every error names the file and where in it (a JSON path such as
// "records[3].tokens[2]" or "line 7").
#include "workload/routing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_input.h"
#include "core/json_text.h"
#include "core/output_files.h"

namespace mfabric::workload {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "mfabric-routing-trace";
constexpr int kVersion = 1;
constexpr std::int64_t kMaxCount = std::numeric_limits<std::int32_t>::max();

// Refuses a trace whose dimensions need more than kMaxRoutingTraceCounts token counts, before
// anything that large is allocated (a corrupt or hostile header must cost an error message, not
// the machine's memory).
void check_trace_size(const std::string& path, std::int64_t ep, std::int64_t experts,
                      std::int64_t iterations, std::int64_t layers, std::int64_t micro_batches) {
  // Doubles cannot overflow here: each factor is at most 2^31.
  const double counts = static_cast<double>(ep) * static_cast<double>(experts) *
                        static_cast<double>(iterations) * static_cast<double>(layers) *
                        static_cast<double>(micro_batches);
  if (counts > static_cast<double>(kMaxRoutingTraceCounts)) {
    throw Error(
        path, "",
        fmt::format("the trace's dimensions (ep {} x experts {} x iterations {} x layers "
                    "{} x micro-batches {}) need {:.3g} token counts, more than the {} "
                    "({} of memory) mfabric holds",
                    ep, experts, iterations, layers, micro_batches, counts, kMaxRoutingTraceCounts,
                    describe_cap(kMaxRoutingTraceCounts *
                                 static_cast<std::int64_t>(sizeof(std::int32_t)))));
  }
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

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

// ---------------------------------------------------------------------------------------------
// JSON.

std::string show(const json& v) {
  return json_excerpt(v);
}

std::int64_t json_int(const json& v, const std::string& field, std::int64_t min, std::int64_t max,
                      const std::string& what) {
  std::optional<std::int64_t> value;
  bool too_large = false;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max)) {
      too_large = true;
    } else {
      value = static_cast<std::int64_t>(u);
    }
  } else if (v.is_number_integer()) {
    value = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    // 1e20 or 1.5: JSON numbers that are not integers. A whole one beyond the range is reported
    // as too large, anything else as not an integer.
    const double x = v.get<double>();
    too_large = std::isfinite(x) && x == std::floor(x) && x > static_cast<double>(max);
  }
  if (too_large || (value && *value > max)) {
    throw Error("", field,
                "expected " + what + " of at most " + std::to_string(max) + ", got " + show(v));
  }
  if (!value || *value < min) throw Error("", field, "expected " + what + ", got " + show(v));
  return *value;
}

const json& member(const json& obj, const char* key, const std::string& prefix) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    throw Error("", prefix.empty() ? std::string(key) : prefix,
                std::string("missing \"") + key + "\"");
  }
  return *it;
}

void reject_unknown(const json& obj, std::initializer_list<std::string_view> known,
                    const std::string& prefix) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      throw Error("", prefix.empty() ? it.key() : prefix + "." + it.key(), "unknown key");
    }
  }
}

RoutingTrace parse_json_trace(const json& doc, const std::string& source) {
  if (!doc.is_object()) throw Error("", "", "expected a JSON object");
  reject_unknown(doc,
                 {"format", "version", "ep", "experts", "iterations", "micro_batches", "layers",
                  "static", "records"},
                 "");
  const json& format = member(doc, "format", "");
  if (!format.is_string() || format.get<std::string>() != kFormat) {
    throw Error("", "format", "expected \"" + std::string(kFormat) + "\", got " + show(format));
  }
  const json& version = member(doc, "version", "");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kVersion) {
    throw Error(
        "", "version",
        "expected " + std::to_string(kVersion) + " (the only version), got " + show(version));
  }
  const std::int64_t int_max = std::numeric_limits<int>::max();
  auto dim = [&](const char* key) {
    return static_cast<int>(json_int(member(doc, key, ""), key, 1, int_max, "a positive integer"));
  };
  const int ep = dim("ep");
  const int experts = dim("experts");
  const int iterations = dim("iterations");
  const int micro_batches = dim("micro_batches");
  const json& layers_json = member(doc, "layers", "");
  if (!layers_json.is_array() || layers_json.empty()) {
    throw Error("", "layers",
                "expected a non-empty array of layer indices, got " + show(layers_json));
  }
  std::vector<int> layers;
  for (std::size_t i = 0; i < layers_json.size(); ++i) {
    const std::string field = "layers[" + std::to_string(i) + "]";
    layers.push_back(static_cast<int>(
        json_int(layers_json[i], field, 0, int_max, "a non-negative layer index")));
    if (i > 0 && layers[i] <= layers[i - 1]) {
      throw Error("", field,
                  "expected strictly increasing layer indices, got " + std::to_string(layers[i]) +
                      " after " + std::to_string(layers[i - 1]));
    }
  }
  bool is_static = false;
  if (auto it = doc.find("static"); it != doc.end()) {
    if (!it->is_boolean()) throw Error("", "static", "expected true or false, got " + show(*it));
    is_static = it->get<bool>();
  }
  if (is_static && (iterations != 1 || micro_batches != 1 || layers.size() != 1)) {
    throw Error("", "static",
                "only a trace of one record (1 iteration, 1 layer, 1 micro-batch) can be static");
  }
  const json& records = member(doc, "records", "");
  if (!records.is_array()) throw Error("", "records", "expected an array, got " + show(records));

  // Pass 1: where each record goes, duplicates and gaps, before allocating anything as large as
  // the header claims (a corrupt header must not turn into a huge allocation).
  struct Slot {
    int iteration, layer_idx, micro_batch;
  };
  std::vector<Slot> slots;
  std::map<std::tuple<int, int, int>, std::size_t> seen;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const std::string name = "records[" + std::to_string(k) + "]";
    const json& rec = records[k];
    if (!rec.is_object()) throw Error("", name, "expected an object, got " + show(rec));
    reject_unknown(rec, {"iteration", "layer", "micro_batch", "tokens"}, name);
    const int it = static_cast<int>(
        json_int(member(rec, "iteration", name), name + ".iteration", 0, iterations - 1,
                 "an iteration in 0.." + std::to_string(iterations - 1)));
    const int layer = static_cast<int>(
        json_int(member(rec, "layer", name), name + ".layer", 0, int_max, "a layer index"));
    // `layers` is strictly increasing (checked above): a binary search, so that many records of
    // a trace with many layers cost records x log(layers), not their product.
    const auto pos = std::lower_bound(layers.begin(), layers.end(), layer);
    if (pos == layers.end() || *pos != layer) {
      throw Error("", name + ".layer", "layer " + std::to_string(layer) + " is not in \"layers\"");
    }
    const int mb = static_cast<int>(
        json_int(member(rec, "micro_batch", name), name + ".micro_batch", 0, micro_batches - 1,
                 "a micro-batch in 0.." + std::to_string(micro_batches - 1)));
    if (auto [prev, fresh] = seen.emplace(std::make_tuple(it, layer, mb), k); !fresh) {
      throw Error("", name,
                  "duplicate record (iteration " + std::to_string(it) + ", layer " +
                      std::to_string(layer) + ", micro-batch " + std::to_string(mb) +
                      "), also records[" + std::to_string(prev->second) + "]");
    }
    slots.push_back({it, static_cast<int>(pos - layers.begin()), mb});
  }
  // Walking the combinations in order reaches the first gap after at most records + 1 steps.
  for (int it = 0; it < iterations; ++it) {
    for (int layer : layers) {
      for (int mb = 0; mb < micro_batches; ++mb) {
        if (!seen.count({it, layer, mb})) {
          throw Error("", "records",
                      "missing record: iteration " + std::to_string(it) + ", layer " +
                          std::to_string(layer) + ", micro-batch " + std::to_string(mb) +
                          " (every iteration x layer x micro-batch needs exactly one)");
        }
      }
    }
  }

  // Pass 2: the counts.
  check_trace_size(source, ep, experts, iterations, static_cast<std::int64_t>(layers.size()),
                   micro_batches);
  RoutingTrace trace(ep, experts, iterations, layers, micro_batches);
  if (is_static) trace.mark_static();
  for (std::size_t k = 0; k < records.size(); ++k) {
    const std::string tname = "records[" + std::to_string(k) + "].tokens";
    const json& tokens = member(records[k], "tokens", "records[" + std::to_string(k) + "]");
    if (!tokens.is_array() || tokens.size() != static_cast<std::size_t>(ep)) {
      throw Error("", tname,
                  "expected " + std::to_string(ep) + " rows (ep), got " +
                      (tokens.is_array() ? std::to_string(tokens.size()) + " rows" : show(tokens)));
    }
    auto m = trace.matrix(slots[k].iteration, slots[k].layer_idx, slots[k].micro_batch);
    for (std::size_t r = 0; r < tokens.size(); ++r) {
      const std::string rname = tname + "[" + std::to_string(r) + "]";
      const json& row = tokens[r];
      if (!row.is_array() || row.size() != static_cast<std::size_t>(experts)) {
        throw Error("", rname,
                    "expected " + std::to_string(experts) + " counts (experts), got " +
                        (row.is_array() ? std::to_string(row.size()) + " counts" : show(row)));
      }
      for (std::size_t e = 0; e < row.size(); ++e) {
        m[r * static_cast<std::size_t>(experts) + e] =
            static_cast<std::int32_t>(json_int(row[e], rname + "[" + std::to_string(e) + "]", 0,
                                               kMaxCount, "a non-negative integer token count"));
      }
    }
  }
  return trace;
}

JsonDocument parse_json_document(const std::string& path, const std::string& raw) {
  return parse_json_input(
      raw, path,
      fmt::format("every number in a routing trace is an integer of at most {}", kMaxCount));
}

// ---------------------------------------------------------------------------------------------
// Writing.

void write_matrix(std::ostream& out, std::span<const std::int32_t> m, int ep, int experts) {
  char buf[16];
  out << '[';
  for (int r = 0; r < ep; ++r) {
    if (r > 0) out << ", ";
    out << '[';
    for (int e = 0; e < experts; ++e) {
      if (e > 0) out << ", ";
      auto v = m[static_cast<std::size_t>(r) * static_cast<std::size_t>(experts) +
                 static_cast<std::size_t>(e)];
      auto res = std::to_chars(buf, buf + sizeof buf, v);
      out.write(buf, res.ptr - buf);
    }
    out << ']';
  }
  out << ']';
}

json matrix_json(std::span<const std::int32_t> m, int ep, int experts) {
  json rows = json::array();
  for (int r = 0; r < ep; ++r) {
    const auto row = m.subspan(static_cast<std::size_t>(r) * static_cast<std::size_t>(experts),
                               static_cast<std::size_t>(experts));
    rows.push_back(json(std::vector<std::int32_t>(row.begin(), row.end())));
  }
  return rows;
}

std::string join_layers(const std::vector<int>& layers, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (i > 0) s += sep;
    s += std::to_string(layers[i]);
  }
  return s;
}

// The header members pretty-printed, then one record per line: readable, diffable, and streamed
// record by record, so a large trace never exists twice in memory.
void write_json_trace(const RoutingTrace& t, std::ostream& out) {
  json head = {{"format", kFormat},
               {"version", kVersion},
               {"ep", t.ep()},
               {"experts", t.experts()},
               {"iterations", t.iterations()},
               {"micro_batches", t.micro_batches()},
               {"layers", t.layers()}};
  if (t.is_static()) head["static"] = true;
  JsonArrayStream records(out, head, "records", 2);
  for (int it = 0; it < t.iterations(); ++it) {
    for (std::size_t li = 0; li < t.layers().size(); ++li) {
      for (int mb = 0; mb < t.micro_batches(); ++mb) {
        records.add(
            {{"iteration", it},
             {"layer", t.layers()[li]},
             {"micro_batch", mb},
             {"tokens", matrix_json(t.matrix(it, static_cast<int>(li), mb), t.ep(), t.experts())}});
      }
    }
  }
  records.finish();
}

void write_plain_text(const RoutingTrace& t, std::ostream& out) {
  out << "# mfabric routing trace: ep " << t.ep() << ", experts " << t.experts() << ", iterations "
      << t.iterations() << ", micro-batches " << t.micro_batches() << ", layers "
      << join_layers(t.layers(), " ") << "\n";
  if (t.is_static()) {
    // The bare-matrix form is what marks a trace static when read back.
    out << "# one static [ep x experts] matrix, used for every MoE layer and iteration\n";
    write_matrix(out, t.matrix(0, 0, 0), t.ep(), t.experts());
    out << '\n';
    return;
  }
  out << "# <iteration> <layer> <micro_batch> [[tokens rank 0 -> expert 0, ...], [rank 1 ...]]\n";
  for (int it = 0; it < t.iterations(); ++it) {
    for (std::size_t li = 0; li < t.layers().size(); ++li) {
      for (int mb = 0; mb < t.micro_batches(); ++mb) {
        out << it << ' ' << t.layers()[li] << ' ' << mb << ' ';
        write_matrix(out, t.matrix(it, static_cast<int>(li), mb), t.ep(), t.experts());
        out << '\n';
      }
    }
  }
}

}  // namespace

RoutingTrace read_routing_trace(const std::string& path) {
  std::string raw =
      read_text_file(path, "routing trace", "a JSON or text routing trace (docs/routing.md)");
  // Editors on Windows may start a UTF-8 file with a byte-order mark; it is not content.
  if (raw.starts_with("\xEF\xBB\xBF")) raw.replace(0, 3, 3, ' ');
  const auto first = std::find_if(raw.begin(), raw.end(), [](char c) { return !is_space(c); });
  if (first != raw.end() && *first == '{') {
    const JsonDocument doc = parse_json_document(path, raw);
    raw = std::string();  // the document holds it all now
    try {
      return with_context(path, "", [&] { return parse_json_trace(*doc, path); });
    } catch (const json::exception& e) {
      // Every access above is type-checked first; this is a safety net so that no nlohmann
      // exception escapes as anything but an mfabric::Error.
      throw Error(path, "", std::string("unexpected JSON content: ") + e.what());
    }
  }
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

void write_routing_trace(const RoutingTrace& trace, const std::string& path) {
  if (trace.ep() == 0) throw Error(path, "", "cannot write an empty routing trace");
  // Written next to the target and renamed over it (core/output_files.h), so a reader never
  // sees half a file and a failed or interrupted write leaves the old file intact.
  const bool as_json = path.ends_with(".json");
  write_file_atomically(path, [&](std::ostream& out) {
    if (as_json) {
      write_json_trace(trace, out);
    } else {
      write_plain_text(trace, out);
    }
  });
}

}  // namespace mfabric::workload
