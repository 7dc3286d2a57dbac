// Chakra .et traces (workload::read_chakra, docs/chakra.md). The input holds up to kMaxRanks
// rank files separated by kRankSeparator; rank r is written to <prefix>.r.et and read through the
// public prefix API, so cross-rank matching (collectives, send/receive pairs) is fuzzed too.
// Built twice: chakra writes each part as it is (plain, or gzip if the part is gzip data), and
// chakra_gzip (MFABRIC_FUZZ_GZIP) compresses every part first, so that mutations of the
// protobuf content always reach the reader through its gzip path.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "workload/chakra.h"
#include "workload/compute.h"

namespace {

constexpr std::string_view kRankSeparator = "@@rank@@";
constexpr std::size_t kMaxRanks = 8;

#ifdef MFABRIC_FUZZ_GZIP
std::string gzip(std::string_view in) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    mfabric::fuzz::property_failed("deflateInit2");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) mfabric::fuzz::property_failed("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
#endif

std::string rank_name(std::size_t r) {
  return "trace." + std::to_string(r) + ".et";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const auto parts = fuzz::split(fuzz::as_text(data, size), kRankSeparator, kMaxRanks);
  for (std::size_t r = 0; r < parts.size(); ++r) {
#ifdef MFABRIC_FUZZ_GZIP
    fuzz::write_scratch(rank_name(r), gzip(parts[r]));
#else
    fuzz::write_scratch(rank_name(r), parts[r]);
#endif
  }
  for (std::size_t r = parts.size(); r <= kMaxRanks; ++r)
    fuzz::remove_scratch(rank_name(r));

  workload::ChakraOptions options;
  options.gpu = workload::find_gpu("h800");
  // Each control-dependency policy in turn, picked by the input's length so that one input
  // always runs the same way.
  constexpr workload::ControlDeps kPolicies[] = {
      workload::ControlDeps::Relaxed, workload::ControlDeps::Strict, workload::ControlDeps::Ignore};
  options.control_deps = kPolicies[size % 3];
  fuzz::expect_only_mfabric_errors([&] {
    workload::ChakraSummary summary;
    const workload::TaskGraph g =
        workload::read_chakra(fuzz::scratch_dir() + "/trace", options, &summary);
    volatile std::size_t sink = g.size() + static_cast<std::size_t>(summary.ranks);
    (void)sink;
  });
  return 0;
}
