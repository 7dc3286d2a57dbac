#include "core/units.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

struct NumberAndUnit {
  double value;
  std::string_view unit;
};

// Splits "1.5GB" into 1.5 and "GB". Leading/trailing blanks are ignored; a blank between the
// number and the unit is allowed ("400 Gbps").
NumberAndUnit split_number(std::string_view text, std::string_view what) {
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  if (s.empty()) throw Error(fmt::format("expected a {}, got an empty value", what));
  double value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) {
    throw Error(fmt::format("expected a {} such as {}, got {}", what,
                            what == "time"   ? "'25ms'"
                            : what == "rate" ? "'400G'"
                                             : "'2MiB'",
                            quote_input(text)));
  }
  if (!std::isfinite(value))
    throw Error(fmt::format("{} is not a finite {}", quote_input(text), what));
  if (value < 0)
    throw Error(fmt::format("{} must not be negative, got {}", what, quote_input(text)));
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  while (!unit.empty() && unit.front() == ' ')
    unit.remove_prefix(1);
  return {value, unit};
}

std::string trim_number(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

double decimal_prefix(char c) {
  switch (c) {
    case 'k':
    case 'K':
      return 1e3;
    case 'M':
      return 1e6;
    case 'G':
      return 1e9;
    case 'T':
      return 1e12;
    case 'P':
      return 1e15;
    default:
      return 0;
  }
}

}  // namespace

Time Time::from_seconds(double seconds) {
  const double ps = seconds * 1e12;
  if (!(std::fabs(ps) < 9.2e18)) {
    throw Error(
        fmt::format("{} s is outside the representable time range (about +-106 days)", seconds));
  }
  return Time(static_cast<std::int64_t>(std::llround(ps)));
}

Time transmission_time(Bytes size, Rate rate) {
  if (size.count() == 0) return Time::zero();
  if (rate.bps() <= 0) return Time::max();
  const long double ps =
      static_cast<long double>(size.count()) * 8.0L * 1e12L / static_cast<long double>(rate.bps());
  // Past the clock's range the transfer never ends in simulated time; callers that must finish
  // it report Time::max() as an error.
  if (!(ps < 9.2e18L)) return Time::max();
  return Time::picoseconds(static_cast<std::int64_t>(std::ceil(ps - 1e-6L)));
}

Time parse_time(std::string_view text) {
  auto [value, unit] = split_number(text, "time");
  double scale = 0;  // picoseconds per unit
  if (unit == "ps")
    scale = 1;
  else if (unit == "ns")
    scale = 1e3;
  else if (unit == "us" || unit == "\u00b5s")
    scale = 1e6;
  else if (unit == "ms")
    scale = 1e9;
  else if (unit == "s")
    scale = 1e12;
  else if (unit == "min")
    scale = 60e12;
  if (scale == 0) {
    if (unit.empty()) {
      throw Error(
          fmt::format("{} has no unit; write a time such as '25ms' or '1us'", quote_input(text)));
    }
    throw Error(fmt::format("unknown time unit {} in {} (use ps, ns, us, ms, s or min)",
                            quote_input(unit), quote_input(text)));
  }
  const double ps = value * scale;
  // 2^63 itself rounds to no int64: the largest time is strictly below it.
  if (!(ps < 0x1p63)) {
    throw Error(fmt::format("time {} is too large", quote_input(text)));
  }
  return Time::picoseconds(static_cast<std::int64_t>(std::llround(ps)));
}

Rate parse_rate(std::string_view text) {
  auto [value, unit] = split_number(text, "rate");
  if (unit.empty()) {
    throw Error(fmt::format("{} has no unit; write a rate such as '400G', '400Gbps' or '900GB/s'",
                            quote_input(text)));
  }
  double prefix = decimal_prefix(unit.front());
  std::string_view rest = unit;
  if (prefix != 0)
    rest.remove_prefix(1);
  else
    prefix = 1;
  double bits_per_unit = 0;
  if (rest.empty() && prefix != 1)
    bits_per_unit = 1;  // "400G": bits, as in link speeds
  else if (rest == "bps" || rest == "b/s" || rest == "bit/s" || rest == "bits/s")
    bits_per_unit = 1;
  else if (rest == "Bps" || rest == "B/s")
    bits_per_unit = 8;
  if (bits_per_unit == 0) {
    throw Error(fmt::format(
        "unknown rate unit {} in {} (use e.g. 400G, 400Gbps, 400Gb/s for bits or 900GB/s for "
        "bytes per second)",
        quote_input(unit), quote_input(text)));
  }
  const double bps = value * prefix * bits_per_unit;
  // 1e30 bps is beyond any link; the cap keeps every product of rates finite ("3e307K" is inf).
  if (!(bps <= 1e30)) throw Error(fmt::format("rate {} is too large", quote_input(text)));
  return Rate::bits_per_second(bps);
}

