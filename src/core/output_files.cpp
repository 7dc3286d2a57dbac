#include "core/output_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <streambuf>

#include "core/error.h"
#include "core/file_descriptor.h"
#include "core/input_files.h"
#include "core/output_text.h"
#include "core/signal_cleanup.h"

namespace mfabric {
namespace {

namespace fs = std::filesystem;
using Step = CleanupOnSignal::Step;
using Op = CleanupOnSignal::Op;

std::string system_error(int e) {
  return std::strerror(e);
}

// An ostream buffer writing to a file descriptor, remembering the first write error (errno),
// so that the message can say "No space left on device" rather than "write failed".
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd), buffer_(std::size_t{1} << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= epptr() - pptr()) {
      std::copy(s, s + n, pptr());
      pbump(static_cast<int>(n));
      return n;
    }
    if (!drain() || !write_all(s, static_cast<std::size_t>(n))) return 0;
    return n;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return ok;
  }
  bool write_all(const char* data, std::size_t size) {
    if (error_ != 0) return false;
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

// Creates `path` (which must not exist), fills it with `write`'s output and flushes it to disk.
// Errors name `shown`, the path the user knows. The caller removes `path` on error.
void write_new_file(const fs::path& path, const ContentWriter& write, const std::string& shown) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) throw Error(shown, "", "cannot write: " + system_error(errno));
  DescriptorBuffer buffer(fd.get());
  std::ostream out(&buffer);
  write(out);
  out.flush();
  if (buffer.error() != 0) throw Error(shown, "", "cannot write: " + system_error(buffer.error()));
  if (!out) throw Error(shown, "", "cannot write: the output stream failed");
  if (::fsync(fd.get()) != 0) throw Error(shown, "", "cannot write: " + system_error(errno));
  if (const int e = fd.close(); e != 0) throw Error(shown, "", "cannot write: " + system_error(e));
}

// Makes a rename or creation in `dir` durable. Best effort: some file systems refuse to sync a
// directory, and the rename itself has already happened.
void sync_directory(const fs::path& dir) {
  FileDescriptor fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

// `path` with symbolic links resolved as far as it exists, absolute, without "." and "..", and
// without a trailing separator.
fs::path resolve(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

// Removes the files of a set (only names in `names`) and the directory; anything else in it
// stays, and so does the directory then. Best effort: used on the way out of an error.
void remove_set_directory(const fs::path& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    ::unlink((dir / name).c_str());
  ::rmdir(dir.c_str());
}

// The process id in a leftover name "<prefix><pid>" or "<prefix><pid>.<n>", or -1.
long leftover_pid(std::string_view entry, std::string_view prefix) {
  if (!entry.starts_with(prefix)) return -1;
  entry.remove_prefix(prefix.size());
  long pid = -1;
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), pid);
  if (ec != std::errc() || pid <= 0) return -1;
  const std::string_view rest(end, static_cast<std::size_t>(entry.data() + entry.size() - end));
  if (!rest.empty() && !rest.starts_with('.')) return -1;
  return pid;
}

// True when no process `pid` runs on this machine: whoever left the file was killed (SIGKILL,
// power loss) before it could clean up.
bool process_is_gone(long pid) {
  return pid != static_cast<long>(::getpid()) && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
         errno == ESRCH;
}

std::string temporary_prefix(const std::string& name) {
  return "." + name + ".tmp.";
}
std::string staging_prefix(const std::string& name) {
  return "." + name + ".staging.";
}
std::string old_prefix(const std::string& name) {
  return "." + name + ".old.";
}

// Leftovers of earlier writes to `target` by processes that are gone: temporary files, staging
// directories, and previous sets moved aside by the two-rename swap (put back when `target` is
// missing: the process died between the two renames).
void remove_stale_leftovers(const fs::path& target, const std::vector<std::string>& names) {
  const std::string name = target.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (!entry.starts_with("." + name + ".")) continue;
    if (long pid = leftover_pid(entry, temporary_prefix(name)); pid > 0) {
      if (process_is_gone(pid)) ::unlink(it->path().c_str());
    } else if (pid = leftover_pid(entry, staging_prefix(name)); pid > 0) {
      if (process_is_gone(pid)) remove_set_directory(it->path(), names);
    } else if (pid = leftover_pid(entry, old_prefix(name)); pid > 0) {
      if (!process_is_gone(pid)) continue;
      struct stat st {};
      if (::lstat(target.c_str(), &st) != 0 && errno == ENOENT) {
        ::rename(it->path().c_str(), target.c_str());
      } else {
        remove_set_directory(it->path(), names);
      }
    }
  }
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Programming errors: a set's names must be plain, distinct file names, and the files written
// must be among them.
void check_set_names(const std::vector<OutputFile>& files, const std::vector<std::string>& names) {
  if (files.empty()) throw std::invalid_argument("write_output_set: no files");
  std::vector<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.starts_with('.') || std::find(seen.begin(), seen.end(), name) != seen.end()) {
      throw std::invalid_argument("write_output_set: bad or repeated file name '" + name + "'");
    }
    seen.push_back(name);
  }
  std::vector<std::string> written;
  for (const OutputFile& f : files) {
    if (std::find(names.begin(), names.end(), f.name) == names.end() ||
        std::find(written.begin(), written.end(), f.name) != written.end()) {
      throw std::invalid_argument("write_output_set: file '" + f.name +
                                  "' repeated or not a name of the set");
    }
    written.push_back(f.name);
  }
}

