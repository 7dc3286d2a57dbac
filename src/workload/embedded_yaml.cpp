#include "workload/embedded_yaml.h"

#include <string>
#include <string_view>
#include <utility>

#include "core/rng.h"

namespace mfabric::workload::detail {

std::uint64_t embedded_yaml_digest() {
  static const std::uint64_t digest = [] {
    std::uint64_t h = kFnvOffsetBasis;
    const std::pair<const EmbeddedYaml*, int> sets[] = {{kModelZoo, kModelZooSize},
                                                        {kCalibrations, kCalibrationsSize}};
    for (const auto& [files, size] : sets) {
      for (int i = 0; i < size; ++i) {
        // Name and text, each ended by its NUL, so that no two sets hash alike by a shifted
        // boundary.
        for (const char* text : {files[i].file, files[i].yaml})
          h = fnv1a(std::string_view(text, std::char_traits<char>::length(text) + 1), h);
      }
    }
    return h;
  }();
  return digest;
}

}  // namespace mfabric::workload::detail
