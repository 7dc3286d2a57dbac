#include "workload/chakra_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "core/error.h"
#include "core/input_files.h"
#include "core/units.h"

namespace mfabric::workload::chakra {
namespace {

namespace io = google::protobuf::io;

constexpr int kMaxVarintBytes = 10;
constexpr int kFileBlockBytes = 1 << 18;

std::string cap_text(std::int64_t bytes) {
  return to_string(Bytes(bytes));
}

// The decoded stream handed to protobuf's parser, with three additions no protobuf stream has:
//  - a cap on the decoded bytes taken from the source, counted as they are taken, so that a gzip
//    bomb stops after the cap with bounded memory (over_cap() says that data was left);
//  - a window: the consumer sees nothing past the end of the current message, so a message
//    cannot read more than its own length prefix announced;
//  - peek(): the next bytes without consuming them, so that the length prefix can be checked
//    against the message cap before the message is parsed.
// It also records whether the gzip decoder had just finished a member when the source ended,
// which is how a gzip file cut short is told from one that ends cleanly.
//
// The source is only ever asked for its next chunk, never given bytes back: protobuf's streams
// allow one BackUp() per Next(), and a chunk cut by the window or the cap would need two. The
// current chunk is kept here instead and handed out in pieces.
class CappedStream final : public io::ZeroCopyInputStream {
 public:
  CappedStream(io::ZeroCopyInputStream* source, io::GzipInputStream* gzip, std::int64_t cap)
      : source_(source), gzip_(gzip), cap_(cap) {}

  bool Next(const void** data, int* size) override {
    const std::int64_t room = window_end_ - position_;
    if (room <= 0) return false;
    if (pending_at_ < pending_.size()) {
      const auto n = static_cast<int>(
          std::min<std::int64_t>(room, static_cast<std::int64_t>(pending_.size() - pending_at_)));
      *data = pending_.data() + pending_at_;
      *size = n;
      pending_at_ += static_cast<std::size_t>(n);
      position_ += n;
      last_from_pending_ = true;
      return true;
    }
    if (chunk_at_ == chunk_size_ && !fetch()) return false;
    const auto n = static_cast<int>(
        std::min<std::int64_t>(room, static_cast<std::int64_t>(chunk_size_ - chunk_at_)));
    *data = chunk_ + chunk_at_;
    *size = n;
    chunk_at_ += n;
    position_ += n;
    last_from_pending_ = false;
    return true;
  }

  void BackUp(int count) override {
    if (last_from_pending_) {
      pending_at_ -= static_cast<std::size_t>(count);
    } else {
      chunk_at_ -= count;
    }
    position_ -= count;
  }

  bool Skip(int count) override {
    while (count > 0) {
      const void* data = nullptr;
      int size = 0;
      if (!Next(&data, &size)) return false;
      if (size > count) {
        BackUp(size - count);
        return true;
      }
      count -= size;
    }
    return true;
  }

  std::int64_t ByteCount() const override { return position_; }

  // Up to `n` bytes at the current position, not consumed; fewer only at the end of the data
  // (or of what the cap lets through).
  std::string_view peek(std::size_t n) {
    if (pending_at_ == pending_.size() && chunk_size_ - chunk_at_ >= static_cast<int>(n)) {
      return std::string_view(chunk_ + chunk_at_, n);
    }
    pending_.erase(0, pending_at_);
    pending_at_ = 0;
    while (pending_.size() < n) {
      if (chunk_at_ == chunk_size_ && !fetch()) break;
      const int take = static_cast<int>(
          std::min(n - pending_.size(), static_cast<std::size_t>(chunk_size_ - chunk_at_)));
      pending_.append(chunk_ + chunk_at_, static_cast<std::size_t>(take));
      chunk_at_ += take;
    }
    return std::string_view(pending_).substr(0, n);
  }

  // Reads the source to its end or the cap, discarding: after a message fails to parse, tells
  // whether the gzip data itself is broken further on (its CRC is checked at the end).
  void drain() {
    chunk_at_ = chunk_size_;
    while (fetch())
      chunk_at_ = chunk_size_;
  }

  void set_window_end(std::int64_t end) { window_end_ = end; }
  void clear_window() { window_end_ = std::numeric_limits<std::int64_t>::max(); }

