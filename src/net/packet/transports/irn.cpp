#include "net/packet/transports/irn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

std::vector<SettingsBlock> IrnSettings::blocks() const {
  return {dcqcn_block(), {"irn", "IRN settings"}};
}

void IrnSettings::parse(const Fields& simulation) {
  parse_dcqcn(simulation, dcqcn);
  if (!simulation.has("irn")) return;
  const Fields d(simulation.get("irn"), simulation.source(), simulation.field("irn"),
                 {"rto_low", "rto_high", "low_packets", "dcqcn"});
  irn.rto_low = d.optional_time("rto_low").value_or(irn.rto_low);
  irn.rto_high = d.optional_time("rto_high").value_or(irn.rto_high);
  irn.low_packets = d.optional_int("low_packets").value_or(irn.low_packets);
  irn.dcqcn = d.optional_bool("dcqcn").value_or(irn.dcqcn);
}

void IrnSettings::check(const PacketBackendOptions& /*o*/, const std::string& file,
                        const std::string& prefix) const {
  const auto field = [&](const char* name) { return prefix + ".irn." + name; };
  check_dcqcn(dcqcn, file, prefix);
  if (irn.rto_low.ps() <= 0) {
    throw Error(file, field("rto_low"), "a positive time");
  }
  if (irn.rto_high < irn.rto_low) {
    throw Error(file, field("rto_high"),
                fmt::format("at least irn.rto_low ({}), got {}", mfabric::to_string(irn.rto_low),
                            mfabric::to_string(irn.rto_high)));
  }
  if (irn.low_packets < 0) {
    throw Error(file, field("low_packets"), fmt::format("not negative, got {}", irn.low_packets));
  }
}

void IrnSettings::check(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                        const std::string& file, const std::string& prefix) const {
  const std::string why = timeout_floor_reason(o, limits);
  check_packet_timer(file, prefix + ".irn.rto_low", irn.rto_low, limits.packet_time, why);
  check_packet_timer(file, prefix + ".irn.rto_high", irn.rto_high, limits.packet_time, why);
  if (irn.dcqcn) check_dcqcn(dcqcn, o, limits, file, prefix);
}

void IrnSettings::check_used(const Fields& simulation) const {
  if (simulation.has("dcqcn") && !irn.dcqcn) {
    throw Error(simulation.source(), simulation.field("dcqcn"),
                "DCQCN settings, but simulation.irn.dcqcn is false (IRN without DCQCN), so they "
                "would be ignored: remove them or turn irn.dcqcn on");
  }
}

std::unique_ptr<packet::Transport> IrnSettings::make(packet::TransportHost& host,
                                                     const PacketBackendOptions& o) const {
  return std::make_unique<packet::Irn>(host, irn, dcqcn, o.mtu, o.header);
}

}  // namespace mfabric::net

namespace mfabric::net::packet {

Irn::Irn(TransportHost& host, const IrnOptions& options, const DcqcnOptions& dcqcn, Bytes mtu,
         Bytes header)
    : RdmaTransport(host, dcqcn, mtu, header, /*dcqcn_paced=*/options.dcqcn), o_(options) {}

void Irn::open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) {
  cover_slot(f, senders_, receivers_);
  const auto i = static_cast<std::size_t>(f);
  Sender& s = senders_[i];
  s = Sender{};
  s.packets = packets;
  // A timeout shorter than the route's unloaded round trip would count every packet lost before
  // its acknowledgement could come back (docs/packet.md, "Limits of the settings").
  s.rtt = rtt;
  // BDP-FC. Without a line rate (no link of the route up when the flow opened) there is no
  // bandwidth-delay product to count: the flow is not capped rather than capped at one packet
  // for its whole life.
  if (line_rate.bps() > 0) {
    const double bdp_packets = std::ceil(line_rate.bps() * rtt.seconds() / wire_.bits());
    s.cap = static_cast<std::int32_t>(std::clamp(bdp_packets, 1.0, static_cast<double>(packets)));
  } else {
    s.cap = packets;
  }
  receivers_[i].reset(packets);
  open_rate(f, line_rate);
}

void Irn::close(FlowSlot f) {
  receivers_[static_cast<std::size_t>(f)].release();
  std::vector<std::uint64_t>().swap(sender(f).acked);
}

bool Irn::acked(const Sender& s, std::int32_t seq) {
  if (seq < s.una) return true;
  if (s.acked.empty()) return false;
  return (s.acked[static_cast<std::size_t>(seq) / 64] >> (seq % 64)) & 1U;
}

