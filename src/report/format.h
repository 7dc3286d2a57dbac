// Number formatting for human-readable output (tables); JSON carries plain numbers.
//
// Nothing here casts a double to an integer type: a value outside the int64 range would print
// garbage ("-$-0"). Finite values of any size print exactly (as the double holds them); NaN and
// infinity are mfabric::Error, because they mean a result could not be computed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mfabric::report {

// 1234567 -> "1,234,567".
std::string with_commas(std::int64_t n);
// 1234567.4 -> "1,234,567" (rounded to a whole number, half away from zero).
std::string whole_number(double x);
// 13493248.0 -> "$13,493,248" (rounded to whole dollars).
std::string dollars(double usd);
// 2248.5 -> "$2,248.50".
std::string dollars_and_cents(double usd);
// 2.3766 -> "2.38x".
std::string ratio(double r);
// A speed ratio (reference time / time) spelled out, as every command words one: "1.25x faster",
// "1.25x slower" (speed 0.80x), "as fast" (equal to two decimals).
std::string faster_or_slower(double speed);
// `text` cut at spaces into lines of at most `width` characters (a longer word has a line of its
// own), the first line after `first`, the others after `rest`; ends with a newline.
std::string wrapped(const std::string& text, std::size_t width, const std::string& first,
                    const std::string& rest);

// Columns of like values in one unit family each (docs/cli.md, "Units in tables"): traffic in
// decimal bytes (92.36TB: networks count in powers of ten), memory in binary bytes (192GiB), and
// a column of times in one unit, the one that fits its largest value (2.496s above 0.175s).
// Four significant digits; negative or non-finite values are mfabric::Error.
std::string traffic_bytes(double bytes);
std::string memory_bytes(double bytes);
std::vector<std::string> times_in_one_unit(const std::vector<double>& seconds);
// One time of such a column, in the unit of a column whose largest value is `largest_seconds`.
std::string time_in_unit_of(double seconds, double largest_seconds);

// The parts with `separator` between them.
std::string join_strings(const std::vector<std::string>& parts, const char* separator);

}  // namespace mfabric::report
