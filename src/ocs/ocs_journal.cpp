#include "ocs/ocs_journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/error.h"
#include "core/input_files.h"
#include "core/output_files.h"
#include "core/output_text.h"

namespace mfabric::ocs {
namespace {

// The journal of the largest switch, compacted, is a few hundred KiB; a file far above the
// compaction bound is not a journal.
constexpr std::int64_t kMaxJournalBytes = std::int64_t{64} << 20;

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string snapshot_text(const OcsState& state) {
  std::string text = journal_header(state.ports()) + "\n";
  for (const OcsChange& change : state.snapshot())
    text += change_text(change) + "\n";
  return text;
}

}  // namespace

std::string journal_header(int ports) {
  return fmt::format("mfabric-ocs-state 1 ports {}", ports);
}

OcsJournal::OcsJournal(std::string path, int ports, OcsState* state, std::size_t compact_after)
    : path_(std::move(path)), ports_(ports), compact_after_(compact_after) {
  const std::string lock_path = path_ + ".lock";
  lock_ =
      FileDescriptor(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666));
  if (lock_.get() < 0) {
    throw Error(lock_path, "",
                fmt::format("cannot open the lock of the state file: {}", std::strerror(errno)));
  }
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    throw Error(path_, "",
                errno == EWOULDBLOCK
                    ? std::string("in use by another emulator (its lock file is held)")
                    : fmt::format("cannot lock the state file: {}", std::strerror(errno)));
  }
  *state = OcsState(ports);
  std::string text;
  if (exists(path_)) text = read_text_file(path_, "OCS state file", "a journal", kMaxJournalBytes);

  // A last line without its newline: the write a kill cut short.
  std::size_t intact = text.size();
  if (!text.empty() && text.back() != '\n') {
    intact = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  }
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < intact;) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const auto corrupt = [&](const std::string& what) {
      return Error(path_, "", fmt::format("line {}: {}", line_number, what));
    };
    if (line_number == 1) {
      int file_ports = 0;
      char rest = 0;
      if (std::sscanf(line.c_str(), "mfabric-ocs-state 1 ports %d%c", &file_ports, &rest) != 1) {
        throw corrupt(
            fmt::format("expected '{}', got {}", journal_header(ports), quote_input(line)));
      }
      if (file_ports != ports) {
        throw corrupt(fmt::format(
            "the state of a switch of {} ports, not {} (--ports must match the file, or start "
            "from another file)",
            file_ports, ports));
      }
      continue;
    }
    const OcsChange change = [&] {
      try {
        return parse_change(line);
      } catch (const Error& e) {
        throw corrupt(e.message());
      }
    }();
    if (const auto refusal = state->refusal(change, Time::zero())) {
      throw corrupt(fmt::format("{}: a change the switch could not have made ({}: {})",
                                quote_input(line), refusal->code, refusal->text));
    }
    // Replayed settled: the mirrors held their position while the emulator was down.
    state->apply(change, Time::zero(), Time::zero());
    ++records_;
  }
  replay_.records = records_;
  if (intact < text.size()) replay_.torn_line = line_number + 1;

  if (line_number == 0) {
    // A new switch (or a file with nothing but a torn header): the header, durably.
    write_file_atomically(path_, journal_header(ports) + "\n");
  } else if (intact < text.size()) {
    if (::truncate(path_.c_str(), static_cast<off_t>(intact)) != 0) {
      throw Error(path_, "",
                  fmt::format("cannot drop the torn last line: {}", std::strerror(errno)));
    }
  }
  open_for_append();
}

void OcsJournal::open_for_append() {
  fd_ = FileDescriptor(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK));
  if (fd_.get() < 0) {
    throw Error(path_, "", fmt::format("cannot open the state file: {}", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw Error(path_, "", "cannot open the state file: not a regular file");
  }
}

void OcsJournal::append(const OcsChange& change) {
  write(change);
  sync();
}

void OcsJournal::write(const OcsChange& change) {
  const std::string line = change_text(change) + "\n";
  const ssize_t written = ::write(fd_.get(), line.data(), line.size());
  if (written != static_cast<ssize_t>(line.size())) {
    const int error = written < 0 ? errno : ENOSPC;
    // A part line would make the file corrupt rather than torn: cut it off again.
    if (written > 0) {
      struct stat st {};
      if (::fstat(fd_.get(), &st) == 0) {
        (void)::ftruncate(fd_.get(), st.st_size - written);
      }
    }
    throw Error(path_, "", fmt::format("cannot record a change: {}", std::strerror(error)));
  }
  ++records_;
  ++unsynced_;
}

void OcsJournal::sync() {
  if (unsynced_ == 0) return;
  if (::fdatasync(fd_.get()) != 0) {
    throw Error(
        path_, "",
        fmt::format("cannot flush {} change(s) to disk: {}", unsynced_, std::strerror(errno)));
  }
  unsynced_ = 0;
}

void OcsJournal::compact_if_due(const OcsState& state) {
  if (records_ - records_at_snapshot_ > compact_after_) compact(state);
}

void OcsJournal::compact(const OcsState& state) {
  if (state.ports() != ports_) {
    throw Error(path_, "",
                fmt::format("a snapshot of {} ports for a journal of {}", state.ports(), ports_));
  }
  // The snapshot replaces the file in one rename: a crash leaves the old journal or the new one.
  write_file_atomically(path_, snapshot_text(state));
  records_ = records_at_snapshot_ = state.snapshot().size();
  unsynced_ = 0;  // the snapshot, flushed before its rename, holds every change written
  open_for_append();
}

}  // namespace mfabric::ocs
