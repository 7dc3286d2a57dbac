// DCTCP (RFC 8257) on a TCP NewReno sender, one ACK per data packet.
//
// Sender: slow start from `initial_window` packets, then one packet per window per round trip;
// at most `max_window` bytes in flight. alpha is updated once per window of data (the packets
// sent when the previous window ended): alpha = (1 - g) alpha + g F, F the fraction of packets
// acknowledged with ECN-Echo. The first ECN-Echo of a window cuts the window to
// cwnd (1 - alpha / 2), at most once per window, and ends slow start. Three duplicate ACKs
// retransmit the first missing packet and halve the window (fast recovery, NewReno partial
// ACKs retransmitting the next hole); a retransmission timeout (min_rto doubling per
// consecutive timeout, capped at 64 x) goes back to the first unacknowledged packet with a
// window of one.
//
// Difference from htsim's DCTCP (a TCP source with its own alpha): htsim cuts the window at the
// end of each marked window rather than at the first echo; both cut at most once per round
// trip, and on long transfers the two differ by less than a round trip per cut.
//
// Receiver: keeps out-of-order packets (receive_window.h) and acknowledges each arrival with
// the cumulative point and the arriving packet's CE mark.
//
// The unit of transport `dctcp` (transports.h): its options and their YAML (`simulation.dctcp`),
// their checks and its factory (DctcpSettings), and the transport itself (Dctcp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "net/packet/transport.h"
#include "net/packet/transport_settings.h"
#include "net/packet/transports/receive_window.h"

namespace mfabric::net {

// When DCTCP cuts its window: RFC 8257's at the first ECN-Echo of a window (with the alpha of
// the windows before), or htsim's at the end of each window that saw a mark (with that window's
// alpha folded in).
enum class DctcpVariant { Rfc8257, Htsim };
const char* to_string(DctcpVariant v);

// DCTCP (RFC 8257) over a TCP NewReno sender with an ACK per packet.
struct DctcpOptions {
  DctcpVariant variant = DctcpVariant::Rfc8257;
  // Weight of the newest window's marked fraction in alpha: 1/16 (RFC 8257, section 4.2).
  double g = 1.0 / 16.0;
  // Packets a flow may send before its first ACK: 10 (RFC 6928).
  int initial_window = 10;
  // The receiver's window, bytes: the most a flow has in flight. 4 MiB: above the bandwidth-delay
  // product of every default fabric (400G x 12 us = 600 kB), so it binds only on NVLink.
  Bytes max_window = Bytes::mib(4);
  // Duplicate ACKs that start a fast retransmission; 0 (the default) chooses: 3 (RFC 5681) with
  // per-flow ECMP, kSprayDupacks with packet spraying, which reorders packets by up to the
  // difference between its paths' queues (docs/packet.md, "Routing").
  int dupacks = 0;
  int effective_dupacks(int spray_paths) const {
    return dupacks > 0 ? dupacks : (spray_paths > 1 ? kSprayDupacks : 3);
  }
  static constexpr int kSprayDupacks = 32;
  // Retransmission timeout before backoff: 200 us, a data-centre minimum RTO (the DCTCP paper
  // ran 10 ms; data-centre stacks and simulators use 200 us to 1 ms for 10-400G fabrics).
  Time min_rto = Time::microseconds(200);
};

// Transport `dctcp`: its options from `simulation.dctcp`; no PFC by default.
struct DctcpSettings final : TransportSettings {
  static constexpr std::string_view kName = "dctcp";
  DctcpOptions dctcp;

  std::string_view name() const override { return kName; }
  std::vector<SettingsBlock> blocks() const override;
  void parse(const Fields& simulation) override;
  void check(const PacketBackendOptions& o, const std::string& file,
             const std::string& prefix) const override;
  void check(const PacketBackendOptions& o, const PacketLinkLimits& limits, const std::string& file,
             const std::string& prefix) const override;
  const char* congestion_control_variant() const override { return to_string(dctcp.variant); }
  std::unique_ptr<packet::Transport> make(packet::TransportHost& host,
                                          const PacketBackendOptions& o) const override;
};

}  // namespace mfabric::net

namespace mfabric::net::packet {

class Dctcp final : public Transport {
 public:
  Dctcp(TransportHost& host, const DctcpOptions& options, Bytes mtu);

  const char* name() const override { return "dctcp"; }
  void open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) override;
  void close(FlowSlot f) override;
  bool can_send(FlowSlot f) const override;
  std::int32_t next_packet(FlowSlot f) override;
  bool on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) override;
  void on_ack(FlowSlot f, const Ack& ack) override;
  void on_timer(FlowSlot f) override;
  std::int64_t retransmissions() const override { return retransmissions_; }
  std::int64_t timeouts() const override { return timeouts_; }

  // For tests: the window (packets) and alpha of an open flow.
  double window(FlowSlot f) const { return senders_[static_cast<std::size_t>(f)].cwnd; }
  double alpha(FlowSlot f) const { return senders_[static_cast<std::size_t>(f)].alpha; }

 private:
  struct Sender {
    std::int32_t packets = 0;
    std::int32_t next_new = 0;  // next packet to send in order
    std::int32_t highest = 0;   // one past the highest packet ever sent
    std::int32_t una = 0;       // first packet not acknowledged
    std::int32_t retransmit = -1;
    std::int32_t dupacks = 0;
    std::int32_t recover = 0;     // NewReno: recovery ends when this is acknowledged
    std::int32_t window_end = 0;  // alpha's observation window ends when this is acknowledged
    std::int32_t cwr_end = 0;     // no second cut before this is acknowledged
    std::int32_t acked = 0;       // packets acknowledged in the observation window
    std::int32_t marked = 0;      // of them, with ECN-Echo
    std::int32_t backoff = 0;
    bool in_recovery = false;
    double cwnd = 0;
    double ssthresh = 0;
    double alpha = 1.0;  // RFC 8257's initial value
    Time rto;
  };
  Sender& sender(FlowSlot f) { return senders_[static_cast<std::size_t>(f)]; }
  std::int32_t window_packets(const Sender& s) const;
  void arm_timer(FlowSlot f, const Sender& s);

  TransportHost& host_;
  DctcpOptions o_;
  double max_window_packets_;
  std::vector<Sender> senders_;
  std::vector<ReceiveWindow> receivers_;
  std::int64_t retransmissions_ = 0;
  std::int64_t timeouts_ = 0;
};

}  // namespace mfabric::net::packet
