// Unit strings (core/units.h): parse_time, parse_rate, parse_bytes on the same text; whatever
// parses is printed, and the printed text must parse again (mfabric prints values users copy
// back into files and options). A time and a size that both parse also go through
// transmission_time with the rate. The input's repeat markers are expanded (fuzz_support.h), so
// that numbers of a million digits are tried too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/units.h"
#include "fuzz_support.h"

namespace {

template <class T, class Parse>
std::optional<T> parse_and_reprint(std::string_view text, Parse parse, const char* what) {
  std::optional<T> value;
  mfabric::fuzz::expect_only_mfabric_errors([&] { value = parse(text); });
  if (!value) return value;
  const std::string printed = mfabric::to_string(*value);
  try {
    parse(printed);
  } catch (const mfabric::Error& e) {
    mfabric::fuzz::property_failed(std::string(what) + " '" + std::string(text) + "' prints as '" +
                                   printed + "', which does not parse: " + e.what());
  }
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> expanded = fuzz::expanded_text(data, size);
  if (!expanded) return -1;
  const std::string_view text = *expanded;
  parse_and_reprint<Time>(text, parse_time, "time");
  const auto rate = parse_and_reprint<Rate>(text, parse_rate, "rate");
  const auto bytes = parse_and_reprint<Bytes>(text, parse_bytes, "size");
  if (rate) {
    volatile std::size_t sink = link_label(*rate).size();
    (void)sink;
    volatile std::int64_t t = transmission_time(Bytes::gib(1), *rate).ps();
    (void)t;
  }
  if (bytes) {
    volatile std::int64_t t = transmission_time(*bytes, Rate::gbps(400)).ps();
    (void)t;
  }
  return 0;
}
