#include "net/backend.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "net/link_table.h"

namespace mfabric::net {

void check_transfer(const net::Transfer& t) {
  if (t.size.count() < 0) {
    throw Error("", "transfer", fmt::format("size must not be negative, got {}", t.size.count()));
  }
  if (t.latency_hops < 0) {
    throw Error("", "transfer",
                fmt::format("latency_hops must not be negative, got {}", t.latency_hops));
  }
}

void check_link_rate(const LinkTable& links, fabric::LinkId link, Rate rate) {
  if (link < 0 || static_cast<std::size_t>(link) >= links.size()) {
    throw Error("", "link", fmt::format("no link {} in the topology", link));
  }
  if (links.is_circuit(link) && !links.connected(link)) {
    throw Error("", "link", fmt::format("link {} is a circuit slot with no circuit", link));
  }
  if (!(rate.bps() >= 0) || !std::isfinite(rate.bps())) {
    throw Error("", "link",
                fmt::format("rate must be finite and not negative, got {}", rate.bps()));
  }
}

std::vector<TransferId> Backend::start_coflow(std::span<const net::Transfer> transfers,
                                              std::vector<DoneCallback> on_done) {
  std::vector<TransferId> ids;
  ids.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i)
    ids.push_back(start(transfers[i], std::move(on_done.at(i))));
  return ids;
}

TimelineRecorder& require_timeline(Backend& backend) {
  TimelineRecorder* timeline = backend.timeline();
  if (timeline == nullptr) {
    throw Error("", "simulation.backend",
                "this network backend does not count link utilisation over time");
  }
  return *timeline;
}

Circuits& require_circuits(Backend& backend) {
  Circuits* circuits = backend.circuits();
  if (circuits == nullptr) {
    throw Error("", "simulation.backend", "this network backend does not model optical circuits");
  }
  return *circuits;
}

}  // namespace mfabric::net
