// mfabric fabrics: the fabric kinds mfabric can build and their parameters.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "fabric/builders.h"

namespace mfabric::cli {

Command register_fabrics(CLI::App& root) {
  CLI::App* app =
      root.add_subcommand("fabrics", "List the fabric kinds and the parameters each accepts");
  return Command{app, [] {
                   for (const fabric::FabricKind& k : fabric::fabric_kinds()) {
                     std::cout << fmt::format("{}\n  {}\n", k.name, k.summary);
                     for (const fabric::FabricParam& p : k.params) {
                       std::cout << fmt::format("    {:<18} {} (default: {})\n", p.name, p.meaning,
                                                p.default_value);
                     }
                   }
                   std::cout << "\nName a fabric as NAME or NAME:key=value,... e.g. "
                                "fat-tree:oversubscription=3 or mfabric:alpha=6,region=8\n";
                   return 0;
                 }};
}

}  // namespace mfabric::cli
