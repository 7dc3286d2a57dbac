// The Telcordia TL1 message format (GR-831 style) as an OCS such as a Polatis switch speaks it
// (docs/runtime.md, "TL1"): input commands, output responses, in-progress acknowledgments and
// autonomous messages, incremental readers that frame them from a byte stream, and the content of
// the Polatis responses mfabric reads (cross-connects, port status).
//
// Everything here is text in, text out: no sockets (tl1_client.h), no clocks. Every function that
// reads bytes from a peer is bounded (kMaxTl1CommandBytes, kMaxTl1LineBytes,
// kMaxTl1ResponseBytes) and reports bad input as one mfabric::Error whose field names the part
// ("ctag", "verb", "header", ...) and whose message says what was expected, quoting at most a
// short, printable piece of the input.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "control/ocs_commands.h"

namespace mfabric::tl1 {

// Longest input command, ';' included.
inline constexpr std::size_t kMaxTl1CommandBytes = 4096;
// Longest line of an output message (a quoted line of RTRV-PATCH is about 12 bytes).
inline constexpr std::size_t kMaxTl1LineBytes = std::size_t{64} << 10;
// Longest output message, header to terminator (a 1008-port OCS's RTRV-PATCH is about 13 KB).
inline constexpr std::size_t kMaxTl1ResponseBytes = std::size_t{1} << 20;

// --- Input commands ------------------------------------------------------------------------------

// VERB[-MOD1[-MOD2]]:[TID]:[AID]:CTAG[:[GENERAL_BLOCK][:PAYLOAD[,PAYLOAD...]]];
//
// e.g. "ENT-PATCH::1,2:7:;" is {verb "ENT-PATCH", aid "1,2", ctag "7"} and
// "ACT-USER::admin:1::secret;" is {verb "ACT-USER", aid "admin", ctag "1", parameters {"secret"}}.
struct Tl1Command {
  std::string verb;           // upper case: 1 to 3 words of letters and digits joined by '-'
  std::string tid;            // target identifier: letters, digits, '-', '_', '.'; may be empty
  std::string aid;            // access identifier: letters, digits and - _ . , & ; may be empty
  std::string ctag;           // correlation tag: 1 to 6 letters or digits
  std::string general_block;  // letters, digits and - _ . , = ; may be empty
  std::vector<std::string> parameters;  // the payload, split at ',' (each as written, quotes kept)

  bool operator==(const Tl1Command&) const = default;
};

// Reads one command. Whitespace (space, tab, CR, LF) before and after it is ignored; the text must
// end with ';' and be at most kMaxTl1CommandBytes long. The verb is returned in upper case (TL1 is
// case-insensitive), everything else as written. A payload parameter is printable ASCII without
// spaces, ',', ':', ';' or '"', or a double-quoted string of printable ASCII (spaces, ',', ':' and
// ';' allowed) without '"' inside; empty parameters between commas are kept ("a,,b" is three),
// an empty payload is none. Promises: parse_tl1_command(format_tl1_command(c)) == c for every c
// that format_tl1_command accepts. mfabric::Error (field: "command", "verb", "tid", "aid", "ctag",
// "general block" or "parameter N") naming what was expected otherwise.
Tl1Command parse_tl1_command(std::string_view text);

// The command as text: "VERB:TID:AID:CTAG:GENERAL_BLOCK[:P1,P2,...];" (no line end; the colon
// after the CTAG is always written, as control::Tl1Syntax's templates do). mfabric::Error, with
// the same fields as parse_tl1_command, for a part it could not read back (e.g. an empty CTAG or a
// lone empty parameter, which reads back as none).
std::string format_tl1_command(const Tl1Command& command);

// Frames input commands from a byte stream (a TL1 server's side): a command ends at the first ';'
// outside double quotes; whitespace between commands is skipped.
class Tl1CommandReader {
 public:
  // Appends bytes received. mfabric::Error (field "command") when the command being received grows
  // past kMaxTl1CommandBytes without its ';': the reader then discards bytes up to and including
  // the next ';' (so a session can answer and go on) and commands completed before stay queued.
  void feed(std::string_view bytes);
  // The next complete command's text, ';' included, surrounding whitespace not; nullopt when none
  // is complete yet.
  std::optional<std::string> next_text();
  // parse_tl1_command(next_text()): a malformed command is taken off the queue, then throws.
  std::optional<Tl1Command> next();
  // Bytes of a command not complete yet (0 between commands).
  std::size_t pending_bytes() const { return partial_.size(); }

