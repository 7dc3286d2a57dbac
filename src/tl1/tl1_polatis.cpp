// What a Polatis-style OCS says in its responses: the cross-connects in force (RTRV-PATCH) and
// the ports' states (tl1/tl1_message.h).
#include "tl1/tl1_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "core/error.h"
#include "core/output_text.h"
#include "tl1/tl1_text.h"

namespace mfabric::tl1 {
using namespace tl1_text;

std::vector<std::pair<int, int>> parse_patches(const Tl1Response& response) {
  std::vector<std::pair<int, int>> patches;
  std::unordered_set<int> used;
  for (std::size_t k = 0; k < response.lines.size(); ++k) {
    const std::string& line = response.lines[k];
    const std::size_t comma = line.find(',');
    const int a =
        comma == std::string::npos ? -1 : port_number(std::string_view(line).substr(0, comma));
    const int b =
        comma == std::string::npos ? -1 : port_number(std::string_view(line).substr(comma + 1));
    if (a < 0 || b < 0 || a == b) {
      fail(fmt::format("patch {}", k + 1),
           fmt::format("expected 'A,B': two different ports of 1 to {}, got {}",
                       control::kMaxOcsPorts, quote_input(line)));
    }
    for (const int p : {a, b}) {
      if (!used.insert(p).second) {
        fail(fmt::format("patch {}", k + 1),
             fmt::format("port {} is already in an earlier patch ({})", p, quote_input(line)));
      }
    }
    patches.emplace_back(a, b);
  }
  return patches;
}

std::string format_patch_line(int a, int b) {
  return fmt::format("{},{}", a, b);
}

control::OcsConfiguration configuration_of_patches(const std::vector<std::pair<int, int>>& patches,
                                                   int ports, int port_base) {
  control::OcsConfiguration config(ports);
  for (const auto& [a, b] : patches) {
    const std::int64_t pa = std::int64_t{a} - port_base;
    const std::int64_t pb = std::int64_t{b} - port_base;
    if (pa < 0 || pb < 0 || pa >= ports || pb >= ports) {
      fail("patches", fmt::format("patch {},{} is outside the OCS's ports {} to {}", a, b,
                                  port_base, std::int64_t{port_base} + ports - 1));
    }
    try {
      config.connect(static_cast<int>(pa), static_cast<int>(pb));
    } catch (const Error& e) {
      fail("patches", e.message());
    }
  }
  return config;
}

namespace {
constexpr std::string_view kPortStateNames[] = {"IS", "OOS", "FAILED"};
}  // namespace

std::string_view port_state_name(PortState state) {
  return kPortStateNames[static_cast<std::size_t>(state)];
}

std::vector<PortStatus> parse_port_status(const Tl1Response& response) {
  std::vector<PortStatus> out;
  for (std::size_t k = 0; k < response.lines.size(); ++k) {
    const std::string_view line = response.lines[k];
    const auto bad = [&]() {
      fail(fmt::format("port status {}", k + 1),
           fmt::format("expected 'PORT:STATUS=IS|OOS|FAILED[,KEY=VALUE...]' (PORT 1 to {}), got {}",
                       control::kMaxOcsPorts, quote_input(line)));
    };
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) bad();
    PortStatus status;
    status.port = port_number(line.substr(0, colon));
    if (status.port < 0) bad();
    bool found = false;
    std::string_view rest = line.substr(colon + 1);
    while (true) {
      const std::size_t comma = std::min(rest.size(), rest.find(','));
      const std::string_view parameter = rest.substr(0, comma);
      const std::size_t equals = parameter.find('=');
      if (equals == 0 || equals == std::string_view::npos) bad();
      if (parameter.substr(0, equals) == "STATUS") {
        const std::string_view value = parameter.substr(equals + 1);
        const auto* name = std::find(std::begin(kPortStateNames), std::end(kPortStateNames), value);
        if (found || name == std::end(kPortStateNames)) bad();
        status.state = static_cast<PortState>(name - std::begin(kPortStateNames));
        found = true;
      }
      if (comma == rest.size()) break;
      rest.remove_prefix(comma + 1);
    }
    if (!found) bad();
    out.push_back(status);
  }
  return out;
}

std::string format_port_status_line(const PortStatus& status) {
  return fmt::format("{}:STATUS={}", status.port, port_state_name(status.state));
}

}  // namespace mfabric::tl1
