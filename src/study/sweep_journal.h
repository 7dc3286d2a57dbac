// The resume journal of `mfabric sweep --out DIR` and `mfabric compare --out DIR` (docs/sweep.md,
// "Outputs and resuming"; docs/compare.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/file_descriptor.h"
#include "study/sweep_run.h"

namespace mfabric::study {

// The resume journal (DIR/points.jsonl of `sweep --out DIR`): one line of sweep_run_json per
// point that finished without error, appended as the point finishes with one write() on a file
// opened O_APPEND, so that threads and MPI ranks on one file system can share it and a killed
// run loses at most the line it was writing. Nothing is created before the first record: a
// sweep whose every point fails leaves DIR as it was (or absent).
class SweepJournal {
 public:
  explicit SweepJournal(std::string path);
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;
  // Appends the point's record, creating the file (and its directory) on the first call.
  // mfabric::Error naming the file when it cannot be opened (not a regular file, no permission)
  // or the line cannot be written whole (a full disk); the caller then stops appending.
  void append(const SweepSpec& spec, const SweepRun& run);
  // The same for a run whose fields are given (a comparison's).
  void append(const std::vector<FieldValue>& fields, const SweepRun& run);

 private:
  std::string path_;
  FileDescriptor fd_;
  std::mutex mutex_;
};

// What a journal holds for a sweep.
struct JournalContents {
  // The points of the sweep it holds: records that name a point of the sweep, match its
  // fingerprint (the same experiment text) and did not fail. The first record of a point wins.
  std::map<std::size_t, SweepRun> points;
  std::size_t records = 0;    // records read (every sweep's, failed ones included)
  std::size_t torn_line = 0;  // the number of a last line without its newline, dropped; or 0
  std::uint64_t file_bytes = 0;
  std::uint64_t intact_bytes = 0;  // up to and including the last newline
};

// Reads a journal; a missing file holds nothing. Every complete line is one record, checked
// strictly (sweep_run_from_json; blank lines are skipped): a line that is not JSON or not a
// record is an mfabric::Error "PATH: line N: FIELD: expectation", not a point run again
// silently. A last line without its newline was cut short by a kill or a full disk: it is not
// trusted but dropped (torn_line says which), and its point runs again.
JournalContents read_journal(const std::string& path, const SweepSpec& spec);
// The same for any set of `runs` runs whose k-th has the fingerprint fingerprint_of(k) (called
// once per run a record names, and only then).
JournalContents read_journal(const std::string& path, std::size_t runs,
                             const std::function<std::string(std::size_t)>& fingerprint_of);

// Cuts the torn last line read_journal found off the file, so that the next record starts on a
// line of its own. Does nothing if the file has changed size since (another writer); an
// mfabric::Error naming the file when it cannot be truncated.
void drop_torn_line(const std::string& path, const JournalContents& contents);

}  // namespace mfabric::study
