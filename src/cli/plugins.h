// Every registry of plug-ins (core/registry.h) in one list: what `mfabric plugins` prints, what
// `mfabric fabrics` lists a parameter's choices from, and what docs/plugins.md is generated from
// (`mfabric plugins --markdown`; CTest mfabric_plugins_doc fails when the page and the registries
// differ). Only the CLI sees every layer, so the list is made here.
#pragma once

#include <string>
#include <vector>

namespace mfabric::cli {

struct PluginEntry {
  std::string name;
  std::string description;
};

struct PluginRegistry {
  std::string what;    // the registry's own word for an entry: "fabric", "planner", ...
  std::string title;   // "Fabric kinds"
  std::string lines;   // the source file that holds its registry lines
  std::string adding;  // what a new entry is, besides its line
  std::vector<PluginEntry> entries;
};

// The registries from the bottom of the layers up, commands last.
std::vector<PluginRegistry> plugin_registries();
// The entries of the registry whose `what` is `what` (a fabric parameter's `choices`); empty for
// none.
std::vector<PluginEntry> plugin_entries(const std::string& what);

// The text `mfabric plugins` prints, and docs/plugins.md.
std::string plugins_text(const std::vector<PluginRegistry>& registries);
std::string plugins_markdown(const std::vector<PluginRegistry>& registries);

}  // namespace mfabric::cli
