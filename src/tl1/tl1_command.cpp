// TL1 input commands: their parts, parse and format, and the reader that frames them
// (tl1/tl1_message.h).
#include "tl1/tl1_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "core/error.h"
#include "core/output_text.h"
#include "tl1/tl1_text.h"

namespace mfabric::tl1 {
using namespace tl1_text;
namespace {

constexpr std::size_t kMaxTidBytes = 20;
constexpr std::size_t kMaxVerbWords = 3;

// The verb: either case, or upper case only (what format writes must read back equal).
void check_verb(std::string_view verb, bool upper_only) {
  const auto expected = [&] {
    return fmt::format(
        "expected 1 to {} words of letters and digits joined by '-', starting with "
        "a letter (e.g. ENT-PATCH), got {}",
        kMaxVerbWords, quote_input(verb));
  };
  if (verb.empty() || !is_letter(verb.front())) fail("verb", expected());
  std::size_t words = 1;
  char previous = '-';
  for (const char c : verb) {
    if (c == '-') {
      if (previous == '-') fail("verb", expected());
      ++words;
    } else if (!is_alnum(c)) {
      fail("verb", expected());
    } else if (upper_only && !is_upper(c) && !is_digit(c)) {
      fail("verb", fmt::format("expected upper case, got {}", quote_input(verb)));
    }
    previous = c;
  }
  if (previous == '-' || words > kMaxVerbWords) fail("verb", expected());
}

void check_tid(std::string_view tid) {
  if (tid.size() > kMaxTidBytes || !all_of(tid, is_tid_char)) {
    fail("tid", fmt::format("expected at most {} letters, digits, '-', '_' or '.', got {}",
                            kMaxTidBytes, quote_input(tid)));
  }
}

void check_aid(std::string_view aid) {
  if (!all_of(aid, is_aid_char)) {
    fail("aid", fmt::format("expected letters, digits, '-', '_', '.', ',' or '&' (e.g. 1,2), "
                            "got {}",
                            quote_input(aid)));
  }
}

void check_general_block(std::string_view block) {
  if (!all_of(block, is_general_block_char)) {
    fail("general block", fmt::format("expected letters, digits, '-', '_', '.', ',', '&' or '=', "
                                      "got {}",
                                      quote_input(block)));
  }
}

void check_parameter(std::string_view p, std::size_t index) {
  const bool quoted = p.size() >= 2 && p.front() == '"' && p.back() == '"' &&
                      all_of(p.substr(1, p.size() - 2), is_quoted_char);
  if (!quoted && !all_of(p, is_bare_parameter_char)) {
    fail(fmt::format("parameter {}", index + 1),
         fmt::format("expected printable text without spaces, ',', ':', ';' or '\"', or a "
                     "double-quoted string without '\"' inside, got {}",
                     quote_input(p)));
  }
}

}  // namespace

Tl1Command parse_tl1_command(std::string_view text) {
  if (text.size() > kMaxTl1CommandBytes) {
    fail("command",
         fmt::format("expected at most {} bytes, got {}", kMaxTl1CommandBytes, text.size()));
  }
  text = trim(text, is_space);
  if (text.empty()) fail("command", "expected a TL1 command (VERB:TID:AID:CTAG:...;), got nothing");
  if (text.back() != ';') {
    fail("command", fmt::format("expected the command to end with ';', got {}", quote_input(text)));
  }
  text.remove_suffix(1);
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (!is_printable(text[k])) {
      fail("command", fmt::format("expected printable ASCII, got byte 0x{:02X} at offset {} of {}",
                                  static_cast<unsigned char>(text[k]), k, quote_input(text)));
    }
  }
  const auto blocks = split_outside_quotes(text, ':');
  if (!blocks)
    fail("command", fmt::format("a double quote is not closed in {}", quote_input(text)));
  if (blocks->size() < 4) {
    fail("ctag", fmt::format("expected VERB:TID:AID:CTAG, got {} block(s) in {}", blocks->size(),
                             quote_input(text)));
  }
  if (blocks->size() > 6) {
    fail("command", fmt::format("expected at most one payload block (VERB:TID:AID:CTAG:GENERAL:"
                                "PAYLOAD), got {} blocks in {}",
                                blocks->size(), quote_input(text)));
  }
  const std::vector<std::string_view>& b = *blocks;
  check_verb(b[0], false);
  check_tid(b[1]);
  check_aid(b[2]);
  check_ctag(b[3]);
  Tl1Command command;
  command.verb.reserve(b[0].size());
  for (const char c : b[0])
    command.verb += to_upper(c);
  command.tid = b[1];
  command.aid = b[2];
  command.ctag = b[3];
  if (b.size() >= 5) {
    check_general_block(b[4]);
    command.general_block = b[4];
  }
  if (b.size() == 6 && !b[5].empty()) {
    const auto parameters = split_outside_quotes(b[5], ',');  // quotes balanced: checked above
    for (std::size_t k = 0; k < parameters->size(); ++k) {
      check_parameter((*parameters)[k], k);
      command.parameters.emplace_back((*parameters)[k]);
    }
  }
  return command;
}

std::string format_tl1_command(const Tl1Command& command) {
  check_verb(command.verb, true);
  check_tid(command.tid);
  check_aid(command.aid);
  check_ctag(command.ctag);
  check_general_block(command.general_block);
  for (std::size_t k = 0; k < command.parameters.size(); ++k) {
    check_parameter(command.parameters[k], k);
  }
  if (command.parameters.size() == 1 && command.parameters[0].empty()) {
    fail("parameter 1", "a lone empty parameter cannot be written (it reads back as none)");
  }
  std::string out = fmt::format("{}:{}:{}:{}:{}", command.verb, command.tid, command.aid,
                                command.ctag, command.general_block);
  if (!command.parameters.empty()) {
    out += ':';
    out += fmt::format("{}", fmt::join(command.parameters, ","));
  }
  out += ';';
  if (out.size() > kMaxTl1CommandBytes) {
    fail("command",
         fmt::format("expected at most {} bytes, got {}", kMaxTl1CommandBytes, out.size()));
  }
  return out;
}

void Tl1CommandReader::feed(std::string_view bytes) {
  bool overflowed = false;
  for (const char c : bytes) {
    if (discarding_) {
      if (c == ';') discarding_ = false;
      continue;
    }
    if (partial_.empty() && is_space(c)) continue;
    partial_ += c;
    if (c == '"') in_quotes_ = !in_quotes_;
    if (c == ';' && !in_quotes_) {
      complete_.push_back(std::move(partial_));
      partial_.clear();
    } else if (partial_.size() >= kMaxTl1CommandBytes) {
      // Not even the ';' fits: refuse the command, and find the next one after its ';'.
      partial_.clear();
      in_quotes_ = false;
      discarding_ = true;
      overflowed = true;
    }
  }
  if (overflowed) {
    fail("command", fmt::format("expected ';' within {} bytes; the command was refused (the "
                                "reader skips to the next ';')",
                                kMaxTl1CommandBytes));
  }
}

std::optional<std::string> Tl1CommandReader::next_text() {
  if (complete_.empty()) return std::nullopt;
  std::string text = std::move(complete_.front());
  complete_.pop_front();
  return text;
}

std::optional<Tl1Command> Tl1CommandReader::next() {
  std::optional<std::string> text = next_text();
  if (!text) return std::nullopt;
  return parse_tl1_command(*text);
}

}  // namespace mfabric::tl1
