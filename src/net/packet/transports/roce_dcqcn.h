// RoCEv2 reliable connection with DCQCN rate control (transport name "roce-dcqcn"): what RDMA
// NICs run over a lossless (PFC) Ethernet fabric.
//
// Receiver: accepts only the packet it expects next and drops any other (a RoCE NIC keeps no
// out-of-order data). It acknowledges every in-order packet (cumulative) and answers the first
// out-of-order arrival after each in-order one with a NACK carrying the expected packet; further
// out-of-order arrivals get no answer, since the sender is already going back. Duplicates (sent
// again after a timeout) are acknowledged again. A packet marked CE makes the DCQCN notification
// point send a CNP (at most one per flow per cnp_interval, dcqcn.h), on its acknowledgement or on
// an answer of its own when the packet gets none.
//
// Sender: sends in order, paced at the DCQCN rate (dcqcn.h). A NACK sends it back to the
// NACKed packet (go-back-N), and a timeout back to the first unacknowledged one: `rto` (at least
// the route's unloaded round trip) after the last progress, or after the first packet sent since
// the last go-back, while packets sent since then are unacknowledged. After a timeout the timer
// waits for that packet to be sent again: a flow has at most one timeout per packet it sends.
// Packets sent again count as retransmissions. There is no congestion window: DCQCN's rate is
// the only limit, as in RoCE NICs.
//
// Pacing and the backend: can_send() says whether the flow has a packet to send, pacing aside, so
// a flow at line rate stays in its port's round robin without timer events; when its pacing time
// has not come, next_packet() returns -1 and sets the flow's timer to wake it then (or at an
// earlier DCQCN rate increase, which may bring the time forward). The flow's one timer carries
// that pacing wake-up and the retransmission timeout, whichever is earlier.
//
// The unit of transport `roce-dcqcn` (transports.h): its options and their YAML
// (`simulation.roce` and `simulation.dcqcn`), their checks, PFC on by default and its factory
// (RoceDcqcnSettings), and the transport itself (Roce).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/packet/transport_settings.h"
#include "net/packet/transports/dcqcn.h"
#include "net/packet/transports/rdma_transport.h"

namespace mfabric::net {

// RoCEv2 reliable connection: go-back-N on NACK or timeout, over PFC.
struct RoceOptions {
  // Go-back-N timeout after the last progress: 1 ms. Lossless (PFC) fabrics rarely need it; NICs
  // configure it as the InfiniBand local ACK timeout 4.096 us x 2^n, and n = 8 is 1.05 ms.
  Time rto = Time::microseconds(1000);
};

// Transport `roce-dcqcn`: RoCE's options from `simulation.roce`, DCQCN's from
// `simulation.dcqcn`; lossless (PFC) switch ports by default, as RoCE NICs expect.
struct RoceDcqcnSettings final : TransportSettings {
  static constexpr std::string_view kName = "roce-dcqcn";
  RoceOptions roce;
  DcqcnOptions dcqcn;

  std::string_view name() const override { return kName; }
  std::vector<SettingsBlock> blocks() const override;
  void parse(const Fields& simulation) override;
  void check(const PacketBackendOptions& o, const std::string& file,
             const std::string& prefix) const override;
  void check(const PacketBackendOptions& o, const PacketLinkLimits& limits, const std::string& file,
             const std::string& prefix) const override;
  bool lossless() const override { return true; }
  const char* congestion_control_variant() const override { return to_string(dcqcn.variant); }
  std::unique_ptr<packet::Transport> make(packet::TransportHost& host,
                                          const PacketBackendOptions& o) const override;
};

}  // namespace mfabric::net

namespace mfabric::net::packet {

class Roce final : public RdmaTransport {
 public:
  Roce(TransportHost& host, const RoceOptions& options, const DcqcnOptions& dcqcn, Bytes mtu,
       Bytes header);

  const char* name() const override { return "roce-dcqcn"; }
  void open(FlowSlot f, std::int32_t packets, Time rtt, Rate line_rate) override;
  void close(FlowSlot f) override;
  bool can_send(FlowSlot f) const override;
  std::int32_t next_packet(FlowSlot f) override;
  bool on_data(FlowSlot f, std::int32_t seq, bool ce, Ack& ack, bool& complete) override;
  void on_ack(FlowSlot f, const Ack& ack) override;
  void on_timer(FlowSlot f) override;

 private:
  struct Sender {
    std::int32_t packets = 0;
    std::int32_t next = 0;      // the packet to send next
    std::int32_t highest = 0;   // one past the highest packet ever sent
    std::int32_t una = 0;       // the first packet not acknowledged
    Time rto = Time::max();     // RoceOptions::rto, or the route's round trip if longer
    Time rto_at = Time::max();  // retransmission timeout; Time::max() with nothing in flight
    bool paced = false;         // next_packet() found the flow early: its timer wakes it
  };
  struct Receiver {
    std::int32_t packets = 0;
    std::int32_t expected = 0;
    bool nacked = false;  // a NACK answered an out-of-order arrival since the last in-order one
  };
  Sender& sender(FlowSlot f) { return senders_[static_cast<std::size_t>(f)]; }
  // The flow's timer at its timeout or, while paced, its pacing wake-up.
  void arm(FlowSlot f) { RdmaTransport::arm(f, sender(f).rto_at, sender(f).paced); }

  RoceOptions o_;
  std::vector<Sender> senders_;
  std::vector<Receiver> receivers_;
};

}  // namespace mfabric::net::packet