// Refuses a `dir` that is not empty, a previous set, or missing; see the header.
void check_replaceable(const std::string& shown, const fs::path& target,
                       const std::vector<std::string>& names) {
  std::error_code ec;
  for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    const bool known = std::find(names.begin(), names.end(), entry) != names.end();
    if (!known || !it->is_regular_file() || it->is_symlink()) {
      throw Error(shown, "",
                  fmt::format("holds '{}', which is not an output file of this command ({}); "
                              "the output replaces the whole directory, so give a new or empty "
                              "directory",
                              printable(entry), list_names(names)));
    }
  }
  if (ec) throw Error(shown, "", "cannot read the output directory: " + ec.message());
  if (::access(target.c_str(), W_OK) != 0) {
    throw Error(shown, "", "cannot replace the output directory: " + system_error(errno));
  }
}

// Where a set goes: `dir` resolved, refused if it is the root directory.
fs::path set_target(const std::string& dir) {
  if (dir.empty()) throw Error("", "", "no output directory given");
  const fs::path target = resolve(dir);
  if (!target.has_parent_path() || target == target.root_path()) {
    throw Error(dir, "", "cannot replace the root directory; give a new or empty directory");
  }
  return target;
}

// Checks what is at `target` now; true if it exists (then `previous` holds its lstat).
bool inspect_set_target(const std::string& shown, const fs::path& target,
                        const std::vector<std::string>& names, struct stat& previous) {
  if (::lstat(target.c_str(), &previous) == 0) {
    if (S_ISLNK(previous.st_mode)) {
      throw Error(shown, "", "is a symbolic link to a missing directory");
    }
    if (!S_ISDIR(previous.st_mode)) {
      throw Error(shown, "", "exists and is not a directory; give a directory name");
    }
    check_replaceable(shown, target, names);
    return true;
  }
  if (errno != ENOENT) {
    throw Error(shown, "", "cannot use the output directory: " + system_error(errno));
  }
  return false;
}

std::atomic<unsigned> g_temporary_counter{0};

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  write_file_atomically(path, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

namespace {

// Where write_file_atomically writes `path`: refuses anything it must not replace.
fs::path file_target(const std::string& path) {
  if (path.empty()) throw Error("", "", "no output file name given");
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      // Following it would create a file wherever it points; replacing it would lose the link.
      throw Error(path, "",
                  "is a symbolic link to a missing file; give the name of a regular file or "
                  "of a new file");
    }
  }
  const fs::path target = resolve(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      throw Error(path, "", "is a directory; expected the name of a file to write");
    }
    if (!S_ISREG(st.st_mode)) {
      // Renaming over /dev/null, a FIFO or a socket would replace the node with a file.
      throw Error(path, "",
                  fmt::format("is {}, not a regular file; mfabric replaces only regular files "
                              "(write to a file and copy it there)",
                              file_kind(st.st_mode)));
    }
  } else if (errno != ENOENT) {
    throw Error(path, "", "cannot write: " + system_error(errno));
  }
  const fs::path parent = target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    throw Error(
        path, "",
        fmt::format("cannot write: directory '{}' does not exist", printable(parent.string())));
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    throw Error(path, "", "cannot write in its directory: " + system_error(errno));
  }
  return target;
}

}  // namespace

void check_output_file(const std::string& path) {
  (void)file_target(path);
}

void write_file_atomically(const std::string& path, const ContentWriter& write) {
  const fs::path target = file_target(path);
  const fs::path parent = target.parent_path();
  remove_stale_leftovers(target, {});
  const fs::path temporary =
      parent / fmt::format("{}{}.{}", temporary_prefix(target.filename().string()), ::getpid(),
                           g_temporary_counter.fetch_add(1));
  CleanupOnSignal cleanup({Step{Op::Unlink, temporary.string(), ""}});
  try {
    write_new_file(temporary, write, path);
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
      throw Error(path, "", "cannot write: " + system_error(errno));
    }
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  sync_directory(parent);
}

