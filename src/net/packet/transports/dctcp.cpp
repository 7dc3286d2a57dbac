#include "net/packet/transports/dctcp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "net/packet/packet_options.h"

namespace mfabric::net {

namespace {
const std::vector<std::string> kDctcpFields = {"g",       "initial_window", "max_window",
                                               "min_rto", "dupacks",        "variant"};
}  // namespace

const char* to_string(DctcpVariant v) {
  return v == DctcpVariant::Htsim ? "htsim" : "rfc8257";
}

std::vector<SettingsBlock> DctcpSettings::blocks() const {
  return {{"dctcp", "DCTCP settings"}};
}

void DctcpSettings::parse(const Fields& simulation) {
  if (!simulation.has("dctcp")) return;
  const Fields d(simulation.get("dctcp"), simulation.source(), simulation.field("dctcp"),
                 kDctcpFields);
  dctcp.g = d.optional_double("g").value_or(dctcp.g);
  dctcp.initial_window = d.optional_int("initial_window").value_or(dctcp.initial_window);
  dctcp.max_window = d.optional_bytes("max_window").value_or(dctcp.max_window);
  dctcp.min_rto = d.optional_time("min_rto").value_or(dctcp.min_rto);
  dctcp.dupacks = d.optional_int("dupacks").value_or(dctcp.dupacks);
  if (d.has("variant")) {
    const std::string v = *d.optional_string("variant");
    if (v != "rfc8257" && v != "htsim") {
      throw Error(d.source(), d.field("variant"), fmt::format("'rfc8257' or 'htsim', got '{}'", v));
    }
    dctcp.variant = v == "htsim" ? DctcpVariant::Htsim : DctcpVariant::Rfc8257;
  }
}

void DctcpSettings::check(const PacketBackendOptions& o, const std::string& file,
                          const std::string& prefix) const {
  const auto field = [&](const char* name) { return prefix + ".dctcp." + name; };
  if (!(dctcp.g > 0 && dctcp.g <= 1)) {
    throw Error(file, field("g"), fmt::format("in (0, 1], got {}", dctcp.g));
  }
  if (dctcp.initial_window < 1 || dctcp.initial_window > 1000) {
    throw Error(file, field("initial_window"),
                fmt::format("1 to 1000 packets, got {}", dctcp.initial_window));
  }
  if (dctcp.max_window.count() < o.mtu.count()) {
    throw Error(file, field("max_window"),
                fmt::format("at least one MTU ({} bytes), got {}", o.mtu.count(),
                            dctcp.max_window.count()));
  }
  if (dctcp.dupacks < 0 || dctcp.dupacks > 100000) {
    throw Error(file, field("dupacks"),
                fmt::format("1 to 100000 duplicate ACKs (0: automatic), got {}", dctcp.dupacks));
  }
  if (dctcp.min_rto.ps() <= 0) {
    throw Error(file, field("min_rto"), "a positive time");
  }
}

void DctcpSettings::check(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                          const std::string& file, const std::string& prefix) const {
  // DCTCP runs no DCQCN: its retransmission timeout is its one timer.
  check_packet_timer(file, prefix + ".dctcp.min_rto", dctcp.min_rto, limits.packet_time,
                     timeout_floor_reason(o, limits));
}

std::unique_ptr<packet::Transport> DctcpSettings::make(packet::TransportHost& host,
                                                       const PacketBackendOptions& o) const {
  // Packet spraying reorders packets: the duplicate-ACK threshold rises with it.
  DctcpOptions options = dctcp;
  options.dupacks = options.effective_dupacks(o.spray_paths);
  return std::make_unique<packet::Dctcp>(host, options, o.mtu);
}

}  // namespace mfabric::net

