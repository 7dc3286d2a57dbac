// Reading the JSON form of a routing trace (docs/routing.md): the header, then one record per
// (iteration, layer, micro-batch). Errors name the file and the JSON path
// ("records[3].tokens[2]").
#include "workload/routing_formats.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/json_input.h"
#include "core/json_text.h"

namespace mfabric::workload::routing_format {
namespace {

using nlohmann::json;

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

// Where each record of a trace goes (pass 1 of parse_json_trace): its iteration, layer index and
// micro-batch, checked for duplicates and gaps.
struct RecordSlot {
  int iteration, layer_idx, micro_batch;
};
std::vector<RecordSlot> record_slots(const json& records, int iterations,
                                     const std::vector<int>& layers, int micro_batches) {
  const std::int64_t int_max = std::numeric_limits<int>::max();
  std::vector<RecordSlot> slots;
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
    // `layers` is strictly increasing (the caller checks): a binary search, so that many records of
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
  return slots;
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
  const std::vector<RecordSlot> slots = record_slots(records, iterations, layers, micro_batches);

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

}  // namespace

RoutingTrace read_json_trace(const std::string& path, std::string raw) {
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

}  // namespace mfabric::workload::routing_format
