// mfabric fabrics: the fabric kinds mfabric can build and their parameters, from the registry
// (fabric/fabric_kinds.h); a parameter whose values are another registry's names lists them.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/plugins.h"
#include "fabric/fabric_kinds.h"

namespace mfabric::cli {

Command register_fabrics(CLI::App& command) {
  CLI::App* app = &command;
  return Command{app, [] {
                   for (const auto& k : fabric::fabric_kinds().entries()) {
                     std::cout << fmt::format("{}\n  {}\n", k.name, k.description);
                     for (const fabric::FabricParam& p : k.factory.params) {
                       std::cout << fmt::format("    {:<18} {} (default: {})\n", p.name, p.meaning,
                                                p.default_value);
                       if (p.choices.empty()) continue;
                       for (const PluginEntry& c : plugin_entries(p.choices))
                         std::cout << fmt::format("      {:<18} {}\n", c.name, c.description);
                     }
                   }
                   std::cout << "\nName a fabric as NAME or NAME:key=value,... e.g. "
                                "fat-tree:oversubscription=3 or mfabric:alpha=6,region=8\n";
                   return 0;
                 }};
}

}  // namespace mfabric::cli