namespace detail {

void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      bool use_exchange) {
  std::vector<std::string> names;
  for (const OutputFile& f : files)
    names.push_back(f.name);
  write_output_set(dir, files, names, use_exchange);
}

void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      const std::vector<std::string>& names, bool use_exchange) {
  check_set_names(files, names);
  const fs::path target = set_target(dir);
  const fs::path parent = target.parent_path();

  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec || !fs::is_directory(parent, ec)) {
    throw Error(dir, "",
                fmt::format("cannot create the parent directory '{}': {}", parent.string(),
                            ec ? ec.message() : "not a directory"));
  }
  remove_stale_leftovers(target, names);

  struct stat previous {};
  const bool exists = inspect_set_target(dir, target, names, previous);

  const std::string name = target.filename().string();
  const fs::path staging = parent / fmt::format("{}{}", staging_prefix(name), ::getpid());
  const fs::path old = parent / fmt::format("{}{}", old_prefix(name), ::getpid());
  // Of an earlier call of this process, if any.
  remove_set_directory(staging, names);
  remove_set_directory(old, names);

  // What a signal undoes, valid at every moment: before the swap the staging directory holds
  // the partial new set; after an exchange it holds the previous set, which is to be deleted
  // anyway; between the two renames of the fallback, the previous set is put back.
  std::vector<Step> steps;
  for (const std::string& n : names)
    steps.push_back({Op::Unlink, (staging / n).string(), ""});
  steps.push_back({Op::Rmdir, staging.string(), ""});
  steps.push_back({Op::Rename, old.string(), target.string()});
  for (const std::string& n : names)
    steps.push_back({Op::Unlink, (old / n).string(), ""});
  steps.push_back({Op::Rmdir, old.string(), ""});
  CleanupOnSignal cleanup(std::move(steps));

  if (::mkdir(staging.c_str(), 0777) != 0) {
    throw Error(dir, "",
                fmt::format("cannot create the staging directory '{}': {}", staging.string(),
                            system_error(errno)));
  }
  fs::path previous_set;  // where the previous set ends up, to be deleted
  try {
    if (exists) ::chmod(staging.c_str(), previous.st_mode & 07777);
    for (const OutputFile& f : files) {
      write_new_file(staging / f.name, f.write, (fs::path(dir) / f.name).string());
    }
    sync_directory(staging);
    if (!exists) {
      if (::rename(staging.c_str(), target.c_str()) != 0) {
        throw Error(dir, "", "cannot create the output directory: " + system_error(errno));
      }
    } else if (use_exchange && ::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(),
                                           RENAME_EXCHANGE) == 0) {
      previous_set = staging;
    } else if (use_exchange && errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
      throw Error(dir, "", "cannot replace the output directory: " + system_error(errno));
    } else {
      // No RENAME_EXCHANGE on this file system: two renames; `dir` is briefly missing, never
      // mixed.
      if (::rename(target.c_str(), old.c_str()) != 0) {
        throw Error(dir, "", "cannot replace the output directory: " + system_error(errno));
      }
      if (::rename(staging.c_str(), target.c_str()) != 0) {
        const int e = errno;
        ::rename(old.c_str(), target.c_str());
        throw Error(dir, "", "cannot replace the output directory: " + system_error(e));
      }
      previous_set = old;
    }
  } catch (...) {
    remove_set_directory(staging, names);
    throw;
  }
  sync_directory(parent);
  if (!previous_set.empty()) remove_set_directory(previous_set, names);
}

}  // namespace detail

void write_output_set(const std::string& dir, const std::vector<OutputFile>& files) {
  detail::write_output_set(dir, files, /*use_exchange=*/true);
}

void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      const std::vector<std::string>& names) {
  detail::write_output_set(dir, files, names, /*use_exchange=*/true);
}

void check_output_set(const std::string& dir, const std::vector<std::string>& names) {
  const fs::path target = set_target(dir);
  struct stat previous {};
  inspect_set_target(dir, target, names, previous);
  // The nearest directory that exists must let us create the staging directory in it.
  fs::path existing = target.parent_path();
  std::error_code ec;
  while (!fs::exists(existing, ec) && existing.has_parent_path() &&
         existing != existing.root_path()) {
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec)) {
    throw Error(dir, "", fmt::format("'{}' is not a directory", existing.string()));
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    throw Error(dir, "",
                fmt::format("cannot write into '{}': {}", existing.string(), system_error(errno)));
  }
}

}  // namespace mfabric
