#include "report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "core/error.h"
#include "core/output_text.h"

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

// `text` cut at spaces into lines of at most `width` characters (a longer word has a line of
// its own), the first line after `first`, the others after `rest`.
std::string wrapped(const std::string& text, std::size_t width, const std::string& first,
                    const std::string& rest) {
  std::string out = first;
  std::size_t column = display_width(first);
  bool line_empty = true;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    const std::size_t w = display_width(word);
    if (!line_empty && column + 1 + w > width) {
      out += "\n" + rest;
      column = display_width(rest);
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += w;
    line_empty = false;
  }
  return out + "\n";
}

std::string faster_or_slower(double speed) {
  require_finite(speed, "a speed ratio");
  if (!(speed > 0))
    throw Error("", "", fmt::format("a speed ratio must be positive, got {}", speed));
  if (fmt::format("{:.2f}", speed) == "1.00" && fmt::format("{:.2f}", 1 / speed) == "1.00")
    return "as fast";
  return speed >= 1 ? fmt::format("{:.2f}x faster", speed)
                    : fmt::format("{:.2f}x slower", 1 / speed);
}

std::string join_strings(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i > 0 ? separator : "") + parts[i];
  return out;
}

namespace {

// `x` to four significant digits without trailing zeros ("92.36", "712", "0.5").
std::string four_digits(double x) {
  std::string text = fmt::format("{:.4g}", x);
  if (text.find('e') != std::string::npos) text = fmt::format("{:.0f}", x);
  return text;
}

void require_size(double x, const char* what) {
  if (!std::isfinite(x) || x < 0) {
    throw Error("", "",
                fmt::format("cannot print {} {}: not a finite non-negative number", what, x));
  }
}

}  // namespace

namespace {

// `bytes` in the largest of `units` (each `step` times the one before) that keeps it below
// `step`, to four significant digits.
std::string in_units(double bytes, double step, const std::array<const char*, 6>& units) {
  std::size_t unit = 0;
  // 999.95 (or 1023.95) rounds to the next unit's 1, not to "1000KB".
  while (unit + 1 < units.size() && bytes >= step - 0.05) {
    bytes /= step;
    ++unit;
  }
  return four_digits(bytes) + units[unit];
}

}  // namespace

std::string traffic_bytes(double bytes) {
  require_size(bytes, "a traffic volume");
  return in_units(bytes, 1000, {"B", "KB", "MB", "GB", "TB", "PB"});
}

std::string memory_bytes(double bytes) {
  require_size(bytes, "a memory size");
  return in_units(bytes, 1024, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
}

std::string time_in_unit_of(double seconds, double largest_seconds) {
  require_size(seconds, "a time");
  struct Unit {
    const char* name;
    double scale;
  };
  Unit unit{"s", 1};
  if (largest_seconds < 1e-6) {
    unit = {"ns", 1e9};
  } else if (largest_seconds < 1e-3) {
    unit = {"us", 1e6};
  } else if (largest_seconds < 1) {
    unit = {"ms", 1e3};
  }
  // Three decimals, or three significant digits below 1 (0.00436s, not 0.004s): the unit is the
  // column's, the precision each value's.
  const double x = seconds * unit.scale;
  if (x == 0) return fmt::format("0{}", unit.name);
  if (x >= 1) return fmt::format("{:.3f}{}", x, unit.name);
  const int decimals = std::min(9, 2 - static_cast<int>(std::floor(std::log10(x))));
  return fmt::format("{:.{}f}{}", x, decimals, unit.name);
}

std::vector<std::string> times_in_one_unit(const std::vector<double>& seconds) {
  double largest = 0;
  for (const double s : seconds) {
    require_size(s, "a time");
    largest = std::max(largest, s);
  }
  std::vector<std::string> out;
  for (const double s : seconds)
    out.push_back(time_in_unit_of(s, largest));
  return out;
}

}  // namespace mfabric::report
