// The resume journal of `mfabric sweep --out DIR` (docs/sweep.md, "Resuming").
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "core/file_descriptor.h"
#include "study/sweep_run.h"

namespace mfabric::study {

// The resume journal (DIR/points.jsonl of `sweep --out DIR`): one line of sweep_run_json per
// finished point, appended as the point finishes with one write() on a file opened O_APPEND, so
// that threads and MPI ranks on one file system can share it and a killed run loses at most
// the line it was writing.
class SweepJournal {
 public:
  // Opens (creates) the file for appending; mfabric::Error naming it when it cannot.
  explicit SweepJournal(const std::string& path);
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;
  void append(const SweepSpec& spec, const SweepRun& run);

 private:
  std::string path_;
  FileDescriptor fd_;
  std::mutex mutex_;
};

// The points of `spec` a journal already holds: lines that parse, name a point of the sweep,
// match its fingerprint (the same experiment text) and did not fail. Other lines (another
// sweep's, a line cut short by a kill, a failed point) are ignored: those points run again. A
// missing file holds none.
std::map<std::size_t, SweepRun> read_journal(const std::string& path, const SweepSpec& spec);

}  // namespace mfabric::study
