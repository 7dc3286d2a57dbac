// IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018; transport name
// "irn"): RDMA without PFC, through selective retransmission and a cap on packets in flight.
//
// Receiver: keeps out-of-order packets (receive_window.h). It acknowledges an in-order packet
// (or a duplicate) with the cumulative point and the packet's number, and answers an
// out-of-order one with a NACK carrying the cumulative point and the packet's number (a
// selective acknowledgement of that one packet). With DCQCN on, a packet marked CE makes the
// notification point add a CNP (at most one per flow per cnp_interval, dcqcn.h).
//
// Sender: keeps which packets are acknowledged, cumulatively or selectively (a bitmap, allocated
// at the first selective acknowledgement beyond the cumulative point).
//   - Loss recovery starts at a NACK and ends once the cumulative point passes the packets sent
//     before it started. In recovery a packet is lost when it is not acknowledged and a later one
//     is (the path delivers in order); lost packets are sent again, each once, before any new
//     data. Holes still unrepaired when recovery would end start a new recovery.
//   - BDP-FC: a new packet only while fewer than ceil(line rate x rtt / wire packet) packets,
//     counted from the first unacknowledged one, are in flight (rtt and line rate from open()).
//   - Timeouts: RTO_low after the last progress while at most low_packets packets are in flight
//     (sent, counted from the first unacknowledged), RTO_high otherwise, either at least the
//     route's unloaded round trip; a timeout counts every packet not acknowledged as lost and
//     starts a recovery, which sends them again in order. A retransmission that is lost again is
//     recovered this way. After a timeout the timer starts again with the first packet sent: at
//     most one timeout per packet sent.
//   - With IrnOptions::dcqcn, packets are paced at the DCQCN rate as in roce_dcqcn.h:
//     can_send() says whether there is a packet to send, pacing aside, and next_packet() returns
//     -1 and sets the flow's timer when the pacing time has not come. The flow's one timer
//     carries the pacing wake-up and the timeout, whichever is earlier.
// Losses do not change the rate: only CNPs do, as in the paper's IRN over DCQCN.
//
// The unit of transport `irn` (transports.h): its options and their YAML (`simulation.irn` and
// `simulation.dcqcn`), their checks and its factory (IrnSettings), and the transport (Irn).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/packet/transport_settings.h"
#include "net/packet/transports/dcqcn.h"
#include "net/packet/transports/rdma_transport.h"
#include "net/packet/transports/receive_window.h"

namespace mfabric::net {

// IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018): selective
// retransmission and at most a bandwidth-delay product in flight, without PFC.
struct IrnOptions {
  // Timeouts, the paper's: RTO_low = 100 us while at most N = 3 packets are in
  // flight (a small message's tail loss is found quickly), RTO_high = 320 us otherwise.
  Time rto_low = Time::microseconds(100);
  Time rto_high = Time::microseconds(320);
  int low_packets = 3;
  // DCQCN rate control on top: the paper evaluates IRN with and without it; on by default, so
  // that IRN differs from roce-dcqcn only in loss recovery and BDP-FC.
  bool dcqcn = true;
};

// Transport `irn`: IRN's options from `simulation.irn`, DCQCN's from `simulation.dcqcn` (used
// while irn.dcqcn is on); no PFC by default.
struct IrnSettings final : TransportSettings {
  static constexpr std::string_view kName = "irn";
  IrnOptions irn;
  DcqcnOptions dcqcn;

  std::string_view name() const override { return kName; }
  std::vector<SettingsBlock> blocks() const override;
  void parse(const Fields& simulation) override;
  void check(const PacketBackendOptions& o, const std::string& file,
             const std::string& prefix) const override;
  void check(const PacketBackendOptions& o, const PacketLinkLimits& limits, const std::string& file,
             const std::string& prefix) const override;
  void check_used(const Fields& simulation) const override;
  const char* congestion_control_variant() const override {
    return irn.dcqcn ? to_string(dcqcn.variant) : "none";
  }
  std::unique_ptr<packet::Transport> make(packet::TransportHost& host,
                                          const PacketBackendOptions& o) const override;
};

}  // namespace mfabric::net

namespace mfabric::net::packet {

class Irn final : public RdmaTransport {
 public:
  Irn(TransportHost& host, const IrnOptions& options, const DcqcnOptions& dcqcn, Bytes mtu,
      Bytes header);

  const char* name() const override { return "irn"; }
  void open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) override;
  void close(FlowSlot f) override;
  bool can_send(FlowSlot f) const override;
  std::int32_t next_packet(FlowSlot f) override;
  bool on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) override;
  void on_ack(FlowSlot f, const Ack& ack) override;
  void on_timer(FlowSlot f) override;

  // BDP-FC's cap on an open flow's packets in flight.
  std::int32_t bdp_cap(FlowSlot f) const { return senders_[static_cast<std::size_t>(f)].cap; }

 private:
  struct Sender {
    std::int32_t packets = 0;
    std::int32_t next_new = 0;    // the next packet never sent
    std::int32_t una = 0;         // the first packet not acknowledged
    std::int32_t sacked_end = 0;  // one past the highest packet acknowledged
    std::int32_t cap = 1;         // BDP-FC, packets
    // Recovery: the packets below retx_end not acknowledged are lost; retx_next is the next of
    // them to send again (earlier ones were sent again already); recovery ends when una reaches
    // `recover`.
    bool in_recovery = false;
    std::int32_t recover = 0;
    std::int32_t retx_next = 0;
    std::int32_t retx_end = 0;
    bool rto_running = false;  // packets are in flight; the timeout counts from rto_start
    Time rto_start;
    Time rtt;                          // the route's unloaded round trip: the shortest timeout
    bool paced = false;                // next_packet() found the flow early: its timer wakes it
    std::vector<std::uint64_t> acked;  // selectively acknowledged packets; empty until the first
  };
  Sender& sender(FlowSlot f) { return senders_[static_cast<std::size_t>(f)]; }
  static bool acked(const Sender& s, std::int32_t seq);
  static void mark_acked(Sender& s, std::int32_t seq);
  // Moves retx_next past the packets acknowledged since it was set.
  static void skip_acked(Sender& s);
  static bool retransmission_pending(const Sender& s) {
    return s.in_recovery && s.retx_next < s.retx_end;
  }
  Time rto_deadline(const Sender& s) const;
  // The retransmission deadline while packets are in flight, else Time::max().
  Time timeout(const Sender& s) const { return s.rto_running ? rto_deadline(s) : Time::max(); }
  void arm(FlowSlot f) { RdmaTransport::arm(f, timeout(sender(f)), sender(f).paced); }

  IrnOptions o_;
  std::vector<Sender> senders_;
  std::vector<ReceiveWindow> receivers_;
};

}  // namespace mfabric::net::packet
