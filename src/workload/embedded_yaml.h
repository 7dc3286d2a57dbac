// Data shipped inside the binary, compiled in from YAML files by cmake/embed_yaml.cmake:
// the model zoo (data/models/*.yaml) and the named calibrations (data/calibrations/*.yaml).
#pragma once

#include <cstdint>

namespace mfabric::workload::detail {

struct EmbeddedYaml {
  const char* file;  // e.g. "mixtral-8x7b.yaml"
  const char* yaml;
};

extern const EmbeddedYaml kModelZoo[];
extern const int kModelZooSize;
extern const EmbeddedYaml kCalibrations[];
extern const int kCalibrationsSize;

// A hash of every shipped file's name and text (models and calibrations): what a result depends
// on beside its own input, for journals kept across builds (study/sweep.h, point_fingerprint).
std::uint64_t embedded_yaml_digest();

}  // namespace mfabric::workload::detail
