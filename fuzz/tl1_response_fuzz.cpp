// TL1 output messages from an OCS (tl1/tl1_message.h): the bytes of a TCP stream into
// Tl1ResponseReader, as a TL1 session reads them. The input's repeat markers are expanded
// (fuzz_support.h), so that lines and messages past the reader's bounds (64 KiB, 1 MiB) are
// reached. Checked: bad bytes are an mfabric::Error; the reader yields the same messages and
// errors whether the stream arrives at once or in chunks (of a size the first byte picks); it
// never holds more than one message's bound; every message it yields formats, and the text reads
// back equal through parse_tl1_message and through a new reader; and patches that read
// (parse_patches) make an OCS configuration.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/output_text.h"
#include "fuzz_support.h"
#include "tl1/tl1_message.h"

namespace {

using mfabric::Error;
using mfabric::fuzz::property_failed;
using namespace mfabric::tl1;

// The Polatis content a session reads from a response: patches that read fit a configuration of
// their largest port.
void check_content(const Tl1Response& response) {
  mfabric::fuzz::expect_only_mfabric_errors([&] {
    const std::vector<std::pair<int, int>> patches = parse_patches(response);
    int ports = 0;
    for (const auto& [a, b] : patches)
      ports = std::max({ports, a, b});
    try {
      configuration_of_patches(patches, ports);
    } catch (const Error& e) {
      property_failed(std::string("patches that read do not fit their ports: ") + e.what());
    }
  });
  mfabric::fuzz::expect_only_mfabric_errors([&] { parse_port_status(response); });
}

// What a session sees of one message: its canonical text, or the error it raised.
std::string round_trip(const Tl1Message& message) {
  std::string text;
  try {
    text = format_tl1_message(message);
  } catch (const Error& e) {
    // Formatting indents every body line: a message near the bound may grow past it.
    if (e.field() == "message") return "too long to format";
    property_failed(std::string("a message that read does not format: ") + e.what());
  }
  Tl1Message again;
  try {
    again = parse_tl1_message(text);
  } catch (const Error& e) {
    property_failed(std::string("a formatted message does not read back: ") + e.what());
  }
  if (!(again == message)) property_failed("a formatted message reads back different");
  Tl1ResponseReader reader;
  try {
    reader.feed(text);
    const std::optional<Tl1Message> framed = reader.next();
    if (!framed || !(*framed == message) || reader.next() || reader.pending_bytes() != 0) {
      property_failed("the reader does not frame a formatted message as one, equal");
    }
  } catch (const Error& e) {
    property_failed(std::string("the reader refuses a formatted message: ") + e.what());
  }
  if (const auto* response = std::get_if<Tl1Response>(&message)) check_content(*response);
  return text;
}

// Messages (and errors) looked at per stream and way of feeding it: a 4 MiB expansion may hold a
// million tiny messages, each an exception under ASan; the first thousands say as much.
constexpr std::size_t kMaxEvents = 2000;

// The first kMaxEvents messages and errors of `stream` fed `chunk` bytes at a time, up to the
// first error of feed() (after which the stream's framing is lost and a session drops the
// connection).
std::vector<std::string> read_stream(std::string_view stream, std::size_t chunk) {
  std::vector<std::string> seen;
  Tl1ResponseReader reader;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    std::optional<std::string> failure;  // recorded after the messages completed before it
    try {
      reader.feed(stream.substr(at, chunk));
    } catch (const Error& e) {
      failure = std::string("feed: ") + e.what();
    }
    if (reader.pending_bytes() > kMaxTl1ResponseBytes) {
      property_failed("the reader holds more than a message's bound");
    }
    while (seen.size() < kMaxEvents) {
      try {
        std::optional<Tl1Message> message = reader.next();
        if (!message) break;
        seen.push_back(round_trip(*message));
      } catch (const Error& e) {
        seen.push_back(std::string("next: ") + e.what());
      }
    }
    if (failure) {
      seen.push_back(*failure);
      break;
    }
    if (seen.size() >= kMaxEvents) break;
  }
  if (seen.size() > kMaxEvents) seen.resize(kMaxEvents);
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<std::string> expanded = mfabric::fuzz::expanded_text(data, size);
  if (!expanded) return -1;
  const std::string_view stream = *expanded;
  const std::vector<std::string> whole = read_stream(stream, stream.size() + 1);
  // Chunks of 1 to 64 bytes; byte-at-a-time only for short streams (it is slow under ASan).
  std::size_t chunk = stream.empty() ? 1 : 1 + static_cast<unsigned char>(stream[0]) % 64;
  if (stream.size() > 65536 && chunk < 16) chunk = 16;
  const std::vector<std::string> chunked = read_stream(stream, chunk);
  if (chunked != whole) {
    std::size_t k = 0;
    while (k < whole.size() && k < chunked.size() && whole[k] == chunked[k])
      ++k;
    const auto at = [&](const std::vector<std::string>& seen) {
      return k < seen.size() ? mfabric::quote_input(seen[k], 200) : std::string("nothing");
    };
    property_failed("the reader yields different messages in chunks of " + std::to_string(chunk) +
                    ": #" + std::to_string(k) + " is " + at(whole) + " at once, " + at(chunked) +
                    " in chunks");
  }
  // The message parser on its own, on the raw input.
  mfabric::fuzz::expect_only_mfabric_errors([&] { round_trip(parse_tl1_message(stream)); });
  return 0;
}
