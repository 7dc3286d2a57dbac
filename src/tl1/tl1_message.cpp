// TL1 output messages: responses, acknowledgments and autonomous messages, their format and
// parse, and the reader that frames them (tl1/tl1_message.h).
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

constexpr std::size_t kMaxAcknowledgmentBytes = 64;
constexpr std::size_t kMaxAtagBytes = 10;
constexpr std::size_t kMaxSidBytes = 64;
constexpr std::size_t kMaxAutonomousVerbBytes = 64;
// What format writes must read back, and what reads must format: a quoted line is written
// '   "TEXT"' (TEXT escaped) and a comment '   /* TEXT */', each within kMaxTl1LineBytes.
constexpr std::size_t kMaxQuotedLineBytes = kMaxTl1LineBytes - 3;  // '"TEXT"'
constexpr std::size_t kMaxCommentBytes = kMaxTl1LineBytes - 9;     // TEXT, all comments joined

constexpr std::string_view kCompletionNames[] = {"COMPLD", "DENY", "PRTL", "DELAY", "RTRV"};
constexpr std::string_view kAcknowledgmentCodes[] = {"IP", "PF", "OK", "NA", "NG", "RL"};
constexpr std::string_view kAlarmCodes[] = {"*C", "**", "*", "A"};

template <std::size_t N>
bool is_one_of(std::string_view s, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), s) != std::end(names);
}

bool is_sid_char(char c) {
  return is_tid_char(c);
}
bool is_atag_char(char c) {
  return is_alnum(c) || c == '.';
}
bool is_verb_word_char(char c) {
  return is_upper(c) || is_digit(c) || c == '-';
}

// Two digits each in [lo, hi] at s[at], s[at + 1].
bool two_digits_in(std::string_view s, std::size_t at, int lo, int hi) {
  if (!is_digit(s[at]) || !is_digit(s[at + 1])) return false;
  const int v = (s[at] - '0') * 10 + (s[at + 1] - '0');
  return v >= lo && v <= hi;
}

void check_date(std::string_view date) {
  if (date.size() != 8 || date[2] != '-' || date[5] != '-' || !two_digits_in(date, 0, 0, 99) ||
      !two_digits_in(date, 3, 1, 12) || !two_digits_in(date, 6, 1, 31)) {
    fail("header", fmt::format("expected the date as YY-MM-DD, got {}", quote_input(date)));
  }
}

void check_time(std::string_view time) {
  if (time.size() != 8 || time[2] != ':' || time[5] != ':' || !two_digits_in(time, 0, 0, 23) ||
      !two_digits_in(time, 3, 0, 59) || !two_digits_in(time, 6, 0, 60)) {
    fail("header", fmt::format("expected the time as HH:MM:SS, got {}", quote_input(time)));
  }
}

void check_sid(std::string_view sid) {
  if (sid.empty() || sid.size() > kMaxSidBytes || !all_of(sid, is_quoted_char)) {
    fail("header", fmt::format("expected a source identifier of 1 to {} printable ASCII "
                               "characters without '\"', got {}",
                               kMaxSidBytes, quote_input(sid)));
  }
}

void check_text_line(std::string_view text, std::size_t index) {
  const std::size_t escapes = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return c == '"' || c == '\\'; }));
  if (!all_of(text, is_printable) || 2 + text.size() + escapes > kMaxQuotedLineBytes) {
    fail(fmt::format("line {}", index + 1),
         fmt::format("expected printable ASCII of at most {} bytes quoted, got {}",
                     kMaxQuotedLineBytes, quote_input(text)));
  }
}

void check_comment(std::string_view comment) {
  if (comment != trim(comment, is_blank) || !all_of(comment, is_printable) ||
      comment.size() > kMaxCommentBytes) {
    fail("comment", fmt::format("expected at most {} bytes of printable ASCII without leading or "
                                "trailing spaces, got {}",
                                kMaxCommentBytes, quote_input(comment)));
  }
}