 private:
  std::deque<std::string> complete_;
  std::string partial_;
  bool in_quotes_ = false;
  bool discarding_ = false;
};

// --- Output messages -----------------------------------------------------------------------------

enum class Tl1Completion { Compld, Deny, Prtl, Delay, Rtrv };

// "COMPLD", "DENY", "PRTL", "DELAY", "RTRV".
std::string_view completion_name(Tl1Completion completion);

// A response to a command:
//
//   \r\n\n   SID YY-MM-DD HH:MM:SS\r\n
//   M  CTAG COMPLD\r\n
//      IIAC\r\n                  (DENY only: the error code, 4 upper-case letters)
//      "1,2"\r\n                 (quoted lines, any number; \" and \\ escape inside)
//      /* a comment */\r\n       (optional)
//   ;                            ('>' instead: more messages with this CTAG follow)
struct Tl1Response {
  std::string sid;   // source identifier, 1 to 64 bytes: letters, digits, '-', '_', '.', or any
                     // printable ASCII without '"' (then written quoted)
  std::string date;  // "YY-MM-DD"
  std::string time;  // "HH:MM:SS"
  std::string ctag;
  Tl1Completion completion = Tl1Completion::Compld;
  std::string error_code;          // DENY's code ("IIAC", "SNVS", ...); empty otherwise
  std::vector<std::string> lines;  // the quoted lines' text, unescaped (printable ASCII)
  std::string comment;             // the comments' text joined by spaces, trimmed (< 64 KiB)
  bool continued = false;          // terminated by '>' instead of ';'

  bool operator==(const Tl1Response&) const = default;
};

// An acknowledgment of a command that takes time: "IP CTAG\r\n<" (in progress; the response
// follows), or PF (printout follows), OK, NA (not acknowledged), NG (no good), RL (repeat later).
struct Tl1Acknowledgment {
  std::string code;  // "IP", "PF", "OK", "NA", "NG" or "RL"
  std::string ctag;

  bool operator==(const Tl1Acknowledgment&) const = default;
};

// A message the OCS sends on its own (an alarm, an event): like a response, with the alarm code
// ("*C" critical, "**" major, "*" minor, "A" non-alarm), an autonomous tag and a verb in place of
// "M CTAG COMPLETION".
struct Tl1AutonomousMessage {
  std::string sid;
  std::string date;
  std::string time;
  std::string alarm_code;  // "*C", "**", "*" or "A"
  std::string atag;        // 1 to 10 letters, digits or '.'
  std::string verb;  // e.g. "REPT ALM EQPT": words of upper-case letters, digits, '-' (<= 64 B)
  std::vector<std::string> lines;
  std::string comment;

