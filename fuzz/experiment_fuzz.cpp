// Experiment YAML (sim::load_experiment, docs/experiment.md) from a file. The input's repeat
// markers are expanded (fuzz_support.h).
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "fuzz_support.h"
#include "config/experiment.h"
#include "sim/load_experiment.h"

namespace {

// Loading an experiment builds its fabric, and the builders' own bound is a memory estimate
// (simulation.max_memory, 8 GiB by default): an input asking for a cluster under it would still
// spend minutes and gigabytes building it under ASan, which the fabric harness bounds the same
// way. Such inputs are skipped, not run. Integers are read as
// the library reads them (decimal, optional '+'); anything else is left to the library to reject.
// The YAML is parsed by the library's parse_yaml, under its limits on size, depth and aliases: a
// plain YAML::Load here would be the first to meet a hostile input (an alias bomb, 100,000
// levels of nesting) and fail in the harness instead of the library.
constexpr int kMaxServers = 256;
constexpr int kMaxPerServer = 16;

bool over(const YAML::Node& cluster, const char* key, int limit) {
  const YAML::Node value = cluster[key];
  if (!value || !value.IsScalar()) return false;
  const std::string& text = value.Scalar();
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  long long n = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, n);
  return ec == std::errc() && ptr == end && n > limit;
}

bool cluster_too_big(const std::string& text) {
  try {
    const YAML::Node root = mfabric::parse_yaml(text, "experiment.yaml");
    if (!root.IsMap()) return false;
    const YAML::Node cluster = root["cluster"];
    if (!cluster || !cluster.IsMap()) return false;
    return over(cluster, "servers", kMaxServers) ||
           over(cluster, "gpus_per_server", kMaxPerServer) ||
           over(cluster, "nics_per_server", kMaxPerServer);
  } catch (const mfabric::Error&) {
    return false;  // the library reports the same error
  } catch (const YAML::Exception&) {
    return false;  // a lookup on a malformed node: the library reports it as an mfabric::Error
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<std::string> text = mfabric::fuzz::expanded_text(data, size);
  if (!text) return -1;
  if (cluster_too_big(*text)) return -1;  // not added to the corpus
  const std::string path = mfabric::fuzz::write_scratch("experiment.yaml", *text);
  mfabric::fuzz::expect_only_mfabric_errors([&] { mfabric::sim::load_experiment(path); });
  return 0;
}