void check_atag(std::string_view atag) {
  if (atag.empty() || atag.size() > kMaxAtagBytes || !all_of(atag, is_atag_char)) {
    fail("identification", fmt::format("expected an ATAG of 1 to {} letters, digits or '.', got {}",
                                       kMaxAtagBytes, quote_input(atag)));
  }
}

void check_autonomous_verb(std::string_view verb) {
  const std::vector<std::string_view> words = split_words(verb);
  bool ok = !words.empty() && verb.size() <= kMaxAutonomousVerbBytes &&
            fmt::format("{}", fmt::join(words, " ")) == verb;
  for (const std::string_view w : words)
    ok = ok && all_of(w, is_verb_word_char);
  if (!ok) {
    fail("identification",
         fmt::format("expected a verb of upper-case words (e.g. REPT ALM EQPT) of at most {} "
                     "bytes, got {}",
                     kMaxAutonomousVerbBytes, quote_input(verb)));
  }
}

std::string header_text(std::string_view sid, std::string_view date, std::string_view time) {
  check_sid(sid);
  check_date(date);
  check_time(time);
  const bool bare = all_of(sid, is_sid_char);
  return fmt::format("\r\n\n   {}{}{} {} {}\r\n", bare ? "" : "\"", sid, bare ? "" : "\"", date,
                     time);
}

// `out`, a whole message, if a reader takes it.
std::string within_message_bound(std::string out) {
  if (out.size() > kMaxTl1ResponseBytes) {
    fail("message",
         fmt::format("expected at most {} bytes, got {}", kMaxTl1ResponseBytes, out.size()));
  }
  return out;
}

std::string body_text(const std::vector<std::string>& lines, std::string_view comment) {
  std::string out;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    check_text_line(lines[k], k);
    out += "   \"";
    for (const char c : lines[k]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += "\"\r\n";
  }
  check_comment(comment);
  if (!comment.empty()) out += fmt::format("   /* {} */\r\n", comment);
  return out;
}

// What every message with a header and a body shares while it is read.
struct Body {
  std::vector<std::string> lines;
  std::string comment;
  std::string error_code;
};

// The header line: SID (bare or quoted), date, time.
void parse_header(std::string_view line, std::string& sid, std::string& date, std::string& time) {
  if (line.empty() || !is_blank(line.front())) {
    fail("header", fmt::format("expected '   SID YY-MM-DD HH:MM:SS' starting with spaces, got {}",
                               quote_input(line)));
  }
  std::string_view rest = trim(line, is_blank);
  if (!rest.empty() && rest.front() == '"') {
    const std::size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) {
      fail("header",
           fmt::format("the quoted source identifier is not closed in {}", quote_input(line)));
    }
    sid = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    if (!rest.empty() && !is_blank(rest.front())) {
      fail("header",
           fmt::format("expected a space after the source identifier in {}", quote_input(line)));
    }
  } else {
    const std::size_t end = std::min(rest.size(), rest.find_first_of(" \t"));
    sid = rest.substr(0, end);
    rest.remove_prefix(end);
    if (!all_of(sid, is_sid_char)) {
      fail("header", fmt::format("expected a source identifier of letters, digits, '-', '_' or "
                                 "'.' (or quoted), got {}",
                                 quote_input(sid)));
    }
  }
  check_sid(sid);
  const std::vector<std::string_view> words = split_words(rest);
  if (words.size() != 2) {
    fail("header", fmt::format("expected '   SID YY-MM-DD HH:MM:SS', got {}", quote_input(line)));
  }
  check_date(words[0]);
  check_time(words[1]);
  date = words[0];
  time = words[1];
}

