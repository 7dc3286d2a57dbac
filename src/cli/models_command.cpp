// mfabric models: the shipped model zoo.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "report/table.h"
#include "workload/model.h"

namespace mfabric::cli {

Command register_models(CLI::App& command) {
  CLI::App* app = &command;
  return Command{
      app, [] {
        report::Table t(
            {"model", "layers", "hidden", "experts", "top-k", "shared", "dense layers", "params"});
        for (const std::string& name : workload::model_names()) {
          const workload::ModelSpec m = workload::load_model(name);
          t.add_row({m.name, std::to_string(m.layers), std::to_string(m.hidden),
                     std::to_string(m.experts), std::to_string(m.top_k),
                     std::to_string(m.shared_experts), std::to_string(m.dense_layers),
                     fmt::format("{:.1f}B", static_cast<double>(m.total_params()) / 1e9)});
        }
        std::cout << t.render()
                  << "\nAny model YAML file (docs/workload.md) works where a name does.\n";
        return 0;
      }};
}

}  // namespace mfabric::cli
