#include "core/output_text.h"

#include <fmt/format.h>

#include <cstdint>

namespace mfabric {
namespace {

struct Sequence {
  std::size_t length;  // bytes consumed: the whole sequence, or its maximal ill-formed subpart
  bool valid;
};

bool in(unsigned char b, unsigned char lo, unsigned char hi) {
  return b >= lo && b <= hi;
}

// The UTF-8 sequence starting at text[i], after Unicode table 3-7 (well-formed byte sequences).
// An ill-formed one has the length of its maximal subpart: the longest prefix that could start
// a well-formed sequence, at least one byte.
Sequence sequence_at(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {1, true};
  std::size_t continuation = 0;
  unsigned char second_lo = 0x80, second_hi = 0xBF;
  if (in(lead, 0xC2, 0xDF)) {
    continuation = 1;
  } else if (lead == 0xE0) {
    continuation = 2;
    second_lo = 0xA0;
  } else if (in(lead, 0xE1, 0xEC) || in(lead, 0xEE, 0xEF)) {
    continuation = 2;
  } else if (lead == 0xED) {  // U+D800..U+DFFF are surrogates, not characters
    continuation = 2;
    second_hi = 0x9F;
  } else if (lead == 0xF0) {
    continuation = 3;
    second_lo = 0x90;
  } else if (in(lead, 0xF1, 0xF3)) {
    continuation = 3;
  } else if (lead == 0xF4) {  // nothing above U+10FFFF
    continuation = 3;
    second_hi = 0x8F;
  } else {
    return {1, false};  // 0x80..0xC1 (continuation or overlong lead), 0xF5..0xFF
  }
  for (std::size_t k = 1; k <= continuation; ++k) {
    if (i + k >= text.size()) return {k, false};
    const unsigned char lo = k == 1 ? second_lo : 0x80;
    const unsigned char hi = k == 1 ? second_hi : 0xBF;
    if (!in(byte(i + k), lo, hi)) return {k, false};
  }
  return {continuation + 1, true};
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Sequence s = sequence_at(text, i);
    if (!s.valid) return false;
    i += s.length;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    const Sequence s = sequence_at(text, i);
    if (s.valid) {
      out.append(text.substr(i, s.length));
    } else {
      out.append(kReplacementCharacter);
    }
    i += s.length;
  }
  return out;
}

std::string printable(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else if (c == 0xC2 && i + 1 < text.size() &&
               in(static_cast<unsigned char>(text[i + 1]), 0x80, 0x9F)) {
      // C1 controls (U+0080..U+009F) include CSI, which terminals act on like ESC [.
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string quote_input(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return "'" + printable(text) + "'";
  // Cut at a character boundary, not inside a multi-byte UTF-8 sequence.
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return "'" + printable(text.substr(0, cut)) + "...' (" + std::to_string(text.size()) + " bytes)";
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (char c : text) {
    // Every byte but a continuation byte (10xxxxxx) starts a character.
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
  }
  return width;
}

std::string csv_field(std::string_view raw) {
  std::string text = valid_utf8(raw);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace mfabric
