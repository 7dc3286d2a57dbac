// mfabric models: the shipped model zoo.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.h"
#include "report/table.h"
#include "workload/model.h"

namespace mfabric::cli {
namespace {

// "TP 2, PP 8, EP 8, ETP 1; micro-batch 1, global batch 256, seq 4096; bf16, 1f1b" (and the
// recomputation and dispatcher where the recipe names them).
std::string recipe_text(const workload::Recipe& r) {
  std::string degrees = fmt::format("TP {}, PP {}", r.tp, r.pp);
  if (r.vp > 1) degrees += fmt::format(", VP {}", r.vp);
  degrees += fmt::format(", EP {}", r.ep);
  if (r.convention == "megatron") degrees += fmt::format(", ETP {}", r.etp);
  if (r.cp > 1) degrees += fmt::format(", CP {}", r.cp);
  if (r.convention == "paper") degrees += " (paper convention)";
  std::string how = fmt::format("{}, {}", r.precision, r.schedule);
  if (r.recompute != "none") how += fmt::format(", {} recomputation", r.recompute);
  if (r.dispatcher != "alltoall") how += ", " + r.dispatcher;
  return fmt::format("{}; micro-batch {}, global batch {}, seq {}; {}", degrees, r.micro_batch,
                     r.global_batch, r.seq, how);
}

std::string published_for(const workload::Recipe& r) {
  if (r.gpus == 0) return "-";
  return r.gpu.empty() ? fmt::format("{} GPUs", r.gpus) : fmt::format("{} {}", r.gpus, r.gpu);
}

}  // namespace

Command register_models(CLI::App& command) {
  CLI::App* app = &command;
  return Command{
      app, [] {
        report::Table t(
            {"model", "layers", "hidden", "experts", "top-k", "shared", "dense layers", "params"});
        report::Table jobs({"model", "default job (its recipe)", "published for"});
        for (const std::string& name : workload::model_names()) {
          const workload::ModelSpec m = workload::load_model(name);
          const std::string named =
              m.aliases.empty() ? m.name
                                : fmt::format("{} ({})", m.name, fmt::join(m.aliases, ", "));
          t.add_row({named, std::to_string(m.layers), std::to_string(m.hidden),
                     std::to_string(m.experts), std::to_string(m.top_k),
                     std::to_string(m.shared_experts), std::to_string(m.dense_layers),
                     fmt::format("{:.1f}B", static_cast<double>(m.total_params()) / 1e9)});
          if (m.recipe) jobs.add_row({m.name, recipe_text(*m.recipe), published_for(*m.recipe)});
        }
        std::cout << t.render() << "\n"
                  << jobs.render()
                  << "\nEach recipe's source is cited in its model file (recipe.source; "
                     "docs/workload.md, \"Recipes\").\n"
                  << "Any model YAML file (docs/workload.md) works where a name does.\n";
        return 0;
      }};
}

}  // namespace mfabric::cli
