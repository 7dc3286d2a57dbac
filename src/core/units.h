// Unit types. Every quantity with a unit is one of these types; arithmetic on raw numbers with
// implied units is not allowed anywhere else in mfabric.
//
//   Time  - integer picoseconds (exact, so event ordering never depends on rounding)
//   Bytes - integer bytes
//   Rate  - bits per second (double: fair shares of a link are fractions)
//
// Parsing accepts what users write in papers and configs: "25ms", "1us", "400G", "400Gbps",
// "900GB/s", "2MiB", "1.5GB". A number without a unit is an error, as is a negative value or an
// unknown unit; the message quotes the text.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace mfabric {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time picoseconds(std::int64_t ps) { return Time(ps); }
  static constexpr Time nanoseconds(std::int64_t ns) { return Time(ns * 1000); }
  static constexpr Time microseconds(std::int64_t us) { return Time(us * 1000000); }
  static constexpr Time milliseconds(std::int64_t ms) { return Time(ms * 1000000000); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(INT64_MAX); }
  // Rounds to the nearest picosecond; mfabric::Error outside the int64 picosecond range.
  static Time from_seconds(double seconds);

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t n) : n_(n) {}
  static constexpr Bytes kib(std::int64_t n) { return Bytes(n << 10); }
  static constexpr Bytes mib(std::int64_t n) { return Bytes(n << 20); }
  static constexpr Bytes gib(std::int64_t n) { return Bytes(n << 30); }

  constexpr std::int64_t count() const { return n_; }
  constexpr double bits() const { return static_cast<double>(n_) * 8.0; }

  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) {
    n_ += o.n_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    n_ -= o.n_;
    return *this;
  }
  constexpr Bytes operator*(std::int64_t k) const { return Bytes(n_ * k); }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  std::int64_t n_ = 0;
};

class Rate {
 public:
  constexpr Rate() = default;
  static constexpr Rate bits_per_second(double bps) { return Rate(bps); }
  static constexpr Rate gbps(double g) { return Rate(g * 1e9); }
  static constexpr Rate bytes_per_second(double bytes) { return Rate(bytes * 8.0); }

  constexpr double bps() const { return bps_; }
  constexpr double gbps() const { return bps_ * 1e-9; }

  constexpr Rate operator+(Rate o) const { return Rate(bps_ + o.bps_); }
  constexpr Rate operator-(Rate o) const { return Rate(bps_ - o.bps_); }
  constexpr Rate operator*(double k) const { return Rate(bps_ * k); }
  constexpr Rate operator/(double k) const { return Rate(bps_ / k); }
  constexpr auto operator<=>(const Rate&) const = default;

 private:
  constexpr explicit Rate(double bps) : bps_(bps) {}
  double bps_ = 0.0;
};

// Time to push `size` through `rate` (serialization only; no latency). Rounded up to a whole
// picosecond so that a transfer never finishes before its last bit.
Time transmission_time(Bytes size, Rate rate);

// Parsers. Throw mfabric::Error naming the text on malformed, unit-less, negative or unknown-unit
// input. Time: ps, ns, us, ms, s (also "µs"). Rate: [k|K|M|G|T] followed by nothing, "bps", "b/s",
// "bit/s" (bits) or "Bps", "B/s" (bytes); decimal prefixes. Bytes: B, KB/MB/GB/TB (decimal),
// KiB/MiB/GiB/TiB (binary); the result must be a whole number of bytes.
Time parse_time(std::string_view text);
Rate parse_rate(std::string_view text);
Bytes parse_bytes(std::string_view text);

// Printing picks the largest unit that keeps the number at least 1 and trims trailing zeros:
// "25ms", "1.5us", "400Gbps", "7.2Tbps", "2MiB", "1.5GB".
std::string to_string(Time t);
std::string to_string(Rate r);
std::string to_string(Bytes b);

// Short link-speed label used in tables and price books: "400G", "1.6T".
std::string link_label(Rate r);

}  // namespace mfabric
