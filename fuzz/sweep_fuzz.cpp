// Sweep files (study::load_sweep, docs/sweep.md): the experiment inline or named, a grid and
// points; then the experiment text of the first and last point (study::point_yaml), which sets
// each field in the experiment's YAML.
//
// Input: the sweep file, optionally followed by kExperimentSeparator and an experiment file,
// which the harness writes beside the sweep as "experiment.yaml" (so `experiment:
// experiment.yaml` reads it). A sweep reads the experiment file it names, relative to its own
// directory: only plain names (letters, digits, '_', '-', '.', no leading '.') are run, so that
// the harness never reads outside its scratch directory; a sweep naming anything else is skipped.
// The input's repeat markers are expanded first (fuzz_support.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "fuzz_support.h"
#include "study/sweep.h"

namespace {

constexpr std::string_view kExperimentSeparator = "@@experiment@@";

bool plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
         });
}

// Whether load_sweep would read a file other than a plain name in the scratch directory. The
// sweep is parsed as the library parses it (parse_yaml, under its limits); `experiment` is found
// as the library finds it (a key whose scalar is "experiment", in a map at the top).
bool names_an_outside_file(const std::string& text) {
  YAML::Node root;
  try {
    root = mfabric::parse_yaml(text, "sweep.yaml");
  } catch (const mfabric::Error&) {
    return false;  // load_sweep stops at the same error, before reading anything
  }
  if (!root.IsMap()) return false;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != "experiment") continue;
    if (entry.second.IsScalar() && !plain_name(entry.second.Scalar())) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> text = fuzz::expanded_text(data, size);
  if (!text) return -1;
  const auto parts = fuzz::split(*text, kExperimentSeparator, 2);
  const std::string sweep(parts[0]);
  if (names_an_outside_file(sweep)) return -1;  // not run, not added to the corpus
  if (parts.size() == 2) {
    fuzz::write_scratch("experiment.yaml", parts[1]);
  } else {
    fuzz::remove_scratch("experiment.yaml");
  }
  const std::string path = fuzz::write_scratch("sweep.yaml", sweep);
  fuzz::expect_only_mfabric_errors([&] {
    const study::SweepSpec spec = study::load_sweep(path);
    if (spec.points.empty() || spec.points.size() > study::kMaxSweepPoints) {
      fuzz::property_failed("a sweep of " + std::to_string(spec.points.size()) + " points");
    }
    if (std::find(spec.fields.begin(), spec.fields.end(), spec.x) == spec.fields.end()) {
      fuzz::property_failed("x is not a field of the sweep");
    }
    for (const std::size_t k : {std::size_t{0}, spec.points.size() - 1}) {
      fuzz::expect_only_mfabric_errors([&] {
        volatile std::size_t sink = study::point_yaml(spec, k).size();
        (void)sink;
      });
    }
  });
  return 0;
}
