#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/output_text.h"
#include "core/spec.h"
#include "fabric/builders.h"

namespace mfabric::cli {

void ClusterOptions::add_to(CLI::App& app) {
  app.add_option("--servers", servers, "Number of servers")->capture_default_str();
  app.add_option("--gpus-per-server", gpus_per_server, "GPUs per server (on one NVSwitch)")
      ->capture_default_str();
  app.add_option("--nics-per-server", nics_per_server, "NICs per server")->capture_default_str();
  app.add_option("--link", link,
                 "NIC and switch link speed in bits per second, e.g. 100G, 400Gbps, 800G")
      ->capture_default_str();
  app.add_option("--link-latency", link_latency, "Propagation delay per cable, e.g. 1us, 500ns")
      ->capture_default_str();
  app.add_option("--nvswitch", nvswitch,
                 "NVSwitch bandwidth per GPU and direction, e.g. 900GB/s (bytes) or 7.2Tbps")
      ->capture_default_str();
  app.add_option("--radix", radix,
                 "Electrical switch radix (ports per switch) for fabrics that take one "
                 "(default: 64)");
  app.add_option("--max-memory", max_memory,
                 "Refuse a cluster whose topology is estimated above this much memory (default: "
                 "8GiB)");
}

fabric::ClusterSpec ClusterOptions::to_spec() const {
  fabric::ClusterSpec spec;
  spec.servers = servers;
  spec.gpus_per_server = gpus_per_server;
  spec.nics_per_server = nics_per_server;
  spec.link = with_context("", "--link", [&] { return parse_rate(link); });
  spec.link_latency = with_context("", "--link-latency", [&] { return parse_time(link_latency); });
  spec.nvswitch = with_context("", "--nvswitch", [&] { return parse_rate(nvswitch); });
  // ClusterSpec names its fields as in YAML (gpus_per_server); here they are options.
  with_option_names([&] {
    spec.validate();
    return 0;
  });
  return spec;
}

fabric::Topology build_named_fabric(const std::string& text, const fabric::ClusterSpec& cluster,
                                    std::optional<int> radix, Bytes max_memory) {
  try {
    Spec spec = Spec::parse(text);
    if (radix) {
      const fabric::FabricKind* kind = fabric::find_fabric_kind(spec.name());
      if (kind && kind->takes("radix") && !spec.has("radix")) {
        auto params = spec.params();
        params["radix"] = std::to_string(*radix);
        spec = Spec(spec.name(), params);
      }
    }
    return fabric::build_fabric(spec, cluster, max_memory.count());
  } catch (const Error& e) {
    // "--fabric mfabric:alpha=9: alpha: must be between 1 and 7, got 9"
    throw Error("", "--fabric " + text,
                e.field().empty() ? e.message() : e.field() + ": " + e.message());
  }
}

int checked_iterations(int iterations, const std::string& option) {
  if (iterations < 1 || iterations > workload::kMaxIterations) {
    throw Error(
        "", option,
        fmt::format("must be between 1 and {}, got {}", workload::kMaxIterations, iterations));
  }
  return iterations;
}

Bytes max_memory_option(const std::string& text, const std::string& option) {
  if (text.empty()) return Bytes(workload::kDefaultMaxJobMemory);
  return with_context("", option, [&] { return parse_bytes(text); });
}

std::string wrote_line(const std::string& dir, const std::vector<std::string>& files) {
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/')
    base.pop_back();
  const std::string prefix = base == "/" ? base : base + "/";
  std::string out = "wrote ";
  for (std::size_t i = 0; i < files.size(); ++i)
    out += (i == 0 ? "" : ", ") + printable(prefix + files[i]);
  return out;
}

std::vector<std::string> list_values(const std::vector<std::string>& given,
                                     const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& text : given) {
    std::size_t from = 0;
    while (from <= text.size()) {
      const std::size_t comma = std::min(text.find(',', from), text.size());
      const std::string item = text.substr(from, comma - from);
      if (item.empty()) {
        throw Error("", option,
                    fmt::format("expected a comma-separated list without empty items, got {}",
                                quote_input(text)));
      }
      // "mfabric:alpha=6,region=4": a key=value after a comma continues the spec before it.
      const bool continues_spec = item.find('=') != std::string::npos &&
                                  item.find(':') == std::string::npos && !out.empty() &&
                                  out.back().find(':') != std::string::npos;
      if (continues_spec) {
        out.back() += "," + item;
      } else {
        out.push_back(item);
      }
      from = comma + 1;
    }
  }
  if (out.empty()) throw Error("", option, "expected at least one value");
  return out;
}

std::vector<std::string> expand_fabric_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n == "all") {
      for (const std::string& d : fabric::default_comparison_fabrics())
        out.push_back(d);
    } else {
      out.push_back(n);
    }
  }
  return out;
}

}  // namespace mfabric::cli
