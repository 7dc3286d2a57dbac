// What the RDMA transports (RoCE, roce_dcqcn.h; IRN, irn.h) share: DCQCN at the sender when it
// paces the flow (always for RoCE, with IrnOptions::dcqcn for IRN), the CNP notification point at
// the receiver, one timer per flow for the retransmission timeout and the pacing wake-up, and the
// counters. The loss recovery (go-back-N, selective repeat) is each transport's own.
#pragma once

#include <cstdint>

#include "net/packet/transport.h"
#include "net/packet/transports/dcqcn.h"

namespace mfabric::net::packet {

class RdmaTransport : public Transport {
 public:
  std::int64_t retransmissions() const override { return retransmissions_; }
  std::int64_t timeouts() const override { return timeouts_; }
  // The flows' DCQCN state (rates, alpha), for tests and statistics (unused when not paced).
  const DcqcnRate& rate_control() const { return rate_; }

 protected:
  // dcqcn_paced: whether DCQCN paces the senders and the receivers send CNPs.
  RdmaTransport(TransportHost& host, const DcqcnOptions& dcqcn, Bytes mtu, Bytes header,
                bool dcqcn_paced);

  // A new flow in slot f starting at the route's line rate.
  void open_rate(FlowSlot f, Rate line_rate);
  // next_packet()'s gate: whether DCQCN holds the flow's next packet back now; if so the flow
  // is `paced` and its timer set to wake it (or at `timeout`, if earlier).
  bool wait_for_pacing(FlowSlot f, bool& paced, Time timeout, Time now);
  // A packet of the flow left now.
  void sent(FlowSlot f, Time now);
  // An acknowledgement came back: DCQCN catches up and takes its CNP, if any.
  void rate_feedback(FlowSlot f, const Ack& ack, Time now);
  // The flow's timer fired: DCQCN catches up.
  void catch_up(FlowSlot f, Time now);
  // At the receiver: whether this arrival's answer carries a CNP.
  bool cnp(FlowSlot f, bool ce, Time now);
  // Ends a pacing wait whose time has come: true if it did (`paced` becomes false).
  bool pacing_over(FlowSlot f, bool& paced, Time now) const;
  // The flow's timer at its earliest deadline: `timeout`, and while paced the pacing time or
  // DCQCN's next rate increase (which may bring that time forward).
  void arm(FlowSlot f, Time timeout, bool paced);
  // The end of on_ack() and on_timer() while the flow has data left: ends a pacing wait that is
  // over, sets the timer (`timeout`: the retransmission deadline, Time::max() for none) and wakes
  // the flow if it may send: after an acknowledgement whenever it is not paced, after a timer
  // when the timer did something (`woken`: a timeout went back) or the pacing wait ended.
  void after_ack(FlowSlot f, bool& paced, Time timeout, Time now);
  void after_timer(FlowSlot f, bool& paced, Time timeout, Time now, bool woken);

  TransportHost& host_;
  Bytes wire_;  // a full packet on the wire: what pacing (and IRN's BDP cap) counts
  std::int64_t retransmissions_ = 0;
  std::int64_t timeouts_ = 0;

 private:
  bool dcqcn_paced_;
  DcqcnRate rate_;
  DcqcnNotificationPoint notification_;
};

}  // namespace mfabric::net::packet