namespace mfabric::net::packet {

namespace {
constexpr std::int32_t kMaxBackoff = 6;  // the timeout doubles at most to 64 x
}

Dctcp::Dctcp(TransportHost& host, const DctcpOptions& options, Bytes mtu)
    : host_(host),
      o_(options),
      max_window_packets_(std::max(1.0, std::floor(static_cast<double>(options.max_window.count()) /
                                                   static_cast<double>(mtu.count())))) {}

// A window-based sender: the line rate plays no part (the first port serialises at it).
void Dctcp::open(FlowSlot f, std::int32_t packets, Time rtt, Rate /*line_rate*/) {
  cover_slot(f, senders_, receivers_);
  const auto i = static_cast<std::size_t>(f);
  Sender& s = senders_[i];
  s = Sender{};
  s.packets = packets;
  s.cwnd = std::min<double>(o_.initial_window, max_window_packets_);
  s.ssthresh = max_window_packets_;
  // The timeout covers a loaded round trip: at least min_rto, and four unloaded ones.
  s.rto = std::max(o_.min_rto, rtt * 4);
  receivers_[i].reset(packets);
}

void Dctcp::close(FlowSlot f) {
  receivers_[static_cast<std::size_t>(f)].release();
}

std::int32_t Dctcp::window_packets(const Sender& s) const {
  return static_cast<std::int32_t>(
      std::max(1.0, std::floor(std::min(s.cwnd, max_window_packets_))));
}

bool Dctcp::can_send(FlowSlot f) const {
  const Sender& s = senders_[static_cast<std::size_t>(f)];
  if (s.retransmit >= 0) return true;
  return s.next_new < s.packets && s.next_new - s.una < window_packets(s);
}

void Dctcp::arm_timer(FlowSlot f, const Sender& s) {
  host_.set_timer(f, host_.now() + s.rto * (std::int64_t{1} << s.backoff));
}

std::int32_t Dctcp::next_packet(FlowSlot f) {
  Sender& s = sender(f);
  if (!can_send(f)) return -1;
  std::int32_t seq;
  if (s.retransmit >= 0) {
    seq = s.retransmit;
    s.retransmit = -1;
  } else {
    seq = s.next_new++;
  }
  if (seq < s.highest) {
    ++retransmissions_;
  } else {
    s.highest = seq + 1;
  }
  if (seq == s.una || s.next_new - s.una == 1) arm_timer(f, s);
  return seq;
}

bool Dctcp::on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) {
  ReceiveWindow& r = receivers_[static_cast<std::size_t>(f)];
  const bool was_complete = r.complete();
  r.add(seq);
  ack.cumulative = r.cumulative();
  ack.seq = seq;
  ack.ecn_echo = ce;
  complete = !was_complete && r.complete();
  return true;
}

void Dctcp::on_ack(FlowSlot f, const Ack& ack) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  const std::int32_t newly = std::max(0, ack.cumulative - s.una);
  // DCTCP: the marked fraction of each window of data, and at most one cut per window.
  s.acked += std::max(newly, 1);
  if (ack.ecn_echo) s.marked += std::max(newly, 1);
  if (ack.cumulative >= s.window_end && newly > 0) {
    const double fraction = static_cast<double>(s.marked) / static_cast<double>(s.acked);
    s.alpha = (1.0 - o_.g) * s.alpha + o_.g * fraction;
    // htsim's variant: one cut at the end of each window that saw a mark, with the new alpha.
    if (o_.variant == DctcpVariant::Htsim && s.marked > 0 && !s.in_recovery) {
      s.cwnd = std::max(1.0, s.cwnd * (1.0 - s.alpha / 2.0));
      s.ssthresh = s.cwnd;
    }
    s.acked = 0;
    s.marked = 0;
    s.window_end = s.next_new;
  }
  if (o_.variant == DctcpVariant::Rfc8257 && ack.ecn_echo && ack.cumulative >= s.cwr_end &&
      !s.in_recovery) {
    s.cwnd = std::max(1.0, s.cwnd * (1.0 - s.alpha / 2.0));
    s.ssthresh = s.cwnd;
    s.cwr_end = s.next_new;
  }
  if (newly > 0) {
    s.una = ack.cumulative;
    s.next_new = std::max(s.next_new, s.una);
    s.dupacks = 0;
    s.backoff = 0;
    if (s.in_recovery) {
      if (s.una >= s.recover) {
        s.in_recovery = false;
        s.cwnd = s.ssthresh;
      } else {
        s.retransmit = s.una;  // NewReno partial ACK: the next hole
      }
    } else if (s.cwnd < s.ssthresh) {
      s.cwnd = std::min(s.cwnd + newly, max_window_packets_);
    } else {
      s.cwnd = std::min(s.cwnd + static_cast<double>(newly) / s.cwnd, max_window_packets_);
    }
    if (s.una >= s.packets) {
      host_.set_timer(f, Time::max());
      return;
    }
    // The timer runs while packets are unacknowledged (a flow held with nothing in flight, by a
    // torn-down circuit, must not time out).
    if (s.next_new > s.una || s.retransmit >= 0) {
      arm_timer(f, s);
    } else {
      host_.set_timer(f, Time::max());
    }
  } else if (ack.cumulative == s.una && ack.seq > s.una && ++s.dupacks == o_.effective_dupacks(1) &&
             !s.in_recovery) {
    s.in_recovery = true;
    s.recover = s.highest;
    s.ssthresh = std::max(s.cwnd / 2.0, 2.0);
    s.cwnd = s.ssthresh;
    s.retransmit = s.una;
  }
  if (can_send(f)) host_.wake(f);
}

void Dctcp::on_timer(FlowSlot f) {
  Sender& s = sender(f);
  if (s.una >= s.packets) return;
  // Retransmission timeout: go back to the first unacknowledged packet with a window of one.
  ++timeouts_;
  s.ssthresh = std::max(s.cwnd / 2.0, 2.0);
  s.cwnd = 1.0;
  s.next_new = s.una;
  s.retransmit = -1;
  s.in_recovery = false;
  s.dupacks = 0;
  s.backoff = std::min(s.backoff + 1, kMaxBackoff);
  arm_timer(f, s);
  host_.wake(f);
}

}  // namespace mfabric::net::packet
