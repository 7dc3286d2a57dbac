#include "study/sweep_journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_input.h"
#include "core/json_text.h"

namespace mfabric::study {
namespace {

// Opens the journal for writing without following a symbolic link or blocking on a FIFO, and
// refuses anything but a regular file.
FileDescriptor open_journal(const std::string& path, int flags, const char* doing) {
  FileDescriptor fd(
      ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666));
  if (fd.get() < 0) {
    throw Error(path, "", fmt::format("cannot {} the journal: {}", doing, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw Error(path, "", fmt::format("cannot {} the journal: not a regular file", doing));
  }
  return fd;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

SweepJournal::SweepJournal(std::string path) : path_(std::move(path)) {}

void SweepJournal::append(const SweepSpec& spec, const SweepRun& run) {
  static const std::vector<FieldValue> none;
  append(run.index < spec.points.size() ? spec.points[run.index].fields : none, run);
}

void SweepJournal::append(const std::vector<FieldValue>& fields, const SweepRun& run) {
  const std::string line = json_text(run_record_json(fields, run), -1) + "\n";
  const std::lock_guard<std::mutex> lock(mutex_);
  if (fd_.get() < 0) {
    const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) {
      throw Error(dir.string(), "",
                  fmt::format("cannot create the directory of the journal: {}", ec.message()));
    }
    fd_ = open_journal(path_, O_CREAT | O_APPEND, "open");
  }
  // One write() per line: with O_APPEND the line lands whole after whatever other writers
  // appended. A short write (a full disk) leaves a cut line, which read_journal drops.
  ssize_t n = -1;
  do {
    n = ::write(fd_.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    throw Error(path_, "",
                fmt::format("cannot append to the journal: {}",
                            n < 0 ? std::strerror(errno) : "short write"));
  }
}

JournalContents read_journal(const std::string& path, const SweepSpec& spec) {
  return read_journal(path, spec.points.size(),
                      [&spec](std::size_t k) { return point_fingerprint(spec, k); });
}

JournalContents read_journal(const std::string& path, std::size_t runs,
                             const std::function<std::string(std::size_t)>& fingerprint_of) {
  JournalContents out;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return out;
  const std::string text = read_text_file(path, "journal",
                                          "the points.jsonl of an earlier sweep or comparison (a "
                                          "JSON record per line)");
  out.file_bytes = text.size();
  const std::size_t last_newline = text.rfind('\n');
  out.intact_bytes = last_newline == std::string::npos ? 0 : last_newline + 1;
  // Fingerprints of the points records name, computed once each (a point's YAML text is not
  // free to make, and a sweep has up to 100,000 points).
  std::vector<std::optional<std::string>> fingerprints(runs);
  std::size_t number = 0;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t end = text.find('\n', from);
    ++number;
    if (end == std::string::npos) {
      out.torn_line = number;
      break;
    }
    const std::string line = text.substr(from, end - from);
    from = end + 1;
    if (blank(line)) continue;
    const std::string where = fmt::format("line {}", number);
    const JsonDocument document = [&] {
      try {
        return parse_json_input(line, path,
                                "the numbers of a record are counts, times and amounts");
      } catch (const Error& e) {
        // The parser counts lines and columns within the record, which is one line.
        std::string message = e.message();
        if (const std::size_t at = message.find("at line 1, column "); at != std::string::npos)
          message.replace(at, 18, "at column ");
        throw Error(path, e.field().empty() ? where : where + ": " + e.field(), message);
      }
    }();
    SweepRun run = sweep_run_from_json(document.root(), path, where);
    ++out.records;
    if (run.index >= runs || !run.figures.error.empty()) continue;
    std::optional<std::string>& fingerprint = fingerprints[run.index];
    if (!fingerprint) fingerprint = fingerprint_of(run.index);
    if (run.fingerprint != *fingerprint) continue;
    out.points.emplace(run.index, std::move(run));
  }
  return out;
}

void drop_torn_line(const std::string& path, const JournalContents& contents) {
  if (contents.torn_line == 0) return;
  const FileDescriptor fd = open_journal(path, 0, "repair");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 ||
      static_cast<std::uint64_t>(st.st_size) != contents.file_bytes) {
    return;
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(contents.intact_bytes)) != 0) {
    throw Error(path, "",
                fmt::format("cannot cut the torn last line (line {}) off the journal: {}",
                            contents.torn_line, std::strerror(errno)));
  }
}

}  // namespace mfabric::study