// One body line into `body`. `deny`: a 4-letter error code is allowed (once).
void parse_body_line(std::string_view raw, std::size_t number, bool deny, Body& body) {
  const std::string field = fmt::format("body line {}", number);
  const std::string_view line = trim(raw, is_blank);
  if (line.empty()) return;
  if (line.front() == '"') {
    if (line.size() > kMaxQuotedLineBytes) {
      fail(field, fmt::format("expected a quoted line of at most {} bytes, got {}",
                              kMaxQuotedLineBytes, line.size()));
    }
    if (line.size() < 2 || line.back() != '"') {
      fail(field, fmt::format("expected a quoted line to end with '\"', got {}", quote_input(raw)));
    }
    std::string text;
    const std::string_view inner = line.substr(1, line.size() - 2);
    for (std::size_t k = 0; k < inner.size(); ++k) {
      char c = inner[k];
      if (c == '\\') {
        if (k + 1 == inner.size() || (inner[k + 1] != '"' && inner[k + 1] != '\\')) {
          fail(field,
               fmt::format("expected \\\" or \\\\ after a backslash, got {}", quote_input(raw)));
        }
        c = inner[++k];
      } else if (c == '"') {
        fail(field, fmt::format("expected a quote inside a quoted line as \\\", got {}",
                                quote_input(raw)));
      } else if (!is_printable(c)) {
        fail(field, fmt::format("expected printable ASCII, got {}", quote_input(raw)));
      }
      text += c;
    }
    body.lines.push_back(std::move(text));
    return;
  }
  if (line.starts_with("/*")) {
    if (line.size() < 4 || !line.ends_with("*/") || !all_of(line, is_printable)) {
      fail(field, fmt::format("expected a comment /* ... */ of printable ASCII, got {}",
                              quote_input(raw)));
    }
    const std::string_view text = trim(line.substr(2, line.size() - 4), is_blank);
    if (!text.empty()) {
      if (!body.comment.empty()) body.comment += ' ';
      body.comment += text;
      if (body.comment.size() > kMaxCommentBytes) {
        fail(field, fmt::format("expected comments of at most {} bytes in all", kMaxCommentBytes));
      }
    }
    return;
  }
  if (deny && body.error_code.empty() && line.size() == 4 && all_of(line, is_upper)) {
    body.error_code = line;
    return;
  }
  fail(field,
       fmt::format("expected a quoted line \"...\", a comment /* ... */{}, got {}",
                   deny ? " or an error code of 4 upper-case letters" : "", quote_input(raw)));
}

Tl1Acknowledgment parse_acknowledgment(std::string_view text) {
  const std::string_view body = trim(text, is_space);
  const auto expected = [&] {
    return fmt::format("expected 'CODE CTAG' and '<' (CODE one of IP, PF, OK, NA, NG, RL), got {}",
                       quote_input(text));
  };
  if (body.empty() || body.back() != '<') fail("acknowledgment", expected());
  const std::string_view content = trim(body.substr(0, body.size() - 1), is_space);
  for (const char c : content) {
    if (!is_printable(c)) fail("acknowledgment", expected());
  }
  const std::vector<std::string_view> words = split_words(content);
  if (words.size() != 2 || !is_one_of(words[0], kAcknowledgmentCodes)) {
    fail("acknowledgment", expected());
  }
  check_ctag(words[1]);
  return {std::string(words[0]), std::string(words[1])};
}

}  // namespace

std::string_view completion_name(Tl1Completion completion) {
  return kCompletionNames[static_cast<std::size_t>(completion)];
}

std::string format_tl1_response(const Tl1Response& response) {
  std::string out = header_text(response.sid, response.date, response.time);
  check_ctag(response.ctag);
  out += fmt::format("M  {} {}\r\n", response.ctag, completion_name(response.completion));
  if (!response.error_code.empty()) {
    if (response.completion != Tl1Completion::Deny) {
      fail("error code", "expected no error code except in a DENY response");
    }
    if (response.error_code.size() != 4 || !all_of(response.error_code, is_upper)) {
      fail("error code",
           fmt::format("expected 4 upper-case letters, got {}", quote_input(response.error_code)));
    }
    out += fmt::format("   {}\r\n", response.error_code);
  }
  out += body_text(response.lines, response.comment);
  out += response.continued ? '>' : ';';
  return within_message_bound(std::move(out));
}

