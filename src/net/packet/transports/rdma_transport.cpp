#include "net/packet/transports/rdma_transport.h"

#include <algorithm>

namespace mfabric::net::packet {

RdmaTransport::RdmaTransport(TransportHost& host, const DcqcnOptions& dcqcn, Bytes mtu,
                             Bytes header, bool dcqcn_paced)
    : host_(host),
      wire_(mtu + header),
      dcqcn_paced_(dcqcn_paced),
      rate_(dcqcn),
      notification_(dcqcn.cnp_interval) {}

void RdmaTransport::open_rate(FlowSlot f, Rate line_rate) {
  if (dcqcn_paced_) rate_.open(f, line_rate);
  notification_.open(f);
}

bool RdmaTransport::wait_for_pacing(FlowSlot f, bool& paced, Time timeout, Time now) {
  if (!dcqcn_paced_) return false;
  rate_.advance(f, now);
  if (rate_.next_send(f) <= now) return false;
  paced = true;
  arm(f, timeout, paced);
  return true;
}

void RdmaTransport::sent(FlowSlot f, Time now) {
  if (dcqcn_paced_) rate_.on_sent(f, wire_, now);
}

void RdmaTransport::rate_feedback(FlowSlot f, const Ack& ack, Time now) {
  if (!dcqcn_paced_) return;
  rate_.advance(f, now);
  if (ack.cnp) rate_.on_cnp(f, now);
}

void RdmaTransport::catch_up(FlowSlot f, Time now) {
  if (dcqcn_paced_) rate_.advance(f, now);
}

bool RdmaTransport::cnp(FlowSlot f, bool ce, Time now) {
  return dcqcn_paced_ && notification_.on_arrival(f, ce, now);
}

bool RdmaTransport::pacing_over(FlowSlot f, bool& paced, Time now) const {
  if (!paced || rate_.next_send(f) > now) return false;
  paced = false;
  return true;
}

void RdmaTransport::arm(FlowSlot f, Time timeout, bool paced) {
  Time at = timeout;
  if (paced) at = std::min({at, rate_.next_send(f), rate_.next_deadline(f)});
  host_.set_timer(f, at);
}

void RdmaTransport::after_ack(FlowSlot f, bool& paced, Time timeout, Time now) {
  // A CNP may have pushed the pacing time back, an increase brought it forward.
  pacing_over(f, paced, now);
  arm(f, timeout, paced);
  if (!paced && can_send(f)) host_.wake(f);
}

void RdmaTransport::after_timer(FlowSlot f, bool& paced, Time timeout, Time now, bool woken) {
  if (pacing_over(f, paced, now)) woken = true;
  arm(f, timeout, paced);
  if (woken && can_send(f)) host_.wake(f);
}

}  // namespace mfabric::net::packet
