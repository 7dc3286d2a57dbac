#include "controller/regions_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "control/demand.h"
#include "control/planner.h"
#include "core/error.h"
#include "core/yaml_fields.h"

namespace mfabric::controller {

namespace {

bool valid_region_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

RegionSpec parse_region(const YAML::Node& node, const std::string& source,
                        const std::string& path) {
  const Fields f(node, source, path,
                 {"name", "servers", "nics", "alpha", "numa", "first_port", "planner", "link"});
  RegionSpec region;
  region.name = f.optional_string("name").value_or("");
  if (!valid_region_name(region.name)) {
    throw Error(source, f.field("name"),
                "expected a name of 1 to 64 letters, digits, '-', '_' or '.'");
  }
  region.servers = f.required_int("servers");
  if (region.servers < 1 || region.servers > control::kMaxRegionServers) {
    throw Error(source, f.field("servers"),
                fmt::format("expected 1 to {} servers, got {}", control::kMaxRegionServers,
                            region.servers));
  }
  region.nics.nics = f.optional_int("nics").value_or(region.nics.nics);
  region.nics.alpha = f.optional_int("alpha").value_or(region.nics.alpha);
  region.nics.numa = f.optional_int("numa").value_or(region.nics.numa);
  with_context(source, path, [&] { region.nics.validate(); });
  if (region.nics.alpha > control::kMaxAlpha) {
    throw Error(source, f.field("alpha"),
                fmt::format("expected at most {} OCS NICs per server", control::kMaxAlpha));
  }
  region.first_port = f.required_int("first_port");
  if (region.first_port < 1 ||
      region.first_port > control::kMaxOcsPorts - region.servers * region.nics.alpha) {
    throw Error(source, f.field("first_port"),
                fmt::format("expected a device port from 1, got {}", region.first_port));
  }
  region.planner = f.optional_string("planner").value_or(region.planner);
  with_context(source, f.field("planner"), [&] { control::make_planner(region.planner); });
  region.link = f.optional_rate("link").value_or(region.link);
  return region;
}

}  // namespace

std::vector<RegionSpec> parse_regions(const std::string& text, const std::string& source) {
  const YAML::Node root = parse_yaml(text, source);
  const Fields top(root, source, "", {"regions"});
  const YAML::Node list = top.get("regions");
  if (!list || !list.IsSequence() || list.size() == 0) {
    throw Error(source, "regions", "expected a list of regions, got " + describe(list));
  }
  std::vector<RegionSpec> regions;
  std::set<std::string> names;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string path = fmt::format("regions[{}]", k);
    RegionSpec region = parse_region(list[k], source, path);
    if (!names.insert(region.name).second) {
      throw Error(source, path + ".name", "region '" + region.name + "' appears twice");
    }
    for (const RegionSpec& other : regions) {
      const int end = region.first_port + region.servers * region.nics.alpha;
      const int other_end = other.first_port + other.servers * other.nics.alpha;
      if (region.first_port < other_end && other.first_port < end) {
        throw Error(source, path + ".first_port",
                    fmt::format("ports {}-{} overlap region '{}' (ports {}-{})", region.first_port,
                                end - 1, other.name, other.first_port, other_end - 1));
      }
    }
    regions.push_back(std::move(region));
  }
  return regions;
}

std::vector<RegionSpec> read_regions_file(const std::string& path) {
  return parse_regions(
      read_yaml_file(path, "regions file", "a YAML regions file (docs/runtime.md)"), path);
}

}  // namespace mfabric::controller