std::string format_tl1_acknowledgment(const Tl1Acknowledgment& acknowledgment) {
  if (!is_one_of(acknowledgment.code, kAcknowledgmentCodes)) {
    fail("acknowledgment", fmt::format("expected IP, PF, OK, NA, NG or RL, got {}",
                                       quote_input(acknowledgment.code)));
  }
  check_ctag(acknowledgment.ctag);
  return fmt::format("{} {}\r\n<", acknowledgment.code, acknowledgment.ctag);
}

std::string format_tl1_autonomous(const Tl1AutonomousMessage& message) {
  std::string out = header_text(message.sid, message.date, message.time);
  if (!is_one_of(message.alarm_code, kAlarmCodes)) {
    fail("identification", fmt::format("expected the alarm code *C, **, * or A, got {}",
                                       quote_input(message.alarm_code)));
  }
  check_atag(message.atag);
  check_autonomous_verb(message.verb);
  out += fmt::format("{:<2} {} {}\r\n", message.alarm_code, message.atag, message.verb);
  out += body_text(message.lines, message.comment);
  out += ';';
  return within_message_bound(std::move(out));
}

std::string format_tl1_message(const Tl1Message& message) {
  return std::visit(
      [](const auto& m) -> std::string {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Tl1Response>) {
          return format_tl1_response(m);
        } else if constexpr (std::is_same_v<T, Tl1Acknowledgment>) {
          return format_tl1_acknowledgment(m);
        } else {
          return format_tl1_autonomous(m);
        }
      },
      message);
}

Tl1Message parse_tl1_message(std::string_view text) {
  if (text.size() > kMaxTl1ResponseBytes) {
    fail("message",
         fmt::format("expected at most {} bytes, got {}", kMaxTl1ResponseBytes, text.size()));
  }
  std::size_t start = 0;
  while (start < text.size() && (text[start] == '\r' || text[start] == '\n'))
    ++start;
  text.remove_prefix(start);
  if (text.empty()) fail("message", "expected a TL1 message, got nothing");
  // An acknowledgment starts with its code and ends with '<'; a header line starts with spaces.
  if (is_letter(text.front()) && trim(text, is_space).ends_with('<')) {
    return parse_acknowledgment(text);
  }

  // Lines without their CR; the message ends at the first line that is ';' or '>'.
  std::vector<std::string_view> lines;
  char terminator = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.size(), text.find('\n', at));
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    while (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    std::string_view bare = line;
    while (!bare.empty() && bare.front() == '\r')
      bare.remove_prefix(1);
    if (bare == ";" || bare == ">") {
      terminator = bare.front();
      break;
    }
    if (line.size() > kMaxTl1LineBytes) {
      fail("message", fmt::format("expected lines of at most {} bytes, got one of {}",
                                  kMaxTl1LineBytes, line.size()));
    }
    lines.push_back(line);
  }
  if (terminator == 0) fail("message", "expected the message to end with a line ';' or '>'");
  if (at < text.size() && !all_of(text.substr(at), is_space)) {
    fail("message", fmt::format("expected nothing after the terminator, got {}",
                                quote_input(text.substr(at))));
  }
  if (lines.size() < 2) {
    fail("message", "expected a header line and an identification line before the terminator");
  }

  std::string sid, date, time;
  parse_header(lines[0], sid, date, time);
  const std::vector<std::string_view> id = split_words(lines[1]);
  Body body;
  if (!id.empty() && id[0] == "M") {
    if (id.size() != 3) {
      fail("identification", fmt::format("expected 'M  CTAG COMPLD|DENY|PRTL|DELAY|RTRV', got {}",
                                         quote_input(lines[1])));
    }
    check_ctag(id[1]);
    const auto* name = std::find(std::begin(kCompletionNames), std::end(kCompletionNames), id[2]);
    if (name == std::end(kCompletionNames)) {
      fail("identification",
           fmt::format("expected COMPLD, DENY, PRTL, DELAY or RTRV, got {}", quote_input(id[2])));
    }
    Tl1Response response;
    response.completion = static_cast<Tl1Completion>(name - std::begin(kCompletionNames));
    const bool deny = response.completion == Tl1Completion::Deny;
    for (std::size_t k = 2; k < lines.size(); ++k)
      parse_body_line(lines[k], k + 1, deny, body);
    response.sid = std::move(sid);
    response.date = std::move(date);
    response.time = std::move(time);
    response.ctag = id[1];
    response.error_code = std::move(body.error_code);
    response.lines = std::move(body.lines);
    response.comment = std::move(body.comment);
    response.continued = terminator == '>';
    return response;
  }
  if (id.size() < 3 || !is_one_of(id[0], kAlarmCodes)) {
    fail("identification",
         fmt::format("expected 'M  CTAG COMPLETION' or an autonomous 'ALARM ATAG VERB', got {}",
                     quote_input(lines[1])));
  }
  Tl1AutonomousMessage message;
  check_atag(id[1]);
  std::vector<std::string_view> verb(id.begin() + 2, id.end());
  message.verb = fmt::format("{}", fmt::join(verb, " "));
  check_autonomous_verb(message.verb);
  if (terminator != ';') fail("message", "expected an autonomous message to end with ';'");
  for (std::size_t k = 2; k < lines.size(); ++k)
    parse_body_line(lines[k], k + 1, false, body);
  message.sid = std::move(sid);
  message.date = std::move(date);
  message.time = std::move(time);
  message.alarm_code = id[0];
  message.atag = id[1];
  message.lines = std::move(body.lines);
  message.comment = std::move(body.comment);
  return message;
}

