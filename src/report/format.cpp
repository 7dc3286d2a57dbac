#include "report/format.h"

#include <fmt/format.h>

#include <cmath>

namespace mfabric::report {

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  const int len = static_cast<int>(digits.size());
  for (int i = 0; i < len; ++i) {
    if (i > 0 && (len - i) % 3 == 0) out += ',';
    out += digits[static_cast<std::size_t>(i)];
  }
  return n < 0 ? "-" + out : out;
}

std::string dollars(double usd) {
  const auto whole = static_cast<std::int64_t>(std::llround(usd));
  return whole < 0 ? "-$" + with_commas(-whole) : "$" + with_commas(whole);
}

std::string dollars_and_cents(double usd) {
  const auto cents = static_cast<std::int64_t>(std::llround(std::fabs(usd) * 100.0));
  return fmt::format("{}${}.{:02d}", usd < 0 ? "-" : "", with_commas(cents / 100), cents % 100);
}

std::string ratio(double r) {
  return fmt::format("{:.2f}x", r);
}

}  // namespace mfabric::report
