// Spec strings ("NAME:key=value,...", core/spec.h) as users type them for --fabric: parsing, the
// canonical text (which must parse back to the same spec), every typed getter and finish().
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/spec.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::string text(fuzz::as_text(data, size));
  fuzz::expect_only_mfabric_errors([&] {
    const Spec spec = Spec::parse(text);
    const std::string canonical = spec.to_string();
    const Spec again = Spec::parse(canonical);
    if (again.name() != spec.name() || again.params() != spec.params()) {
      fuzz::property_failed("canonical text '" + canonical + "' parses to a different spec");
    }
    for (const auto& param : spec.params()) {
      // A fresh copy per getter: each getter may throw, and each marks its key read.
      const std::string& key = param.first;
      fuzz::expect_only_mfabric_errors([&] { Spec(spec).get_int(key, 0); });
      fuzz::expect_only_mfabric_errors([&] { Spec(spec).get_double(key, 0); });
      fuzz::expect_only_mfabric_errors([&] { Spec(spec).get_time(key, Time::zero()); });
      fuzz::expect_only_mfabric_errors([&] { Spec(spec).get_rate(key, Rate()); });
      fuzz::expect_only_mfabric_errors([&] { Spec(spec).get_optional_int(key); });
    }
    Spec(spec).finish({"radix", "alpha"});
  });
  return 0;
}