  bool over_cap() const { return over_cap_; }
  // Set once the source has ended: the length of the whole decoded stream.
  std::optional<std::int64_t> total() const { return total_; }
  // The source ended right after a gzip member (a clean end of a compressed file).
  bool gzip_member_complete() const { return gzip_member_complete_; }

 private:
  // Makes the source's next chunk current, within the cap. False at the end of the source or
  // at the cap (over_cap_ then says whether data was left).
  bool fetch() {
    if (total_ || over_cap_) return false;
    if (taken_ >= cap_) {
      const void* data = nullptr;
      int size = 0;
      // A chunk was cut at the cap, or the source still has one: either way, data was left.
      if (cut_at_cap_ || next_nonempty(&data, &size)) {
        over_cap_ = true;
      } else {
        total_ = taken_;
      }
      return false;
    }
    const void* data = nullptr;
    int size = 0;
    if (!next_nonempty(&data, &size)) {
      total_ = taken_;
      return false;
    }
    if (size > cap_ - taken_) {
      size = static_cast<int>(cap_ - taken_);
      cut_at_cap_ = true;
    }
    chunk_ = static_cast<const char*>(data);
    chunk_size_ = size;
    chunk_at_ = 0;
    taken_ += size;
    return true;
  }

  // GzipInputStream may hand out empty chunks while it inflates; they carry no data.
  bool next_nonempty(const void** data, int* size) {
    for (int empty = 0; empty < (1 << 20); ++empty) {
      if (!source_->Next(data, size)) return false;
      if (gzip_ != nullptr) gzip_member_complete_ = gzip_->ZlibErrorCode() == Z_STREAM_END;
      if (*size > 0) return true;
    }
    return false;
  }

  io::ZeroCopyInputStream* source_;
  io::GzipInputStream* gzip_;
  std::int64_t cap_;
  std::int64_t taken_ = 0;     // bytes taken from the source
  std::int64_t position_ = 0;  // bytes handed to the consumer, net of those backed up
  std::int64_t window_end_ = std::numeric_limits<std::int64_t>::max();
  const char* chunk_ = nullptr;  // the source's current chunk, handed out from chunk_at_
  int chunk_size_ = 0;
  int chunk_at_ = 0;
  std::string pending_;  // peeked bytes copied out of chunks, served before the chunk
  std::size_t pending_at_ = 0;
  bool last_from_pending_ = false;
  bool cut_at_cap_ = false;
  bool over_cap_ = false;
  bool gzip_member_complete_ = false;
  std::optional<std::int64_t> total_;
};

}  // namespace

struct DelimitedReader::Impl {
  Impl(const std::string& file, std::int64_t max_decoded, std::int64_t max_message)
      : path(file),
        fd(open_regular_file(file, "Chakra trace",
                             "a Chakra .et file, one per rank (docs/chakra.md)")),
        raw(fd.get(), kFileBlockBytes),
        max_decoded_bytes(max_decoded),
        max_message_bytes(max_message) {
    // The gzip magic bytes 1f 8b decide; ranks may mix plain and compressed files.
    const void* data = nullptr;
    int size = 0;
    if (raw.Next(&data, &size)) {
      const auto* bytes = static_cast<const unsigned char*>(data);
      compressed = size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
      raw.BackUp(size);
    }
    if (compressed) gzip.emplace(&raw, io::GzipInputStream::GZIP);
    stream.emplace(compressed ? static_cast<io::ZeroCopyInputStream*>(&*gzip)
                              : static_cast<io::ZeroCopyInputStream*>(&raw),
                   compressed ? &*gzip : nullptr, max_decoded_bytes);
  }

  // Built only for errors: traces have millions of messages.
  std::string where(std::int64_t number, std::int64_t at) const {
    const std::string what =
        number < 0 ? std::string("GlobalMetadata") : fmt::format("node #{}", number);
    return fmt::format("{} at byte offset {}{}", what, at,
                       compressed ? " of the decompressed stream" : "");
  }

