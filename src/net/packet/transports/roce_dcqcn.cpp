#include "net/packet/transports/roce_dcqcn.h"

#include <algorithm>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

std::vector<SettingsBlock> RoceDcqcnSettings::blocks() const {
  return {dcqcn_block(), {"roce", "RoCE settings"}};
}

void RoceDcqcnSettings::parse(const Fields& simulation) {
  parse_dcqcn(simulation, dcqcn);
  if (simulation.has("roce")) {
    const Fields d(simulation.get("roce"), simulation.source(), simulation.field("roce"), {"rto"});
    roce.rto = d.optional_time("rto").value_or(roce.rto);
  }
}

void RoceDcqcnSettings::check(const PacketBackendOptions& /*o*/, const std::string& file,
                              const std::string& prefix) const {
  check_dcqcn(dcqcn, file, prefix);
  if (roce.rto.ps() <= 0) {
    throw Error(file, prefix + ".roce.rto", "a positive time");
  }
}

void RoceDcqcnSettings::check(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                              const std::string& file, const std::string& prefix) const {
  check_packet_timer(file, prefix + ".roce.rto", roce.rto, limits.packet_time,
                     timeout_floor_reason(o, limits));
  check_dcqcn(dcqcn, o, limits, file, prefix);
}

std::unique_ptr<packet::Transport> RoceDcqcnSettings::make(packet::TransportHost& host,
                                                           const PacketBackendOptions& o) const {
  return std::make_unique<packet::Roce>(host, roce, dcqcn, o.mtu, o.header);
}

}  // namespace mfabric::net

namespace mfabric::net::packet {

Roce::Roce(TransportHost& host, const RoceOptions& options, const DcqcnOptions& dcqcn, Bytes mtu,
           Bytes header)
    : RdmaTransport(host, dcqcn, mtu, header, /*dcqcn_paced=*/true), o_(options) {}

// The timeout is RoceOptions::rto, a NIC's configured constant (the InfiniBand local ACK
// timeout), not an estimate; but never shorter than the route's unloaded round trip: a shorter
// one times out every packet before its acknowledgement can come back, and go-back-N then sends
// the flow again and again (docs/packet.md, "Limits of the settings").
void Roce::open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) {
  cover_slot(f, senders_, receivers_);
  const auto i = static_cast<std::size_t>(f);
  senders_[i] = Sender{};
  senders_[i].packets = packets;
  senders_[i].rto = std::max(o_.rto, rtt);
  receivers_[i] = Receiver{};
  receivers_[i].packets = packets;
  open_rate(f, line_rate);
}

// Nothing to release: a RoCE receiver keeps no out-of-order data.
void Roce::close(FlowSlot /*f*/) {}

bool Roce::can_send(FlowSlot f) const {
  const Sender& s = senders_[static_cast<std::size_t>(f)];
  return s.next < s.packets;
}

std::int32_t Roce::next_packet(FlowSlot f) {
  Sender& s = sender(f);
  if (!can_send(f)) return -1;
  const Time now = host_.now();
  if (wait_for_pacing(f, s.paced, s.rto_at, now)) return -1;
  const bool was_paced = s.paced;
  s.paced = false;
  const std::int32_t seq = s.next++;
  if (seq < s.highest) {
    ++retransmissions_;
  } else {
    s.highest = seq + 1;
  }
  sent(f, now);
  if (s.rto_at == Time::max()) {
    s.rto_at = now + s.rto;
    arm(f);
  } else if (was_paced) {
    arm(f);  // the pacing deadline is gone
  }
  return seq;
}

bool Roce::on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) {
  Receiver& r = receivers_[static_cast<std::size_t>(f)];
  ack.seq = seq;
  ack.ecn_echo = ce;
  ack.cnp = cnp(f, ce, host_.now());
  complete = false;
  if (seq == r.expected) {
    ++r.expected;
    r.nacked = false;
    ack.cumulative = r.expected;
    complete = r.expected == r.packets;
    return true;
  }
  ack.cumulative = r.expected;
  if (seq < r.expected) return true;  // a duplicate: acknowledged again
  // Out of order: dropped. The first such arrival is NACKed; the others only carry a CNP.
  if (!r.nacked) {
    r.nacked = true;
    ack.nack = true;
    return true;
  }
  return ack.cnp;
}

void Roce::on_ack(FlowSlot f, const Ack& ack) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  const Time now = host_.now();
  rate_feedback(f, ack, now);
  if (ack.cumulative > s.una) {
    s.una = std::min(ack.cumulative, s.packets);
    s.next = std::max(s.next, s.una);
    s.rto_at = now + s.rto;
  }
  // Go-back-N: everything from the NACKed packet on is sent again.
  if (ack.nack && ack.cumulative < s.next) s.next = ack.cumulative;
  // The timeout covers packets in flight: once all those sent since the last go-back are
  // acknowledged it waits for the next one to be sent (next_packet() restarts it). A timer
  // running while the flow waits for its pacing time would fire again and again with nothing
  // on the wire, once per rto for as long as DCQCN holds the rate down.
  if (s.una >= s.next) s.rto_at = Time::max();
  if (s.una >= s.packets) {
    s.paced = false;
    host_.set_timer(f, Time::max());
    return;
  }
  after_ack(f, s.paced, s.rto_at, now);
}

void Roce::on_timer(FlowSlot f) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  const Time now = host_.now();
  catch_up(f, now);
  bool wake = false;
  if (s.rto_at <= now) {
    // Go back to the first unacknowledged packet; the timer starts again when it is sent, so
    // that there is at most one timeout per packet sent, however short rto is.
    ++timeouts_;
    s.next = s.una;
    s.rto_at = Time::max();
    wake = true;
  }
  after_timer(f, s.paced, s.rto_at, now, wake);
}

}  // namespace mfabric::net::packet
