// TL1 input commands to an OCS (tl1/tl1_message.h): the bytes a client sends, into
// Tl1CommandReader as a TL1 server reads them, and each framed command (and the whole input)
// into parse_tl1_command. The input's repeat markers are expanded (fuzz_support.h). Checked: bad
// bytes are an mfabric::Error; the reader frames the same commands whatever the chunks (of a
// size the first byte picks), each ending in ';' within kMaxTl1CommandBytes; a command that
// parses formats and parses back equal.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "tl1/tl1_message.h"

namespace {

using mfabric::Error;
using mfabric::fuzz::property_failed;
using namespace mfabric::tl1;

void round_trip(std::string_view text) {
  Tl1Command command;
  try {
    command = parse_tl1_command(text);
  } catch (const Error&) {
    return;
  }
  std::string formatted;
  try {
    formatted = format_tl1_command(command);
  } catch (const Error& e) {
    // The canonical form writes the colon after the CTAG: a command at the bound may grow past it.
    if (e.field() == "command") return;
    property_failed(std::string("a command that parsed does not format: ") + e.what());
  }
  try {
    if (!(parse_tl1_command(formatted) == command)) {
      property_failed("a formatted command parses back different: " + formatted);
    }
  } catch (const Error& e) {
    property_failed(std::string("a formatted command does not parse: ") + e.what());
  }
}

std::vector<std::string> frame(std::string_view stream, std::size_t chunk) {
  std::vector<std::string> commands;
  Tl1CommandReader reader;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    // A command too long is refused, and the reader goes on after its ';'.
    mfabric::fuzz::expect_only_mfabric_errors([&] { reader.feed(stream.substr(at, chunk)); });
    if (reader.pending_bytes() >= kMaxTl1CommandBytes) {
      property_failed("the reader holds a command past its bound");
    }
    while (std::optional<std::string> text = reader.next_text()) {
      if (text->empty() || text->back() != ';' || text->size() > kMaxTl1CommandBytes) {
        property_failed("a framed command does not end in ';' within the bound");
      }
      commands.push_back(std::move(*text));
    }
  }
  return commands;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<std::string> expanded = mfabric::fuzz::expanded_text(data, size);
  if (!expanded) return -1;
  const std::string_view stream = *expanded;
  const std::vector<std::string> whole = frame(stream, stream.size() + 1);
  std::size_t chunk = stream.empty() ? 1 : 1 + static_cast<unsigned char>(stream[0]) % 64;
  if (stream.size() > 65536 && chunk < 16) chunk = 16;
  if (frame(stream, chunk) != whole) {
    property_failed("the reader frames different commands in chunks of " + std::to_string(chunk));
  }
  // The first thousand: a 4 MiB expansion may frame 300,000 commands, each refused with an
  // exception (seconds under ASan); the first ones exercise the parser as much.
  for (std::size_t k = 0; k < whole.size() && k < 1000; ++k)
    round_trip(whole[k]);
  round_trip(stream);
  return 0;
}