void Irn::mark_acked(Sender& s, std::int32_t seq) {
  if (seq < s.una || seq >= s.packets) return;
  if (s.acked.empty()) s.acked.assign((static_cast<std::size_t>(s.packets) + 63) / 64, 0);
  s.acked[static_cast<std::size_t>(seq) / 64] |= std::uint64_t{1} << (seq % 64);
}

void Irn::skip_acked(Sender& s) {
  s.retx_next = std::max(s.retx_next, s.una);
  while (s.retx_next < s.retx_end && acked(s, s.retx_next))
    ++s.retx_next;
}

bool Irn::can_send(FlowSlot f) const {
  const Sender& s = senders_[static_cast<std::size_t>(f)];
  if (retransmission_pending(s)) return true;
  return s.next_new < s.packets && s.next_new - s.una < s.cap;
}

Time Irn::rto_deadline(const Sender& s) const {
  const std::int32_t in_flight = s.next_new - s.una;
  return s.rto_start + std::max(s.rtt, in_flight <= o_.low_packets ? o_.rto_low : o_.rto_high);
}

std::int32_t Irn::next_packet(FlowSlot f) {
  Sender& s = sender(f);
  if (!can_send(f)) return -1;
  const Time now = host_.now();
  if (wait_for_pacing(f, s.paced, timeout(s), now)) return -1;
  s.paced = false;
  std::int32_t seq;
  if (retransmission_pending(s)) {
    seq = s.retx_next++;
    skip_acked(s);
    ++retransmissions_;
  } else {
    seq = s.next_new++;
  }
  sent(f, now);
  if (!s.rto_running) {
    s.rto_running = true;
    s.rto_start = now;
  }
  // Every packet may move the timeout (RTO_low or RTO_high by packets in flight) and ends any
  // pacing wait.
  arm(f);
  return seq;
}

bool Irn::on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) {
  ReceiveWindow& r = receivers_[static_cast<std::size_t>(f)];
  const bool was_complete = r.complete();
  const std::int32_t expected = r.cumulative();
  r.add(seq);
  ack.cumulative = r.cumulative();
  ack.seq = seq;
  ack.ecn_echo = ce;
  ack.nack = seq > expected;
  ack.cnp = cnp(f, ce, host_.now());
  complete = !was_complete && r.complete();
  return true;
}

void Irn::on_ack(FlowSlot f, const Ack& ack) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  const Time now = host_.now();
  rate_feedback(f, ack, now);
  mark_acked(s, ack.seq);
  s.sacked_end = std::max(s.sacked_end, ack.seq + 1);
  if (ack.cumulative > s.una) {
    s.una = std::min(ack.cumulative, s.packets);
    s.rto_start = now;
  }
  if (ack.nack && !s.in_recovery) {
    s.in_recovery = true;
    s.recover = s.next_new;
    s.retx_next = s.una;
  }
  if (s.in_recovery) {
    s.retx_end = std::max(s.retx_end, s.sacked_end);
    skip_acked(s);
    if (s.una >= s.recover) {
      if (retransmission_pending(s)) {
        s.recover = s.next_new;  // holes found during this recovery: the next one repairs them
      } else {
        s.in_recovery = false;
      }
    }
  }
  if (s.una >= s.packets) {
    s.paced = false;
    s.rto_running = false;
    std::vector<std::uint64_t>().swap(s.acked);
    host_.set_timer(f, Time::max());
    return;
  }
  if (s.una == s.next_new) s.rto_running = false;  // nothing in flight
  after_ack(f, s.paced, timeout(s), now);
}

void Irn::on_timer(FlowSlot f) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  const Time now = host_.now();
  catch_up(f, now);
  bool wake = false;
  if (s.rto_running && rto_deadline(s) <= now) {
    ++timeouts_;
    s.in_recovery = true;
    s.recover = s.next_new;
    s.retx_next = s.una;
    s.retx_end = s.next_new;
    skip_acked(s);
    // Every packet in flight now counts as lost: the timer starts again when the first is sent
    // again (next_packet()), so that there is at most one timeout per packet sent. Running on
    // while the flow waits for its pacing time, it would fire once per RTO with nothing sent.
    s.rto_running = false;
    wake = true;
  }
  after_timer(f, s.paced, timeout(s), now, wake);
}

}  // namespace mfabric::net::packet
