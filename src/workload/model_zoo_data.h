// The shipped model zoo, compiled in from data/models/*.yaml by cmake/embed_models.cmake.
#pragma once

namespace mfabric::workload::detail {

struct EmbeddedModel {
  const char* file;  // e.g. "mixtral-8x7b.yaml"
  const char* yaml;
};

extern const EmbeddedModel kModelZoo[];
extern const int kModelZooSize;

}  // namespace mfabric::workload::detail
