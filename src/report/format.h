// Number formatting for human-readable output (tables); JSON carries plain numbers.
#pragma once

#include <cstdint>
#include <string>

namespace mfabric::report {

// 1234567 -> "1,234,567".
std::string with_commas(std::int64_t n);
// 13493248.0 -> "$13,493,248" (rounded to whole dollars).
std::string dollars(double usd);
// 2248.5 -> "$2,248.50".
std::string dollars_and_cents(double usd);
// 2.3766 -> "2.38x".
std::string ratio(double r);

}  // namespace mfabric::report
