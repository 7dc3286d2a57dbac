#include "net/packet/transports.h"

#include "net/packet/dctcp.h"
#include "net/packet/irn.h"
#include "net/packet/roce.h"

namespace mfabric::net::packet {

std::unique_ptr<Transport> make_transport(TransportHost& host, const PacketBackendOptions& o) {
  switch (o.transport) {
    case PacketTransport::Dctcp: {
      DctcpOptions dctcp = o.dctcp;
      dctcp.dupacks = dctcp.effective_dupacks(o.spray_paths);
      return std::make_unique<Dctcp>(host, dctcp, o.mtu);
    }
    case PacketTransport::RoceDcqcn:
      return std::make_unique<Roce>(host, o.roce, o.dcqcn, o.mtu, o.header);
    case PacketTransport::Irn:
      return std::make_unique<Irn>(host, o.irn, o.dcqcn, o.mtu, o.header);
  }
  return nullptr;  // not reached: every PacketTransport has a case
}

}  // namespace mfabric::net::packet
