// PFC at a switch's inputs (docs/packet.md, "PFC"): per upstream port, the bytes the switch holds
// that came from it. At xoff the switch asks the upstream port to pause, at xon to resume; a
// packet beyond xoff plus the link's headroom (what may still arrive after a pause is asked:
// a round trip of the link's latency at its rate, and two packets) is lost, which only thresholds
// set wrong allow. The backend sends the pause and resume frames this decides.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/units.h"
#include "net/packet/port.h"

namespace mfabric::net::packet {

class PfcIngress {
 public:
  PfcIngress(Bytes xoff, Bytes xon, Bytes packet_wire)
      : xoff_(xoff.count()), xon_(xon.count()), packet_wire_(packet_wire.count()) {}

  std::int64_t headroom(const Port& up) const {
    const double round_trip_bytes =
        up.ps_per_byte > 0 ? 2.0 * static_cast<double>(up.prop_ps) / up.ps_per_byte : 0.0;
    return static_cast<std::int64_t>(std::ceil(round_trip_bytes)) + 2 * packet_wire_;
  }
  // Whether a packet of `wire` bytes from `up` fits what the switch keeps for that input.
  bool fits(const Port& up, std::int64_t wire) const {
    return up.held_downstream + wire <= xoff_ + headroom(up);
  }
  // The switch holds `wire` bytes more from `up`; true when `up` must now be asked to pause.
  bool hold(Port& up, std::int64_t wire) const {
    up.held_downstream += wire;
    if (up.pause_requested || up.held_downstream < xoff_) return false;
    up.pause_requested = true;
    return true;
  }
  // The switch no longer holds `bytes` from `up`; true when `up` may now resume.
  bool release(Port& up, std::int64_t bytes) const {
    up.held_downstream -= bytes;
    if (!up.pause_requested || up.held_downstream > xon_) return false;
    up.pause_requested = false;
    return true;
  }

 private:
  std::int64_t xoff_;
  std::int64_t xon_;
  std::int64_t packet_wire_;  // a full packet on the wire (mtu + header)
};

}  // namespace mfabric::net::packet
