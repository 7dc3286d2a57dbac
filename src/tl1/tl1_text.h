// The TL1 text's pieces that its commands, its output messages and the Polatis content share:
// ASCII character classes independent of the locale, trimming and splitting, port numbers, and
// the error of a malformed part. Internal to tl1/tl1_*.cpp.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/ocs_commands.h"
#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::tl1::tl1_text {

// ASCII classes, independent of the locale.
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
inline bool is_letter(char c) {
  return is_upper(c) || (c >= 'a' && c <= 'z');
}
inline bool is_alnum(char c) {
  return is_letter(c) || is_digit(c);
}
inline bool is_printable(char c) {
  return c >= 0x20 && c <= 0x7e;
}
inline bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
inline bool is_space(char c) {
  return is_blank(c) || c == '\r' || c == '\n';
}
inline char to_upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

inline std::string_view trim(std::string_view s, bool (*drop)(char)) {
  while (!s.empty() && drop(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && drop(s.back()))
    s.remove_suffix(1);
  return s;
}

inline bool all_of(std::string_view s, bool (*ok)(char)) {
  return std::all_of(s.begin(), s.end(), ok);
}

// Splits at every `sep` outside double quotes. nullopt when a quote is not closed.
inline std::optional<std::vector<std::string_view>> split_outside_quotes(std::string_view s,
                                                                         char sep) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '"') {
      quoted = !quoted;
    } else if (s[k] == sep && !quoted) {
      parts.push_back(s.substr(start, k - start));
      start = k + 1;
    }
  }
  if (quoted) return std::nullopt;
  parts.push_back(s.substr(start));
  return parts;
}

inline std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t k = 0;
  while (k < s.size()) {
    while (k < s.size() && is_blank(s[k]))
      ++k;
    const std::size_t start = k;
    while (k < s.size() && !is_blank(s[k]))
      ++k;
    if (k > start) words.push_back(s.substr(start, k - start));
  }
  return words;
}

// A port number of 1 to control::kMaxOcsPorts written in decimal digits, or -1.
inline int port_number(std::string_view s) {
  if (s.empty() || s.size() > 7 || !all_of(s, is_digit)) return -1;
  int value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value >= 1 && value <= control::kMaxOcsPorts ? value : -1;
}

[[noreturn]] inline void fail(std::string field, std::string message) {
  throw Error("", std::move(field), std::move(message));
}

// The characters of a command's parts (tl1_command.cpp) that output messages share.
inline bool is_tid_char(char c) {
  return is_alnum(c) || c == '-' || c == '_' || c == '.';
}
inline bool is_aid_char(char c) {
  return is_tid_char(c) || c == ',' || c == '&';
}
inline bool is_general_block_char(char c) {
  return is_aid_char(c) || c == '=';
}
inline bool is_bare_parameter_char(char c) {
  return c > 0x20 && c <= 0x7e && c != ',' && c != ':' && c != ';' && c != '"';
}
inline bool is_quoted_char(char c) {
  return is_printable(c) && c != '"';
}
// The correlation tag a command carries and its response carries back.
inline constexpr std::size_t kMaxCtagBytes = 6;
inline void check_ctag(std::string_view ctag) {
  if (ctag.empty() || ctag.size() > kMaxCtagBytes || !all_of(ctag, is_alnum)) {
    fail("ctag", fmt::format("expected 1 to {} letters or digits, got {}", kMaxCtagBytes,
                             quote_input(ctag)));
  }
}

}  // namespace mfabric::tl1::tl1_text
