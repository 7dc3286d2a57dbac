// Reading input files safely: only regular files are read (a FIFO would block, a device such as
// /dev/zero never ends, a directory is not a file), and no file is read past a size cap, so a
// wrong path costs an error message, never a hang or gigabytes of memory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/file_descriptor.h"

namespace mfabric {

// Default cap for text inputs (YAML, JSON, CSV): far above any real experiment, model, price
// file, routing trace or replay file, far below what would exhaust memory once parsed.
inline constexpr std::int64_t kMaxTextFileBytes = std::int64_t{256} << 20;  // 256 MiB

// Throws mfabric::Error(path, ...) unless `path` names an existing regular file (after
// following symbolic links). `what` names the kind of file ("price file"), `expected` what the
// user should give instead ("a YAML price file (docs/cost-model.md)").
void require_regular_file(const std::string& path, const std::string& what,
                          const std::string& expected);

// Opens a regular file for reading after the checks of require_regular_file, without blocking,
// and checks it again once open (a path swapped for a FIFO in between cannot hang the reader).
// Sets *size to its size when `size` is given. Errors are mfabric::Error naming the path.
FileDescriptor open_regular_file(const std::string& path, const std::string& what,
                                 const std::string& expected, std::int64_t* size = nullptr);

// Reads a whole regular file of at most `max_bytes` bytes. A missing file, a directory, a FIFO,
// a device, a file larger than the cap or a read error is an mfabric::Error naming the path.
// The file is opened without blocking and checked again after opening, so that a path swapped
// for a FIFO between the check and the open cannot hang the reader.
std::string read_text_file(const std::string& path, const std::string& what = "file",
                           const std::string& expected = "a readable file",
                           std::int64_t max_bytes = kMaxTextFileBytes);

// True when a path ends in .yaml or .yml (any case).
bool has_yaml_extension(const std::string& path);

// True when a name given where a shipped name (a zoo model, a calibration) or a file is accepted
// is meant as a file: it exists, or it ends in .yaml / .yml (any case), so that a missing file is
// reported as a file rather than as an unknown name.
bool names_a_yaml_file(const std::string& name_or_path);

// "a directory", "a FIFO (named pipe)", "a character device", ... for a file's st_mode that is not
// a regular file (for messages about inputs and outputs).
const char* file_kind(mode_t mode);

// "256MiB"-style text for a cap, for messages and docs.
std::string describe_cap(std::int64_t bytes);

}  // namespace mfabric
