#include "study/sweep_journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/input_files.h"
#include "core/json_text.h"

namespace mfabric::study {

SweepJournal::SweepJournal(const std::string& path)
    : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
  if (fd_.get() < 0) {
    throw Error(path, "", fmt::format("cannot open the sweep's journal: {}", std::strerror(errno)));
  }
}

void SweepJournal::append(const SweepSpec& spec, const SweepRun& run) {
  const std::string line = json_text(sweep_run_json(spec, run), -1) + "\n";
  const std::lock_guard<std::mutex> lock(mutex_);
  // One write() per line: with O_APPEND the line lands whole after whatever other writers
  // appended. A short write (a full disk) leaves a cut line, which read_journal ignores.
  const ssize_t n = ::write(fd_.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    throw Error(path_, "",
                fmt::format("cannot append to the sweep's journal: {}",
                            n < 0 ? std::strerror(errno) : "short write"));
  }
}

std::map<std::size_t, SweepRun> read_journal(const std::string& path, const SweepSpec& spec) {
  std::map<std::size_t, SweepRun> out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  const std::string text =
      read_text_file(path, "sweep journal", "the points.jsonl of an earlier sweep");
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> fingerprints(spec.points.size());
  for (std::size_t k = 0; k < spec.points.size(); ++k)
    fingerprints[k] = point_fingerprint(spec, k);
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    try {
      SweepRun run = sweep_run_from_json(j, path);
      if (run.index >= spec.points.size() || run.fingerprint != fingerprints[run.index] ||
          !run.figures.error.empty())
        continue;
      out[run.index] = std::move(run);
    } catch (const Error&) {
      continue;  // not a record of ours: the point runs again
    }
  }
  return out;
}

}  // namespace mfabric::study
