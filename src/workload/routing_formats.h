// What the routing-trace readers share (routing_io.cpp dispatches on the first character;
// routing_text.cpp and routing_json.cpp read the two families of formats; docs/routing.md).
// Internal to workload/: the public interface is read_routing_trace() in routing.h.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "workload/routing.h"

namespace mfabric::workload::routing_format {

inline constexpr std::string_view kFormat = "mfabric-routing-trace";
inline constexpr int kVersion = 1;
// Every number in a routing trace is a 32-bit count.
inline constexpr std::int64_t kMaxCount = std::numeric_limits<std::int32_t>::max();

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Refuses a trace whose dimensions need more than kMaxRoutingTraceCounts token counts, before
// anything that large is allocated (a corrupt or hostile header must cost an error message, not
// the machine's memory).
void check_trace_size(const std::string& path, std::int64_t ep, std::int64_t experts,
                      std::int64_t iterations, std::int64_t layers, std::int64_t micro_batches);

// A file that starts (after blanks) with something other than '{': text records or a bare
// matrix, '#' comments allowed.
RoutingTrace read_text_trace(const std::string& path, const std::string& raw);
// A file that starts with '{': the JSON trace. Takes the text (the parsed document replaces it).
RoutingTrace read_json_trace(const std::string& path, std::string raw);

}  // namespace mfabric::workload::routing_format
