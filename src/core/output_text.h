// Text that mfabric writes (tables, CSV, messages) must stay readable and parseable whatever
// bytes a user put in a name: a file named with byte 0xff, a model name holding a newline or a
// terminal escape. These helpers make a string safe for one kind of output; JSON has its own in
// json_text.h.
#pragma once

#include <string>
#include <string_view>

namespace mfabric {

// The Unicode replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// True if `text` is well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD (one per maximal subpart, the
// Unicode recommended practice); valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

// `text` for a terminal or a text table: valid UTF-8, and every control character (C0, DEL,
// C1) written as an escape (\n, \t, \r, \x1B, \u009B), so that a name cannot break a line or
// drive the terminal.
std::string printable(std::string_view text);

// A piece of input quoted for an error message: printable(), in single quotes, and at most
// about `max_chars` bytes of it, with its full length given when it is cut ("'aaaa...' (10 MB)"),
// so that a 10 MB field or a terminal escape in a file never floods or drives the terminal.
std::string quote_input(std::string_view text, std::size_t max_chars = 80);

// `text` with ASCII letters lowered (names matched case-insensitively: models, GPUs,
// calibrations, true/false); other bytes as they are.
std::string ascii_lower(std::string_view text);

// Number of characters (code points) of valid UTF-8 `text`: its width in a text table.
std::size_t display_width(std::string_view text);

// One CSV field per RFC 4180: valid UTF-8, and quoted (inner quotes doubled) when it holds a
// comma, a quote, a carriage return or a line feed.
std::string csv_field(std::string_view text);

}  // namespace mfabric