  bool operator==(const Tl1AutonomousMessage&) const = default;
};

using Tl1Message = std::variant<Tl1Response, Tl1Acknowledgment, Tl1AutonomousMessage>;

// The message as the OCS sends it, starting with "\r\n\n" (responses, autonomous messages) and
// ending with its terminator (';', '>' or '<'). mfabric::Error (field naming the part) for a part
// that would not read back, or (field "message") a message longer than kMaxTl1ResponseBytes.
// Promises: parse_tl1_message and Tl1ResponseReader read the text back as the message; and a
// message they read formats (unless it grows past the bound: formatting indents every body line
// by three spaces) and reads back equal.
std::string format_tl1_response(const Tl1Response& response);
std::string format_tl1_acknowledgment(const Tl1Acknowledgment& acknowledgment);
std::string format_tl1_autonomous(const Tl1AutonomousMessage& message);
std::string format_tl1_message(const Tl1Message& message);

// Reads one complete message (as format_tl1_message writes it; leading CR/LF ignored, lines may
// end in CRLF or LF, spaces between fields may be one or more). mfabric::Error (field "header",
// "identification", "body line N", "acknowledgment", "message") naming what was expected.
Tl1Message parse_tl1_message(std::string_view text);

// Frames output messages from a byte stream (a TL1 client's side). Between messages it skips CR,
// LF and '<' (the prompt some OCSs print); a message starting with a space is a response or an
// autonomous message and ends at a line that is ';' or '>'; one starting with a letter is an
// acknowledgment and ends at '<'.
class Tl1ResponseReader {
 public:
  // Appends bytes received and finds the messages they complete. mfabric::Error (field "message")
  // when a line grows past kMaxTl1LineBytes (CRs not counted), a message past kMaxTl1ResponseBytes
  // (an acknowledgment past 64 bytes), or a byte between messages starts none; the reader then
  // holds nothing of the message and drops the rest of `bytes` (messages completed before stay
  // queued), and the caller should drop the connection, since the stream's framing is lost. Memory
  // is bounded by the largest message plus the complete messages not taken yet.
  void feed(std::string_view bytes);
  // The next complete message; nullopt when none is complete yet. A message that does not parse
  // is taken off the queue, then mfabric::Error as parse_tl1_message.
  std::optional<Tl1Message> next();
  // Forgets everything (after a reconnect).
  void reset();
  // Bytes of a message not complete yet.
  std::size_t pending_bytes() const { return partial_.size(); }

 private:
  enum class Framing { Between, Message, Acknowledgment };
  void reset_partial();

  std::deque<std::string> complete_;
  std::string partial_;
  Framing framing_ = Framing::Between;
  std::size_t line_bytes_ = 0;
};

// --- Polatis content -----------------------------------------------------------------------------

// RTRV-PATCH's quoted lines "A,B": port A cross-connected to port B, ports numbered by the device
// (from 1). Returned as written, in order. mfabric::Error (field "patch N", counting quoted lines
// from 1) for a line that is not two different port numbers of 1 to control::kMaxOcsPorts, or a
// port in two patches.
std::vector<std::pair<int, int>> parse_patches(const Tl1Response& response);
// "A,B", a line of RTRV-PATCH.
std::string format_patch_line(int a, int b);

// The patches as an OCS configuration of `ports` ports numbered from 0 (device port p is
// p - port_base, as control::Tl1Syntax numbers them). mfabric::Error (field "patches") for a
// port outside the configuration.
control::OcsConfiguration configuration_of_patches(const std::vector<std::pair<int, int>>& patches,
                                                   int ports, int port_base = 1);

// A port's state as RTRV-PORT-STATUS reports it in quoted lines "P:STATUS=IS" (in service),
// "P:STATUS=OOS" (out of service, taken down by an operator) or "P:STATUS=FAILED" (a fault); other
// KEY=VALUE parameters after a ',' are ignored.
enum class PortState { InService, OutOfService, Failed };
struct PortStatus {
  int port = 0;  // numbered by the device
  PortState state = PortState::InService;
  bool operator==(const PortStatus&) const = default;
};
// "IS", "OOS", "FAILED".
std::string_view port_state_name(PortState state);
// mfabric::Error (field "port status N") for a line not of that form.
std::vector<PortStatus> parse_port_status(const Tl1Response& response);
// "P:STATUS=STATE", a line of RTRV-PORT-STATUS.
std::string format_port_status_line(const PortStatus& status);

}  // namespace mfabric::tl1
