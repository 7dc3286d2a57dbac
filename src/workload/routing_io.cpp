// Reading and writing routing traces (formats in docs/routing.md): JSON, plain-text records and
// the authors' bare matrix. Every error names the file and where in it (a JSON path such as
// "records[3].tokens[2]" or "line 7").
#include "workload/routing.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_input.h"
#include "core/json_text.h"
#include "core/output_files.h"
#include "workload/routing_formats.h"

namespace mfabric::workload {

namespace routing_format {

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

}  // namespace routing_format

namespace {

using nlohmann::json;
using routing_format::is_space;
using routing_format::kFormat;
using routing_format::kVersion;

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
    return routing_format::read_json_trace(path, std::move(raw));
  }
  return routing_format::read_text_trace(path, raw);
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