  // Problems of the stream itself, which explain any failure to read a message: the decoded
  // stream past its cap, a read error, corrupt or truncated gzip data.
  void check_stream(std::int64_t what, std::int64_t at) const {
    if (stream->over_cap()) {
      throw Error(path, where(what, at),
                  fmt::format("the decoded stream is larger than the {} mfabric reads from one "
                              "rank file (ChakraOptions::limits.max_rank_bytes, --max-rank-bytes "
                              "raises it)",
                              cap_text(max_decoded_bytes)));
    }
    if (raw.GetErrno() != 0) {
      throw Error(path, where(what, at),
                  fmt::format("cannot read the Chakra trace: {}", std::strerror(raw.GetErrno())));
    }
    check_gzip(what, at);
  }

  void check_gzip(std::int64_t what, std::int64_t at) const {
    if (!gzip || !stream->total()) return;
    const int code = gzip->ZlibErrorCode();
    if (code != Z_OK && code != Z_STREAM_END && code != Z_BUF_ERROR) {
      const char* message = gzip->ZlibErrorMessage();
      throw Error(path, where(what, at),
                  fmt::format("corrupt gzip data: {}",
                              message != nullptr ? message : "the decoder failed"));
    }
    if (!stream->gzip_member_complete()) {
      throw Error(path, where(what, at), "corrupt gzip data: the compressed stream is truncated");
    }
  }

  bool next(google::protobuf::MessageLite& message, std::int64_t what) {
    const std::int64_t start = stream->ByteCount();
    const std::string_view head = stream->peek(kMaxVarintBytes);
    if (head.empty()) {
      check_stream(what, start);
      return false;
    }
    io::CodedInputStream prefix(reinterpret_cast<const std::uint8_t*>(head.data()),
                                static_cast<int>(head.size()));
    std::uint64_t length = 0;
    if (!prefix.ReadVarint64(&length)) {
      check_stream(what, start);
      if (stream->total() && head.size() < static_cast<std::size_t>(kMaxVarintBytes)) {
        throw Error(path, where(what, start), "truncated: the file ends inside a length prefix");
      }
      throw Error(path, where(what, start),
                  "malformed length prefix: not a varint of at most 10 bytes");
    }
    const std::int64_t prefix_bytes = prefix.CurrentPosition();
    if (length > static_cast<std::uint64_t>(max_message_bytes)) {
      throw Error(path, where(what, start),
                  fmt::format("the length prefix announces a message of {} bytes, more than the "
                              "{} a Chakra message may have (ChakraOptions::limits."
                              "max_message_bytes)",
                              length, cap_text(max_message_bytes)));
    }
    const std::int64_t end = start + prefix_bytes + static_cast<std::int64_t>(length);
    message.Clear();
    stream->set_window_end(end);
    bool clean_eof = false;
    const bool ok =
        google::protobuf::util::ParseDelimitedFromZeroCopyStream(&message, &*stream, &clean_eof);
    stream->clear_window();
    if (ok) return true;
    check_stream(what, start);
    if (gzip && !stream->total()) {
      // Corrupt compressed data can decode to bytes that fail to parse before zlib notices.
      stream->drain();
      check_gzip(what, start);
    }
    if (stream->total() && *stream->total() < end) {
      throw Error(path, where(what, start),
                  fmt::format("truncated: the message is {} bytes but only {} remain", length,
                              *stream->total() - start - prefix_bytes));
    }
    const std::string type = message.GetTypeName();
    throw Error(path, where(what, start),
                fmt::format("not a valid Chakra {} message (malformed protobuf, or text that is "
                            "not UTF-8)",
                            type.substr(type.rfind('.') + 1)));
  }

  std::string path;
  FileDescriptor fd;
  io::FileInputStream raw;
  std::int64_t max_decoded_bytes;
  std::int64_t max_message_bytes;
  bool compressed = false;
  std::optional<io::GzipInputStream> gzip;
  std::optional<CappedStream> stream;
};

DelimitedReader::DelimitedReader(const std::string& path, std::int64_t max_decoded_bytes,
                                 std::int64_t max_message_bytes)
    : impl_(std::make_unique<Impl>(path, max_decoded_bytes, max_message_bytes)) {}

DelimitedReader::~DelimitedReader() = default;

bool DelimitedReader::next(google::protobuf::MessageLite& message, std::int64_t number) {
  return impl_->next(message, number);
}

bool DelimitedReader::compressed() const {
  return impl_->compressed;
}

}  // namespace mfabric::workload::chakra
