// One Chakra rank file as a stream of length-delimited protobuf messages, read with protobuf's
// own streams: FileInputStream over the file, GzipInputStream when the file starts with the gzip
// magic bytes, a capped stream that counts decoded bytes as they are consumed, CodedInputStream
// for the length prefix and ParseDelimitedFromZeroCopyStream for the message. Internal to the
// Chakra reader (docs/chakra.md, "What is read" and "Limits").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <google/protobuf/message_lite.h>

namespace mfabric::workload::chakra {

class DelimitedReader {
 public:
  // Opens `path`, which must be a regular file (a FIFO, a device or a directory is an error
  // before anything is read). At most `max_decoded_bytes` of the decoded stream are read, and no
  // message may be longer than `max_message_bytes`.
  DelimitedReader(const std::string& path, std::int64_t max_decoded_bytes,
                  std::int64_t max_message_bytes);
  ~DelimitedReader();
  DelimitedReader(const DelimitedReader&) = delete;
  DelimitedReader& operator=(const DelimitedReader&) = delete;

  // Reads the next message into `message` (cleared first). Returns false at the clean end of
  // the stream. `number` is the message's position among the nodes (0 for the first node), or
  // -1 for the GlobalMetadata; an error's source is the file and its field "node #3 at byte
  // offset N". Throws mfabric::Error on a truncated or malformed stream, corrupt gzip data, or
  // a stream past the caps.
  bool next(google::protobuf::MessageLite& message, std::int64_t number);

  bool compressed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mfabric::workload::chakra
