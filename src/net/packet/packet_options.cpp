#include "net/packet/packet_options.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "net/router.h"

namespace mfabric::net {

void check_packet_options(const PacketBackendOptions& o, const std::string& file,
                          const std::string& prefix) {
  const auto field = [&](const char* name) { return prefix + "." + name; };
  if (o.mtu.count() < kMinMtu || o.mtu.count() > kMaxMtu) {
    throw Error(file, field("mtu"),
                fmt::format("between {} and {} bytes, got {}", kMinMtu, kMaxMtu, o.mtu.count()));
  }
  if (o.header.count() < 0 || o.header.count() > 4096) {
    throw Error(file, field("header"),
                fmt::format("between 0 and 4096 bytes, got {}", o.header.count()));
  }
  if (o.ack.count() < 1 || o.ack.count() > 4096) {
    throw Error(file, field("ack"), fmt::format("between 1 and 4096 bytes, got {}", o.ack.count()));
  }
  if (o.buffer.count() < o.mtu.count() + o.header.count()) {
    throw Error(file, field("buffer"),
                fmt::format("at least one packet ({} bytes), got {}",
                            o.mtu.count() + o.header.count(), o.buffer.count()));
  }
  if (o.ecn_threshold.count() < 0) {
    throw Error(file, field("ecn_threshold"),
                fmt::format("not negative, got {}", o.ecn_threshold.count()));
  }
  if (o.spray_paths < 1 || o.spray_paths > kMaxSprayPaths) {
    throw Error(file, field("spray_paths"),
                fmt::format("1 to {} routes, got {}", kMaxSprayPaths, o.spray_paths));
  }
  const std::int64_t packet = o.mtu.count() + o.header.count();
  if (o.pfc_thresholds.xoff.count() < packet) {
    throw Error(file, field("pfc_xoff"),
                fmt::format("at least one packet ({} bytes), got {}", packet,
                            o.pfc_thresholds.xoff.count()));
  }
  if (o.pfc_thresholds.xon.count() < 0 ||
      o.pfc_thresholds.xon.count() >= o.pfc_thresholds.xoff.count()) {
    throw Error(file, field("pfc_xon"),
                fmt::format("between 0 and pfc_xoff ({} bytes), got {}",
                            o.pfc_thresholds.xoff.count(), o.pfc_thresholds.xon.count()));
  }
  if (o.ecn_max.count() != 0 && o.ecn_max.count() <= o.ecn_threshold.count()) {
    throw Error(file, field("ecn_max"),
                fmt::format("0 (a step) or above ecn_threshold ({} bytes), got {}",
                            o.ecn_threshold.count(), o.ecn_max.count()));
  }
  if (!(o.ecn_pmax > 0 && o.ecn_pmax <= 1)) {
    throw Error(file, field("ecn_pmax"), fmt::format("in (0, 1], got {}", o.ecn_pmax));
  }
  o.transport->check(o, file, prefix);
}

std::string flow_size_limit(Bytes size, Bytes mtu) {
  const std::int64_t packets = (size.count() + mtu.count() - 1) / mtu.count();
  const std::string head =
      fmt::format("{} ({} bytes) is {} packets of {} bytes, more than a flow may have ({})",
                  mfabric::to_string(size), size.count(), packets, mtu.count(), kMaxFlowPackets);
  const std::int64_t least_mtu = (size.count() + kMaxFlowPackets - 1) / kMaxFlowPackets;
  if (least_mtu <= kMaxMtu) {
    return fmt::format("{}; an mtu of at least {} bytes carries it", head, least_mtu);
  }
  return fmt::format("{}; even the largest mtu ({} bytes) cannot: a transfer may be at most {}",
                     head, kMaxMtu, mfabric::to_string(Bytes(kMaxFlowPackets * kMaxMtu)));
}

std::optional<PacketLinkLimits> packet_link_limits(const PacketBackendOptions& o,
                                                   const fabric::Topology& t) {
  std::optional<PacketLinkLimits> limits;
  for (const fabric::Link& link : t.links()) {
    if (link.kind != fabric::LinkKind::Cable || !(link.rate.bps() > 0)) continue;
    if (!limits) limits = PacketLinkLimits{link.rate, link.rate, Time::zero()};
    limits->slowest = std::min(limits->slowest, link.rate);
    limits->fastest = std::max(limits->fastest, link.rate);
  }
  if (limits) {
    limits->packet_time =
        std::max(Time::picoseconds(1), transmission_time(o.mtu + o.header, limits->slowest));
  }
  return limits;
}

void check_packet_timer(const std::string& file, const std::string& field, Time value, Time floor,
                        const std::string& why) {
  if (value < floor) {
    throw Error(file, field,
                fmt::format("at least {} ({}), got {}", mfabric::to_string(floor), why,
                            mfabric::to_string(value)));
  }
  if (value > kMaxPacketTimer) {
    throw Error(file, field,
                fmt::format("at most {} (a longer timer never fires in a run), got {}",
                            mfabric::to_string(kMaxPacketTimer), mfabric::to_string(value)));
  }
}

std::string one_packet_at_slowest_link(const PacketBackendOptions& o,
                                       const PacketLinkLimits& limits) {
  return fmt::format("one {}-byte packet (mtu + header) at the slowest network link's {}",
                     o.mtu.count() + o.header.count(), mfabric::to_string(limits.slowest));
}

std::string timeout_floor_reason(const PacketBackendOptions& o, const PacketLinkLimits& limits) {
  return one_packet_at_slowest_link(o, limits) +
         ": a shorter timeout fires again and again before any packet can be acknowledged";
}

void check_packet_options(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                          const std::string& file, const std::string& prefix) {
  o.transport->check(o, limits, file, prefix);
}

void check_packet_options(const PacketBackendOptions& o, const fabric::Topology& t,
                          const std::string& file, const std::string& prefix) {
  check_packet_options(o, file, prefix);
  if (const auto limits = packet_link_limits(o, t)) check_packet_options(o, *limits, file, prefix);
}

}  // namespace mfabric::net