Bytes parse_bytes(std::string_view text) {
  auto [value, unit] = split_number(text, "size");
  static constexpr std::array<std::pair<std::string_view, double>, 10> kUnits{{
      {"B", 1.0},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"kB", 1e3},
  }};
  double scale = 0;
  for (const auto& [name, s] : kUnits) {
    if (unit == name) scale = s;
  }
  if (scale == 0) {
    if (unit.empty()) {
      throw Error(fmt::format("{} has no unit; write a size such as '2MiB', '1.5GB' or '512B'",
                              quote_input(text)));
    }
    throw Error(
        fmt::format("unknown size unit {} in {} (use B, KB, MB, GB, TB, KiB, MiB, GiB "
                    "or TiB)",
                    quote_input(unit), quote_input(text)));
  }
  const long double bytes = static_cast<long double>(value) * scale;
  if (bytes > 9.0e18L) throw Error(fmt::format("size {} is too large", quote_input(text)));
  const long double rounded = std::round(bytes);
  if (std::fabs(bytes - rounded) > 1e-6L * std::max(1.0L, bytes)) {
    throw Error(fmt::format("size {} is not a whole number of bytes", quote_input(text)));
  }
  return Bytes(static_cast<std::int64_t>(rounded));
}

std::string to_string(Time t) {
  const std::int64_t ps = t.ps();
  const double a = std::fabs(static_cast<double>(ps));
  if (ps == 0) return "0s";
  if (a >= 1e12) return trim_number(static_cast<double>(ps) * 1e-12) + "s";
  if (a >= 1e9) return trim_number(static_cast<double>(ps) * 1e-9) + "ms";
  if (a >= 1e6) return trim_number(static_cast<double>(ps) * 1e-6) + "us";
  if (a >= 1e3) return trim_number(static_cast<double>(ps) * 1e-3) + "ns";
  return std::to_string(ps) + "ps";
}

std::string to_string(Rate r) {
  const double b = r.bps();
  if (b >= 1e12) return trim_number(b * 1e-12) + "Tbps";
  if (b >= 1e9) return trim_number(b * 1e-9) + "Gbps";
  if (b >= 1e6) return trim_number(b * 1e-6) + "Mbps";
  if (b >= 1e3) return trim_number(b * 1e-3) + "Kbps";
  if (b > 0 && b < 1) return fmt::format("{:.3g}bps", b);  // never "0bps" for a tiny rate
  return trim_number(b) + "bps";
}

std::string to_string(Bytes b) {
  const std::int64_t n = b.count();
  static constexpr std::array<std::pair<const char*, int>, 4> kBinary{
      {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}};
  // A binary unit only when the size is a whole number of the largest one that fits ("2MiB");
  // otherwise decimal ("1.5GB"), never "7503535456KiB".
  for (const auto& [name, shift] : kBinary) {
    const std::int64_t unit = std::int64_t{1} << shift;
    if (n >= unit) {
      if (n % unit == 0) return std::to_string(n / unit) + name;
      break;
    }
  }
  const double d = static_cast<double>(n);
  if (d >= 1e12) return trim_number(d * 1e-12) + "TB";
  if (d >= 1e9) return trim_number(d * 1e-9) + "GB";
  if (d >= 1e6) return trim_number(d * 1e-6) + "MB";
  if (d >= 1e3) return trim_number(d * 1e-3) + "KB";
  return std::to_string(n) + "B";
}

std::string link_label(Rate r) {
  const double b = r.bps();
  if (b >= 1e12) return trim_number(b * 1e-12) + "T";
  if (b >= 1e9) return trim_number(b * 1e-9) + "G";
  if (b >= 1e6) return trim_number(b * 1e-6) + "M";
  return trim_number(b) + "bps";
}

}  // namespace mfabric
