// Reading JSON inputs (core/json_input.h): parse_json_input, which checks depth, repeated keys
// and an estimate of the parsed size as values arrive, against nlohmann's own DOM parser on the
// same text, a routing trace of the shape mfabric writes (docs/performance.md, "Input limits").
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/json_input.h"

namespace {

// A routing trace's JSON: `records` records of an 8 x 8 token matrix each.
std::string routing_trace_text(int records) {
  std::string text =
      R"({"format": "mfabric-routing-trace", "version": 1, "ep": 8, "experts": 8, "records": [)";
  for (int r = 0; r < records; ++r) {
    text += r == 0 ? "" : ", ";
    text +=
        R"({"iteration": )" + std::to_string(r) + R"(, "layer": 1, "micro_batch": 0, "tokens": [)";
    for (int i = 0; i < 8; ++i) {
      text += i == 0 ? "[" : ", [";
      for (int e = 0; e < 8; ++e)
        text += (e == 0 ? "" : ", ") + std::to_string(1000 + 37 * ((r + i * 8 + e) % 97));
      text += "]";
    }
    text += "]}";
  }
  return text + "]}";
}

void BM_JsonParseWithLimits(benchmark::State& state) {
  const std::string text = routing_trace_text(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const mfabric::JsonDocument doc = mfabric::parse_json_input(text, "trace.json", "");
    benchmark::DoNotOptimize(doc->size());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

void BM_JsonParseNlohmann(benchmark::State& state) {
  const std::string text = routing_trace_text(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const nlohmann::json doc = nlohmann::json::parse(text);
    benchmark::DoNotOptimize(doc.size());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

BENCHMARK(BM_JsonParseWithLimits)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JsonParseNlohmann)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
