// Spec strings ("NAME:key=value,...", core/spec.h) as users type them for --fabric: parsing, the
// canonical text (which must parse back to the same spec), every typed getter and finish().
// The input's repeat markers are expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/spec.h"
#include "fuzz_support.h"

namespace {

constexpr std::size_t kMaxGetterParams = 256;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> text = fuzz::expanded_text(data, size);
  if (!text) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const Spec spec = Spec::parse(*text);
    const std::string canonical = spec.to_string();
    const Spec again = Spec::parse(canonical);
    if (again.name() != spec.name() || again.params() != spec.params()) {
      fuzz::property_failed("canonical text '" + canonical + "' parses to a different spec");
    }
    // Every getter on each parameter (the first kMaxGetterParams: a spec of many parameters,
    // which the repeat markers write, would otherwise spend its time here rather than in
    // parse), each on a fresh spec of this parameter alone, because each getter may throw and
    // each marks its key read.
    std::size_t n = 0;
    for (const auto& param : spec.params()) {
      if (++n > kMaxGetterParams) break;
      const std::string& key = param.first;
      const auto one = [&] { return Spec(spec.name(), {param}); };
      fuzz::expect_only_mfabric_errors([&] { one().get_int(key, 0); });
      fuzz::expect_only_mfabric_errors([&] { one().get_double(key, 0); });
      fuzz::expect_only_mfabric_errors([&] { one().get_time(key, Time::zero()); });
      fuzz::expect_only_mfabric_errors([&] { one().get_rate(key, Rate()); });
      fuzz::expect_only_mfabric_errors([&] { one().get_optional_int(key); });
    }
    Spec(spec).finish({"radix", "alpha"});
  });
  return 0;
}
