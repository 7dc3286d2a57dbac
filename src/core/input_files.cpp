#include "core/input_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/output_text.h"
#include "core/units.h"

namespace mfabric {
namespace {

void check_mode(const std::string& path, mode_t mode, const std::string& expected) {
  if (!S_ISREG(mode)) {
    throw Error(path, "",
                fmt::format("is {}, cannot read it; expected {}", file_kind(mode), expected));
  }
}

}  // namespace

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string describe_cap(std::int64_t bytes) {
  return to_string(Bytes(bytes));
}

void require_regular_file(const std::string& path, const std::string& what,
                          const std::string& expected) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      throw Error(path, "",
                  fmt::format("{} not found, cannot read it; expected {}", what, expected));
    }
    throw Error(path, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
  }
  check_mode(path, st.st_mode, expected);
}

FileDescriptor open_regular_file(const std::string& path, const std::string& what,
                                 const std::string& expected, std::int64_t* size) {
  require_regular_file(path, what, expected);
  // O_NONBLOCK: opening a FIFO that replaced the file since the check must not wait for a
  // writer; the fstat below then rejects it.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    throw Error(path, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw Error(path, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
  }
  check_mode(path, st.st_mode, expected);
  if (size != nullptr) *size = st.st_size;
  return fd;
}

std::string read_text_file(const std::string& path, const std::string& what,
                           const std::string& expected, std::int64_t max_bytes) {
  std::int64_t file_size = 0;
  const FileDescriptor fd = open_regular_file(path, what, expected, &file_size);
  if (file_size > max_bytes) {
    throw Error(path, "",
                fmt::format("the {} is {}, larger than the {} mfabric reads; expected {}", what,
                            describe_cap(file_size), describe_cap(max_bytes), expected));
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(file_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
    }
    // The file may grow while it is read; the cap holds for what is read, not only for stat.
    if (static_cast<std::int64_t>(text.size()) + n > max_bytes) {
      throw Error(path, "",
                  fmt::format("the {} is larger than the {} mfabric reads; expected {}", what,
                              describe_cap(max_bytes), expected));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

bool has_yaml_extension(const std::string& path) {
  const std::string ext = ascii_lower(std::filesystem::path(path).extension().string());
  return ext == ".yaml" || ext == ".yml";
}

bool names_a_yaml_file(const std::string& name_or_path) {
  std::error_code ec;
  return std::filesystem::exists(name_or_path, ec) || has_yaml_extension(name_or_path);
}

}  // namespace mfabric
