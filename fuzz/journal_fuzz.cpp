// Sweep journals (study::read_journal, docs/sweep.md, "Outputs and resuming"): the points.jsonl
// a resumed sweep trusts, one JSON record per line, read strictly against a fixed two-point sweep
// (kSweep: the seeds in fuzz/corpus/journal/ are journals that `mfabric sweep` wrote for it).
// A record that reads must write back (sweep_run_json) to a record that reads back the same.
// The input's repeat markers are expanded first (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/json_text.h"
#include "fuzz_support.h"
#include "study/sweep.h"
#include "study/sweep_journal.h"
#include "study/sweep_run.h"

namespace {

constexpr const char* kSweep =
    "name: journal\n"
    "experiment: {cluster: {servers: 2}, workload: {collective: all-reduce, bytes: 1MiB}}\n"
    "grid: {workload.bytes: [1MiB, 2MiB]}\n";

const mfabric::study::SweepSpec& sweep() {
  static const mfabric::study::SweepSpec* const spec =
      new mfabric::study::SweepSpec(mfabric::study::parse_sweep(kSweep, "sweep.yaml"));
  return *spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path = fuzz::expanded_scratch_file("points.jsonl", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const study::JournalContents contents = study::read_journal(*path, sweep());
    if (contents.intact_bytes > contents.file_bytes) fuzz::property_failed("intact > file bytes");
    for (const auto& [index, run] : contents.points) {
      const auto written = study::sweep_run_json(sweep(), run);
      const study::SweepRun back =
          study::sweep_run_from_json(written, "points.jsonl", "written back");
      if (back.index != index ||
          json_text(study::sweep_run_json(sweep(), back), -1) != json_text(written, -1)) {
        fuzz::property_failed("a journal record written back reads back different");
      }
    }
  });
  return 0;
}
