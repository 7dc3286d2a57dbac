// Recorded expert-routing traces (workload::read_routing_trace, docs/routing.md): JSON, text
// records and the bare matrix go through the same reader, which picks the format from the first
// character; the routing_json and routing_text harnesses are this program with different seed
// corpora and dictionaries. A trace that reads must also give statistics and survive a write and
// a read back unchanged (traces read from at most kRoundTripBytes of text: see there). The input's
// repeat markers are expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "workload/routing.h"

namespace {

// The write and the two reads back cost four times the first read, which for a few megabytes of
// trace is seconds under ASan; a trace whose text is longer than this is read once. The round
// trip of what the writers do at any size (one line or one record per matrix) is covered below
// it.
constexpr std::size_t kRoundTripBytes = std::size_t{256} << 10;

bool same(const mfabric::workload::RoutingTrace& a, const mfabric::workload::RoutingTrace& b) {
  if (a.ep() != b.ep() || a.experts() != b.experts() || a.iterations() != b.iterations() ||
      a.micro_batches() != b.micro_batches() || a.layers() != b.layers() ||
      a.is_static() != b.is_static()) {
    return false;
  }
  for (int it = 0; it < a.iterations(); ++it) {
    for (int l = 0; l < static_cast<int>(a.layers().size()); ++l) {
      for (int mb = 0; mb < a.micro_batches(); ++mb) {
        const auto x = a.matrix(it, l, mb);
        const auto y = b.matrix(it, l, mb);
        if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> text = fuzz::expanded_text(data, size);
  if (!text) return -1;
  const std::string path = fuzz::write_scratch("routing.trace", *text);
  fuzz::expect_only_mfabric_errors([&] {
    const workload::RoutingTrace trace = workload::read_routing_trace(path);
    const workload::RoutingStats stats = workload::routing_stats(trace);
    volatile double sink = stats.skew_mean + stats.adjacent_layer_correlation;
    (void)sink;
    if (text->size() > kRoundTripBytes) return;
    for (const char* name : {"copy.json", "copy.txt"}) {
      const std::string copy = fuzz::scratch_dir() + "/" + name;
      workload::write_routing_trace(trace, copy);
      if (!same(trace, workload::read_routing_trace(copy))) {
        fuzz::property_failed(std::string("a trace written as ") + name + " reads back different");
      }
    }
  });
  return 0;
}
