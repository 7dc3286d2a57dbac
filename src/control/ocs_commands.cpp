#include "control/ocs_commands.h"

#include <fmt/format.h>

#include <string_view>

#include "core/error.h"

namespace mfabric::control {

OcsConfiguration::OcsConfiguration(int ports) {
  if (ports < 0 || ports > kMaxOcsPorts) {
    throw Error("", "ports",
                fmt::format("expected 0 to {} OCS ports, got {}", kMaxOcsPorts, ports));
  }
  peer_.assign(static_cast<std::size_t>(ports), -1);
}

void OcsConfiguration::connect(int a, int b) {
  const int n = ports();
  if (a < 0 || b < 0 || a >= n || b >= n || a == b) {
    throw Error("", "ports",
                fmt::format("cannot connect port {} to port {}: expected two different ports "
                            "of 0 to {}",
                            a, b, n - 1));
  }
  for (const int p : {a, b}) {
    if (peer(p) >= 0) {
      throw Error("", "ports",
                  fmt::format("cannot connect port {} to port {}: port {} is already connected to "
                              "port {}",
                              a, b, p, peer(p)));
    }
  }
  peer_[static_cast<std::size_t>(a)] = b;
  peer_[static_cast<std::size_t>(b)] = a;
}

std::vector<std::pair<int, int>> OcsConfiguration::connections() const {
  std::vector<std::pair<int, int>> out;
  for (int a = 0; a < ports(); ++a) {
    if (peer(a) > a) out.emplace_back(a, peer(a));
  }
  return out;
}

OcsConfiguration configuration_of(const std::vector<PortCircuit>& circuits,
                                  const RegionPorts& region, int ocs_ports) {
  region.nics.validate();
  if (region.servers < 1 || region.first_port < 0 ||
      static_cast<std::int64_t>(region.first_port) + region.ports() > ocs_ports) {
    throw Error("", "ports",
                fmt::format("the region's {} servers x {} OCS NICs from port {} do not fit an OCS "
                            "of {} ports",
                            region.servers, region.nics.alpha, region.first_port, ocs_ports));
  }
  OcsConfiguration config(ocs_ports);
  const auto check_end = [&](int server, int nic) {
    if (server < 0 || server >= region.servers || nic < region.nics.first_ocs_nic() ||
        nic >= region.nics.nics) {
      throw Error("", "ports",
                  fmt::format("server {} NIC {} is not an OCS NIC of the region (servers 0 to {}, "
                              "NICs {} to {})",
                              server, nic, region.servers - 1, region.nics.first_ocs_nic(),
                              region.nics.nics - 1));
    }
  };
  for (const PortCircuit& c : circuits) {
    check_end(c.server, c.nic);
    check_end(c.peer_server, c.peer_nic);
    config.connect(region.port(c.server, c.nic), region.port(c.peer_server, c.peer_nic));
  }
  return config;
}

std::vector<CrossConnect> reconfiguration(const OcsConfiguration& from,
                                          const OcsConfiguration& to) {
  if (from.ports() != to.ports()) {
    throw Error("", "ports",
                fmt::format("cannot reconfigure an OCS of {} ports into one of {}", from.ports(),
                            to.ports()));
  }
  std::vector<CrossConnect> out;
  for (const auto& [a, b] : from.connections()) {
    if (to.peer(a) != b) out.push_back({CrossConnect::Action::Disconnect, a, b});
  }
  for (const auto& [a, b] : to.connections()) {
    if (from.peer(a) != b) out.push_back({CrossConnect::Action::Connect, a, b});
  }
  return out;
}

namespace {

// `pattern` with {a}, {b}, {ctag} replaced; "{{" and "}}" are braces.
std::string render(std::string_view pattern, const char* field, std::int64_t a, std::int64_t b,
                   std::int64_t ctag) {
  std::string out;
  for (std::size_t k = 0; k < pattern.size(); ++k) {
    const char ch = pattern[k];
    if (ch == '}') {
      if (k + 1 < pattern.size() && pattern[k + 1] == '}') {
        out += '}';
        ++k;
        continue;
      }
      throw Error("", field, "unmatched '}' (write '}}' for a brace)");
    }
    if (ch != '{') {
      out += ch;
      continue;
    }
    if (k + 1 < pattern.size() && pattern[k + 1] == '{') {
      out += '{';
      ++k;
      continue;
    }
    const std::size_t close = pattern.find('}', k);
    if (close == std::string_view::npos) {
      throw Error("", field, "unmatched '{' (write '{{' for a brace)");
    }
    const std::string_view name = pattern.substr(k + 1, close - k - 1);
    if (name == "a") {
      out += std::to_string(a);
    } else if (name == "b") {
      out += std::to_string(b);
    } else if (name == "ctag") {
      out += std::to_string(ctag);
    } else {
      throw Error(
          "", field,
          fmt::format("unknown placeholder '{{{}}}' (known: {{a}}, {{b}}, {{ctag}})", name));
    }
    k = close;
  }
  return out;
}

}  // namespace

std::vector<std::string> tl1_commands(const std::vector<CrossConnect>& changes,
                                      const Tl1Syntax& syntax) {
  // Check both templates even when one kind of command does not occur.
  render(syntax.connect, "tl1.connect", 0, 0, 0);
  render(syntax.disconnect, "tl1.disconnect", 0, 0, 0);
  std::vector<std::string> out;
  out.reserve(changes.size());
  std::int64_t ctag = syntax.first_ctag;
  for (const CrossConnect& c : changes) {
    const bool connect = c.action == CrossConnect::Action::Connect;
    out.push_back(render(connect ? syntax.connect : syntax.disconnect,
                         connect ? "tl1.connect" : "tl1.disconnect",
                         static_cast<std::int64_t>(c.a) + syntax.port_base,
                         static_cast<std::int64_t>(c.b) + syntax.port_base, ctag++));
  }
  return out;
}

}  // namespace mfabric::control
