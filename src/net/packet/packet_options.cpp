#include "net/packet/packet_options.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "net/router.h"

namespace mfabric::net {

const char* to_string(PacketTransport t) {
  switch (t) {
    case PacketTransport::Dctcp:
      return "dctcp";
    case PacketTransport::RoceDcqcn:
      return "roce-dcqcn";
    case PacketTransport::Irn:
      return "irn";
  }
  return "?";
}

std::optional<PacketTransport> parse_packet_transport(std::string_view name) {
  if (name == "dctcp") return PacketTransport::Dctcp;
  if (name == "roce-dcqcn") return PacketTransport::RoceDcqcn;
  if (name == "irn") return PacketTransport::Irn;
  return std::nullopt;
}

std::vector<std::string> packet_transport_names() {
  return {"dctcp", "roce-dcqcn", "irn"};
}

const char* to_string(DctcpVariant v) {
  return v == DctcpVariant::Htsim ? "htsim" : "rfc8257";
}

const char* congestion_control_variant(const PacketBackendOptions& o) {
  switch (o.transport) {
    case PacketTransport::Dctcp:
      return to_string(o.dctcp.variant);
    case PacketTransport::RoceDcqcn:
      return to_string(o.dcqcn.variant);
    case PacketTransport::Irn:
      return o.irn.dcqcn ? to_string(o.dcqcn.variant) : "none";
  }
  return "?";
}

const char* to_string(DcqcnVariant v) {
  switch (v) {
    case DcqcnVariant::Paper:
      return "paper";
    case DcqcnVariant::Ns3Rdma:
      return "ns3-rdma";
  }
  return "?";
}

std::optional<DcqcnVariant> parse_dcqcn_variant(std::string_view name) {
  if (name == "paper") return DcqcnVariant::Paper;
  if (name == "ns3-rdma") return DcqcnVariant::Ns3Rdma;
  return std::nullopt;
}

DcqcnOptions DcqcnOptions::for_variant(DcqcnVariant v) {
  DcqcnOptions o;
  o.variant = v;
  if (v == DcqcnVariant::Ns3Rdma) {
    // github.com/bobzhuyb/ns3-rdma, windows/ns-3-dev/mix/config.txt: RP_TIMER 60, BYTE_COUNTER
    // 300000.
    o.rate_timer = Time::microseconds(60);
    o.byte_counter = Bytes(300'000);
  }
  return o;
}

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
  if (!(o.dctcp.g > 0 && o.dctcp.g <= 1)) {
    throw Error(file, field("dctcp.g"), fmt::format("in (0, 1], got {}", o.dctcp.g));
  }
  if (o.dctcp.initial_window < 1 || o.dctcp.initial_window > 1000) {
    throw Error(file, field("dctcp.initial_window"),
                fmt::format("1 to 1000 packets, got {}", o.dctcp.initial_window));
  }
  if (o.dctcp.max_window.count() < o.mtu.count()) {
    throw Error(file, field("dctcp.max_window"),
                fmt::format("at least one MTU ({} bytes), got {}", o.mtu.count(),
                            o.dctcp.max_window.count()));
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
  if (o.dctcp.dupacks < 0 || o.dctcp.dupacks > 100000) {
    throw Error(file, field("dctcp.dupacks"),
                fmt::format("1 to 100000 duplicate ACKs (0: automatic), got {}", o.dctcp.dupacks));
  }
  if (o.dctcp.min_rto.ps() <= 0) {
    throw Error(file, field("dctcp.min_rto"), "a positive time");
  }
  if (!(o.dcqcn.g > 0 && o.dcqcn.g <= 1)) {
    throw Error(file, field("dcqcn.g"), fmt::format("in (0, 1], got {}", o.dcqcn.g));
  }
  if (o.dcqcn.alpha_timer.ps() <= 0) {
    throw Error(file, field("dcqcn.alpha_timer"), "a positive time");
  }
  if (o.dcqcn.rate_timer.ps() <= 0) {
    throw Error(file, field("dcqcn.rate_timer"), "a positive time");
  }
  if (o.dcqcn.byte_counter.count() < 1) {
    throw Error(file, field("dcqcn.byte_counter"),
                fmt::format("at least 1 byte, got {}", o.dcqcn.byte_counter.count()));
  }
  if (o.dcqcn.fast_recovery_steps < 0 || o.dcqcn.fast_recovery_steps > 1000) {
    throw Error(file, field("dcqcn.fast_recovery_steps"),
                fmt::format("0 to 1000, got {}", o.dcqcn.fast_recovery_steps));
  }
  if (!(o.dcqcn.additive_increase.bps() >= 0)) {
    throw Error(file, field("dcqcn.additive_increase"), "a rate, not negative");
  }
  if (!(o.dcqcn.hyper_increase.bps() >= 0)) {
    throw Error(file, field("dcqcn.hyper_increase"), "a rate, not negative");
  }
  if (o.dcqcn.cnp_interval.ps() < 0) {
    throw Error(file, field("dcqcn.cnp_interval"), "a time, not negative");
  }
  if (!(o.dcqcn.min_rate.bps() > 0)) {
    throw Error(file, field("dcqcn.min_rate"), "a positive rate");
  }
  if (o.roce.rto.ps() <= 0) {
    throw Error(file, field("roce.rto"), "a positive time");
  }
  if (o.irn.rto_low.ps() <= 0) {
    throw Error(file, field("irn.rto_low"), "a positive time");
  }
  if (o.irn.rto_high < o.irn.rto_low) {
    throw Error(file, field("irn.rto_high"),
                fmt::format("at least irn.rto_low ({}), got {}", mfabric::to_string(o.irn.rto_low),
                            mfabric::to_string(o.irn.rto_high)));
  }
  if (o.irn.low_packets < 0) {
    throw Error(file, field("irn.low_packets"),
                fmt::format("not negative, got {}", o.irn.low_packets));
  }
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

void check_packet_options(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                          const std::string& file, const std::string& prefix) {
  const auto field = [&](const char* name) { return prefix + "." + name; };
  const std::int64_t wire = o.mtu.count() + o.header.count();
  const std::string one_packet =
      fmt::format("one {}-byte packet (mtu + header) at the slowest network link's {}", wire,
                  mfabric::to_string(limits.slowest));
  // Each timer between `floor` (`why`) and kMaxPacketTimer.
  const auto timer = [&](const char* name, Time value, Time floor, const std::string& why) {
    if (value < floor) {
      throw Error(file, field(name),
                  fmt::format("at least {} ({}), got {}", mfabric::to_string(floor), why,
                              mfabric::to_string(value)));
    }
    if (value > kMaxPacketTimer) {
      throw Error(file, field(name),
                  fmt::format("at most {} (a longer timer never fires in a run), got {}",
                              mfabric::to_string(kMaxPacketTimer), mfabric::to_string(value)));
    }
  };
  const std::string rto_why =
      one_packet +
      ": a shorter timeout fires again and again before any packet can be acknowledged";
  switch (o.transport) {
    case PacketTransport::Dctcp:
      timer("dctcp.min_rto", o.dctcp.min_rto, limits.packet_time, rto_why);
      return;  // DCTCP runs no DCQCN
    case PacketTransport::RoceDcqcn:
      timer("roce.rto", o.roce.rto, limits.packet_time, rto_why);
      break;
    case PacketTransport::Irn:
      timer("irn.rto_low", o.irn.rto_low, limits.packet_time, rto_why);
      timer("irn.rto_high", o.irn.rto_high, limits.packet_time, rto_why);
      if (!o.irn.dcqcn) return;
      break;
  }
  const DcqcnOptions& q = o.dcqcn;
  timer("dcqcn.alpha_timer", q.alpha_timer, limits.packet_time,
        one_packet + ": marks, and so CNPs, come at most once a packet");
  if (q.variant == DcqcnVariant::Ns3Rdma) {
    timer("dcqcn.rate_timer", q.rate_timer, limits.packet_time * 2,
          "twice " + one_packet +
              ": the ns3-rdma variant halves the timer in hyper increase, and pacing changes the "
              "rate at most once a packet");
  } else {
    timer("dcqcn.rate_timer", q.rate_timer, limits.packet_time,
          one_packet + ": pacing changes the rate at most once a packet");
  }
  // 0 is a CNP for every marked packet; a flow's packets arrive at most once a packet time, so
  // an interval between 0 and that is 0 written another way.
  if (q.cnp_interval != Time::zero()) {
    timer("dcqcn.cnp_interval", q.cnp_interval, limits.packet_time,
          one_packet +
              ": a flow's packets arrive at most once a packet; 0 sends a CNP for every "
              "marked packet");
  }
  if (q.byte_counter.count() < wire) {
    throw Error(file, field("dcqcn.byte_counter"),
                fmt::format("at least one packet on the wire, {} bytes (mtu + header): the "
                            "counter advances once a packet sent, got {}",
                            wire, q.byte_counter.count()));
  }
  const Rate fastest = limits.fastest;
  if (q.min_rate < fabric::kMinLinkRate || q.min_rate > fastest) {
    throw Error(file, field("dcqcn.min_rate"),
                fmt::format("between {} (the slowest rate a link may have) and the fastest "
                            "network link's {} (no flow's line rate is higher: a floor above "
                            "it would never let DCQCN cut), got {}",
                            mfabric::to_string(fabric::kMinLinkRate), mfabric::to_string(fastest),
                            mfabric::to_string(q.min_rate)));
  }
  const Rate least_step = fastest * kMinIncreaseFraction;
  for (const auto& [name, step] : {std::pair{"dcqcn.additive_increase", q.additive_increase},
                                   std::pair{"dcqcn.hyper_increase", q.hyper_increase}}) {
    if (step < least_step || step > fastest) {
      throw Error(file, field(name),
                  fmt::format("between {} (a millionth of the fastest network link's {}: "
                              "with smaller steps a cut flow needs more than a million "
                              "rate-increase steps to climb back) and {} (one step to the line "
                              "rate), got {}",
                              mfabric::to_string(least_step), mfabric::to_string(fastest),
                              mfabric::to_string(fastest), mfabric::to_string(step)));
    }
  }
}

void check_packet_options(const PacketBackendOptions& o, const fabric::Topology& t,
                          const std::string& file, const std::string& prefix) {
  check_packet_options(o, file, prefix);
  if (const auto limits = packet_link_limits(o, t)) check_packet_options(o, *limits, file, prefix);
}

}  // namespace mfabric::net