void Tl1ResponseReader::feed(std::string_view bytes) {
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    const char c = bytes[k];
    switch (framing_) {
      case Framing::Between:
        if (c == '\r' || c == '\n' || c == '<') continue;
        if (c == ' ') {
          framing_ = Framing::Message;
          line_bytes_ = 1;
        } else if (is_letter(c)) {
          framing_ = Framing::Acknowledgment;
        } else {
          reset_partial();
          // The byte alone, so that the message does not depend on how the stream was cut.
          fail("message", fmt::format("expected a response, an acknowledgment or an autonomous "
                                      "message, got {} between messages",
                                      quote_input(bytes.substr(k, 1))));
        }
        partial_ += c;
        break;
      case Framing::Message:
        partial_ += c;
        if (c == '\n') {
          line_bytes_ = 0;
        } else if (line_bytes_ == 0 && (c == ';' || c == '>')) {
          complete_.push_back(std::move(partial_));
          reset_partial();
        } else if (c != '\r' && ++line_bytes_ > kMaxTl1LineBytes) {
          // CRs are not counted: a line of kMaxTl1LineBytes ends in CR LF, and "\r;" ends a
          // message as parse_tl1_message reads it.
          reset_partial();
          fail("message", fmt::format("expected lines of at most {} bytes", kMaxTl1LineBytes));
        }
        if (partial_.size() > kMaxTl1ResponseBytes) {
          reset_partial();
          fail("message",
               fmt::format("expected messages of at most {} bytes", kMaxTl1ResponseBytes));
        }
        break;
      case Framing::Acknowledgment:
        partial_ += c;
        if (c == '<') {
          complete_.push_back(std::move(partial_));
          reset_partial();
        } else if (partial_.size() > kMaxAcknowledgmentBytes) {
          const std::string text = std::move(partial_);
          reset_partial();
          fail("message", fmt::format("expected an acknowledgment 'CODE CTAG' and '<' within {} "
                                      "bytes, got {}",
                                      kMaxAcknowledgmentBytes, quote_input(text, 40)));
        }
        break;
    }
  }
}

void Tl1ResponseReader::reset_partial() {
  partial_.clear();
  framing_ = Framing::Between;
  line_bytes_ = 0;
}

std::optional<Tl1Message> Tl1ResponseReader::next() {
  if (complete_.empty()) return std::nullopt;
  const std::string text = std::move(complete_.front());
  complete_.pop_front();
  return parse_tl1_message(text);
}

void Tl1ResponseReader::reset() {
  complete_.clear();
  reset_partial();
}

}  // namespace mfabric::tl1
