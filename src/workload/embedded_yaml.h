// Data shipped inside the binary, compiled in from YAML files by cmake/embed_yaml.cmake:
// the model zoo (data/models/*.yaml) and the named calibrations (data/calibrations/*.yaml).
#pragma once

namespace mfabric::workload::detail {

struct EmbeddedYaml {
  const char* file;  // e.g. "mixtral-8x7b.yaml"
  const char* yaml;
};

extern const EmbeddedYaml kModelZoo[];
extern const int kModelZooSize;
extern const EmbeddedYaml kCalibrations[];
extern const int kCalibrationsSize;

}  // namespace mfabric::workload::detail
