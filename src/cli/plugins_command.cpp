// mfabric plugins: every registry of plug-ins and its entries (cli/plugins.h).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/plugins.h"
#include "core/json_text.h"

namespace mfabric::cli {

Command register_plugins(CLI::App& command) {
  CLI::App* app = &command;
  auto format = std::make_shared<std::string>("text");
  app->add_option("--format", *format, "text, markdown (docs/plugins.md is this output) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  return Command{app, [format] {
                   const std::vector<PluginRegistry> registries = plugin_registries();
                   if (*format == "markdown") {
                     std::cout << plugins_markdown(registries);
                   } else if (*format == "json") {
                     nlohmann::json j = nlohmann::json::array();
                     for (const PluginRegistry& r : registries) {
                       nlohmann::json entries = nlohmann::json::array();
                       for (const PluginEntry& e : r.entries)
                         entries.push_back({{"name", e.name}, {"description", e.description}});
                       j.push_back({{"registry", r.what},
                                    {"title", r.title},
                                    {"lines", r.lines},
                                    {"entries", entries}});
                     }
                     std::cout << json_text(nlohmann::json{{"registries", j}}) << "\n";
                   } else {
                     std::cout << plugins_text(registries);
                   }
                   return 0;
                 }};
}

}  // namespace mfabric::cli
