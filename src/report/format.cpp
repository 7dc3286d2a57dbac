#include "report/format.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "core/error.h"

namespace mfabric::report {
namespace {

// "1234567" -> "1,234,567"; `digits` holds only digits.
std::string group_thousands(std::string_view digits) {
  std::string out;
  const std::size_t len = digits.size();
  for (std::size_t i = 0; i < len; ++i) {
    if (i > 0 && (len - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void require_finite(double x, const char* what) {
  if (!std::isfinite(x)) {
    throw Error("", "",
                fmt::format("{} is {}: a result out of the range mfabric can compute (check the "
                            "inputs for values far too large)",
                            what, std::isnan(x) ? "not a number" : "infinite"));
  }
}

// |x| rounded half away from zero to `decimals` places, as plain digits: fmt prints the exact
// decimal value of the double, so 1e20 gives "100000000000000000000". std::round keeps halves
// away from zero; fmt alone would round them to even.
std::string magnitude(double x, int decimals) {
  const double scale = decimals == 0 ? 1.0 : std::pow(10.0, decimals);
  const double rounded = std::round(std::fabs(x) * scale);
  std::string digits = fmt::format("{:.0f}", rounded);
  if (decimals == 0) return group_thousands(digits);
  const auto d = static_cast<std::size_t>(decimals);
  if (digits.size() <= d) digits.insert(0, d + 1 - digits.size(), '0');
  return group_thousands(std::string_view(digits).substr(0, digits.size() - d)) + "." +
         digits.substr(digits.size() - d);
}

bool is_zero_after_rounding(const std::string& text) {
  return text.find_first_not_of("0,.") == std::string::npos;
}

std::string signed_text(double x, const std::string& prefix, int decimals) {
  const std::string m = magnitude(x, decimals);
  // -0.4 rounds to "0", not "-0".
  const bool negative = x < 0 && !is_zero_after_rounding(m);
  return (negative ? "-" : "") + prefix + m;
}

}  // namespace

std::string with_commas(std::int64_t n) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64.
  const std::uint64_t m =
      n < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  const std::string out = group_thousands(std::to_string(m));
  return n < 0 ? "-" + out : out;
}

std::string whole_number(double x) {
  require_finite(x, "a number");
  return signed_text(x, "", 0);
}

std::string dollars(double usd) {
  require_finite(usd, "a cost");
  return signed_text(usd, "$", 0);
}

std::string dollars_and_cents(double usd) {
  require_finite(usd, "a price");
  return signed_text(usd, "$", 2);
}

std::string ratio(double r) {
  require_finite(r, "a ratio");
  return fmt::format("{:.2f}x", r);
}

std::string join_strings(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i > 0 ? separator : "") + parts[i];
  return out;
}

}  // namespace mfabric::report
