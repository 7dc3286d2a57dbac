#include "ocs/ocs_state.h"

#include <fmt/format.h>

#include <charconv>
#include <sstream>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::ocs {
namespace {

OcsRefusal refuse(const char* code, std::string text) {
  return OcsRefusal{code, std::move(text)};
}

}  // namespace

OcsState::OcsState(int ports) {
  if (ports < 1 || ports > kMaxEmulatedPorts) {
    throw Error("", "ports",
                fmt::format("expected 1 to {} ports, got {}", kMaxEmulatedPorts, ports));
  }
  ports_.resize(static_cast<std::size_t>(ports) + 1);
}

const OcsState::Port& OcsState::at(int port) const {
  if (!valid(port)) {
    throw Error("", "port", fmt::format("expected a port from 1 to {}, got {}", ports(), port));
  }
  return ports_[static_cast<std::size_t>(port)];
}

std::optional<OcsRefusal> OcsState::refusal(const OcsChange& change, Time now) const {
  const auto invalid = [&](int port) -> std::optional<OcsRefusal> {
    if (valid(port)) return std::nullopt;
    return refuse(tl1_code::kInvalidPort,
                  fmt::format("port {} is not a port of this switch (1 to {})", port, ports()));
  };
  if (auto r = invalid(change.a)) return r;
  const Port& a = ports_[static_cast<std::size_t>(change.a)];
  switch (change.kind) {
    case OcsChange::Kind::Connect: {
      if (auto r = invalid(change.b)) return r;
      if (change.a == change.b) {
        return refuse(tl1_code::kInvalidPort,
                      fmt::format("port {} cannot be connected to itself", change.a));
      }
      for (const int p : {change.a, change.b}) {
        const Port& port = ports_[static_cast<std::size_t>(p)];
        if (port.failed) return refuse(tl1_code::kPortFailed, fmt::format("port {} is failed", p));
        if (port.peer != 0) {
          return refuse(tl1_code::kPortInUse,
                        fmt::format("port {} is already connected to port {}", p, port.peer));
        }
      }
      return std::nullopt;
    }
    case OcsChange::Kind::Disconnect:
      if (a.peer == 0) {
        return refuse(tl1_code::kNotConnected, fmt::format("port {} is not connected", change.a));
      }
      if (a.settles_at > now) {
        return refuse(
            tl1_code::kSwitching,
            fmt::format("port {} is still switching (its patch is being made)", change.a));
      }
      return std::nullopt;
    case OcsChange::Kind::Fail:
      if (a.failed) {
        return refuse(tl1_code::kAlreadyInState,
                      fmt::format("port {} is already failed", change.a));
      }
      return std::nullopt;
    case OcsChange::Kind::Repair:
      if (!a.failed) {
        return refuse(tl1_code::kAlreadyInState, fmt::format("port {} is not failed", change.a));
      }
      return std::nullopt;
  }
  return std::nullopt;
}

Time OcsState::apply(const OcsChange& change, Time now, Time switching) {
  if (const auto r = refusal(change, now)) {
    throw Error("", "", fmt::format("{} refused ({}): {}", change_text(change), r->code, r->text));
  }
  Port& a = ports_[static_cast<std::size_t>(change.a)];
  const Time settled = now + switching;
  switch (change.kind) {
    case OcsChange::Kind::Connect: {
      Port& b = ports_[static_cast<std::size_t>(change.b)];
      a.peer = change.b;
      b.peer = change.a;
      a.settles_at = b.settles_at = settled;
      return settled;
    }
    case OcsChange::Kind::Disconnect: {
      // The peer's mirror moves too, so both ports are busy until it has (for status only:
      // the ports are free to be connected again at once, as the new patch waits its own
      // switching time).
      Port& b = ports_[static_cast<std::size_t>(a.peer)];
      a.peer = b.peer = 0;
      a.settles_at = b.settles_at = settled;
      return settled;
    }
    case OcsChange::Kind::Fail:
      a.failed = true;
      return now;
    case OcsChange::Kind::Repair:
      a.failed = false;
      return now;
  }
  return now;
}

std::vector<OcsPatch> OcsState::patches() const {
  std::vector<OcsPatch> out;
  for (int p = 1; p <= ports(); ++p) {
    const int peer = ports_[static_cast<std::size_t>(p)].peer;
    if (peer > p) out.push_back({p, peer});
  }
  return out;
}

std::vector<int> OcsState::failed_ports() const {
  std::vector<int> out;
  for (int p = 1; p <= ports(); ++p) {
    if (ports_[static_cast<std::size_t>(p)].failed) out.push_back(p);
  }
  return out;
}

OcsPortStatus OcsState::status(int port, Time now) const {
  const Port& p = at(port);
  return {port, p.peer, p.failed, p.settles_at > now};
}

std::vector<OcsChange> OcsState::snapshot() const {
  std::vector<OcsChange> out;
  for (const OcsPatch& patch : patches())
    out.push_back({OcsChange::Kind::Connect, patch.a, patch.b});
  for (const int p : failed_ports())
    out.push_back({OcsChange::Kind::Fail, p, 0});
  return out;
}

std::string change_text(const OcsChange& change) {
  switch (change.kind) {
    case OcsChange::Kind::Connect:
      return fmt::format("connect {} {}", change.a, change.b);
    case OcsChange::Kind::Disconnect:
      return fmt::format("disconnect {}", change.a);
    case OcsChange::Kind::Fail:
      return fmt::format("fail {}", change.a);
    case OcsChange::Kind::Repair:
      return fmt::format("repair {}", change.a);
  }
  return "";
}

OcsChange parse_change(const std::string& text) {
  const auto expected = [&] {
    return Error("", "",
                 fmt::format("expected 'connect A B', 'disconnect A', 'fail A' or 'repair A' "
                             "with port numbers, got {}",
                             quote_input(text)));
  };
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;)
    words.push_back(word);
  const auto port = [&](const std::string& word) {
    int value = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc() || end != word.data() + word.size() || value < 1) throw expected();
    return value;
  };
  if (words.size() == 3 && words[0] == "connect")
    return {OcsChange::Kind::Connect, port(words[1]), port(words[2])};
  if (words.size() != 2) throw expected();
  if (words[0] == "disconnect") return {OcsChange::Kind::Disconnect, port(words[1]), 0};
  if (words[0] == "fail") return {OcsChange::Kind::Fail, port(words[1]), 0};
  if (words[0] == "repair") return {OcsChange::Kind::Repair, port(words[1]), 0};
  throw expected();
}

}  // namespace mfabric::ocs
