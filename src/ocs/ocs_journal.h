// The emulated OCS's memory across crashes (docs/runtime.md, "OCS emulator"): the state file
// `--state FILE`, an append-only journal of changes. A real OCS keeps its light paths when its
// controller dies; the emulator keeps them by writing every change here, flushed to disk
// (fdatasync), before the command that made it is answered. Changes may be written one by one
// and flushed together (a group commit: the emulator writes the changes of every command that
// arrived, flushes once, then answers them all).
//
// The file is text, one record a line:
//   mfabric-ocs-state 1 ports N      (the first line: format version and the switch's size)
//   connect 3 7 | disconnect 3 | fail 5 | repair 5
// Opening replays it. A last line without its newline was cut short by a kill: it is dropped
// (the command it recorded was never answered). Any other line that is not a record, or a
// change the switch could not have made, is an mfabric::Error "FILE: line N: ..." and nothing
// starts: a journal is never guessed at. When the journal has grown by `compact_after`
// records since its last snapshot, it is replaced atomically by a snapshot (the header, then the
// state's connects and fails), so that it stays bounded by the switch's size.
#pragma once

#include <cstddef>
#include <string>

#include "core/file_descriptor.h"
#include "ocs/ocs_state.h"

namespace mfabric::ocs {

inline constexpr std::size_t kDefaultCompactAfter = 10000;

struct JournalReplay {
  std::size_t records = 0;    // changes replayed
  std::size_t torn_line = 0;  // the number of the torn last line dropped, or 0
};

class OcsJournal {
 public:
  // Opens (creating it when missing) the journal at `path` of a switch of `ports` ports and
  // replays it into *state (a fresh OcsState(ports)). mfabric::Error naming the file when it
  // cannot be read or written, is not a regular file, holds another port count, a line is
  // corrupt (its number given), or another journal has it open: FILE.lock beside it is locked
  // while the journal is open (not FILE itself, which compaction replaces), so that two
  // emulators never interleave their changes in one file.
  OcsJournal(std::string path, int ports, OcsState* state,
             std::size_t compact_after = kDefaultCompactAfter);
  OcsJournal(const OcsJournal&) = delete;
  OcsJournal& operator=(const OcsJournal&) = delete;

  const JournalReplay& replay() const { return replay_; }
  // Records `change`, then flushes it to disk: write() then sync(). mfabric::Error naming the
  // file when the line cannot be written whole or flushed (the caller then refuses the command).
  void append(const OcsChange& change);
  // Writes `change`'s line whole (a part line is cut off again), not yet flushed: it survives
  // the process's death but not the machine's until sync(). mfabric::Error naming the file when
  // it cannot be written (the caller then refuses the command; nothing is left unflushed by it).
  void write(const OcsChange& change);
  // Flushes every change written since the last flush (fdatasync), when there is one.
  // mfabric::Error naming the file when the flush fails: the changes written are then in the file
  // but may not be on disk, and must not be answered as made.
  void sync();
  bool unsynced() const { return unsynced_ > 0; }  // changes written and not flushed yet
  // Compacts into a snapshot of `state` (the state with every appended change applied) when the
  // journal has grown by compact_after records since the last snapshot. mfabric::Error naming
  // the file when the snapshot cannot be written (the journal is then as it was).
  void compact_if_due(const OcsState& state);
  // Replaces the journal by a snapshot of `state` now.
  void compact(const OcsState& state);
  std::size_t records() const { return records_; }  // change lines in the file now

 private:
  void open_for_append();

  std::string path_;
  FileDescriptor lock_;  // FILE.lock, locked (flock) while this journal is open
  int ports_;
  std::size_t compact_after_;
  std::size_t records_ = 0;
  std::size_t records_at_snapshot_ = 0;  // the snapshot's own records
  std::size_t unsynced_ = 0;             // changes written since the last flush
  JournalReplay replay_;
  FileDescriptor fd_;
};

// The journal's first line for a switch of `ports` ports (without the newline).
std::string journal_header(int ports);

}  // namespace mfabric::ocs
