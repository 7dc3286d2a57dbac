#include "config/packet_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "net/packet/packet_options.h"
#include "net/packet/transports.h"

namespace mfabric::config {
namespace {

// Settings of the packet backend only (docs/network.md, "Packet backend"), besides the blocks
// the transports read (net/packet/transports.h).
const std::vector<std::string> kPacketFields = {"transport", "mtu",           "header",  "ack",
                                                "buffer",    "ecn_threshold", "ecn_max", "ecn_pmax",
                                                "pfc",       "pfc_xoff",      "pfc_xon"};

// A block of another transport: refused, naming the transports that read it.
std::string other_transport_block(const net::SettingsBlock& block) {
  const std::vector<std::string> readers = net::transports_reading(block.key);
  if (readers.size() == 1) return "settings of transport " + readers.front();
  std::string names;
  for (std::size_t i = 0; i < readers.size(); ++i)
    names += (i == 0 ? "" : i + 1 == readers.size() ? " and " : ", ") + readers[i];
  return block.what + ", used by transports " + names;
}

// Settings given for a transport other than the one chosen, or for PFC while it is off, would be
// silently ignored: refused, naming the block and the transport in force. A block of one
// transport is refused before a block several read (it names the transport meant).
void check_packet_settings_used(const Fields& f, const net::PacketBackendOptions& o) {
  const std::string transport(o.transport.name());
  const auto refuse = [&](const std::string& key, const std::string& what) {
    throw Error(f.source(), f.field(key),
                fmt::format("{}; the transport is '{}', so they would be ignored: remove them or "
                            "choose the transport they are for",
                            what, transport));
  };
  const std::vector<net::SettingsBlock> blocks = net::transport_blocks();
  for (const bool shared : {false, true}) {
    for (const net::SettingsBlock& b : blocks) {
      if (!f.has(b.key) || net::reads_block(*o.transport, b.key)) continue;
      if ((net::transports_reading(b.key).size() > 1) == shared) {
        refuse(b.key, other_transport_block(b));
      }
    }
  }
  o.transport->check_used(f);
  std::vector<std::string> lossless;
  for (const net::TransportRegistry::Entry& e : net::packet_transports().entries()) {
    if (e.factory()->lossless()) lossless.push_back(e.name);
  }
  for (const char* key : {"pfc_xoff", "pfc_xon"}) {
    if (f.has(key) && !o.pfc_enabled()) {
      throw Error(f.source(), f.field(key),
                  fmt::format("a PFC threshold, but PFC is off (transport '{}'; PFC is on by "
                              "default only for {}), so it would be ignored: remove it or "
                              "set 'pfc: true'",
                              transport, join(lossless)));
    }
  }
  if (f.has("ecn_pmax") && o.ecn_max.count() == 0) {
    throw Error(f.source(), f.field("ecn_pmax"),
                "RED's marking probability at ecn_max, but ecn_max is 0 (marking is a step at "
                "ecn_threshold), so it would be ignored: give ecn_max above ecn_threshold, or "
                "remove ecn_pmax");
  }
}

// The chosen transport's settings from its blocks. Blocks of other transports (refused later,
// check_packet_settings_used) are read and checked by a transport that reads them first, so
// that a mistake inside one is reported as that mistake.
std::unique_ptr<net::TransportSettings> parse_transport_blocks(
    const Fields& f, const net::TransportRegistry::Entry& chosen,
    std::vector<std::unique_ptr<net::TransportSettings>>& others) {
  std::unique_ptr<net::TransportSettings> settings = chosen.factory();
  // In registration order, as the blocks are listed.
  for (const net::TransportRegistry::Entry& e : net::packet_transports().entries()) {
    if (&e == &chosen) {
      settings->parse(f);
      continue;
    }
    std::unique_ptr<net::TransportSettings> other = e.factory();
    const std::vector<net::SettingsBlock> blocks = other->blocks();
    if (std::any_of(blocks.begin(), blocks.end(), [&](const net::SettingsBlock& b) {
          return f.has(b.key) && !net::reads_block(*settings, b.key);
        })) {
      other->parse(f);
      others.push_back(std::move(other));
    }
  }
  return settings;
}

// A micro benchmark's transfers between servers carry at least ceil(bytes / n) bytes for a
// group of n GPUs over several servers, whatever the lowering: a direct all-to-all exactly that
// per pair, rings and the hierarchical all-reduce's cross-server ring more; mFabric's proxy
// all-to-all splits a pair's bytes over at most max(NICs, GPUs) per server channels, and each
// exchange transfer sums such parts. When even that is more packets than a flow may have, the
// run would stop at its first collective: refused now, at load.
void check_micro_transfers(const Experiment& e, const fabric::Topology& topology) {
  if (!e.micro || e.cluster.servers < 2 || e.micro->group == "per-server") return;
  const MicroBenchmark& m = *e.micro;
  const std::int64_t n = m.group == "all"
                             ? std::int64_t{e.cluster.servers} * e.cluster.gpus_per_server
                             : std::int64_t{e.cluster.servers};
  std::int64_t least = (m.bytes.count() + n - 1) / n;
  if (m.collective == workload::CollectiveKind::AllToAll &&
      (!topology.regions().empty() || m.algorithm == "proxy")) {
    least /= std::max(e.cluster.nics_per_server, e.cluster.gpus_per_server);
  }
  const std::int64_t mtu = e.packet.mtu.count();
  if ((least + mtu - 1) / mtu <= net::kMaxFlowPackets) return;
  throw Error(e.source, "workload.bytes",
              fmt::format("{} over {} GPUs makes transfers between servers of at least {} "
                          "with simulation.mtu {} bytes: {}",
                          to_string(m.bytes), n, to_string(Bytes(least)), mtu,
                          net::flow_size_limit(Bytes(least), e.packet.mtu)));
}

}  // namespace

std::vector<std::string> packet_setting_fields() {
  std::vector<std::string> out = kPacketFields;
  for (const net::SettingsBlock& b : net::transport_blocks())
    out.push_back(b.key);
  return out;
}

void parse_packet_options(const Fields& f, Experiment& e) {
  for (const std::string& key : packet_setting_fields()) {
    if (f.has(key) && e.backend != "packet") {
      throw Error(e.source, f.field(key),
                  fmt::format("is a packet backend setting: it needs 'backend: packet' (the "
                              "backend is '{}')",
                              e.backend));
    }
  }
  net::PacketBackendOptions& o = e.packet;
  const std::string name = f.optional_string("transport").value_or(std::string(o.transport.name()));
  const net::TransportRegistry::Entry& chosen = with_context(
      e.source, f.field("transport"),
      [&]() -> const net::TransportRegistry::Entry& { return net::packet_transports().at(name); });
  o.mtu = f.optional_bytes("mtu").value_or(o.mtu);
  o.header = f.optional_bytes("header").value_or(o.header);
  o.ack = f.optional_bytes("ack").value_or(o.ack);
  o.buffer = f.optional_bytes("buffer").value_or(o.buffer);
  o.ecn_threshold = f.optional_bytes("ecn_threshold").value_or(o.ecn_threshold);
  o.ecn_max = f.optional_bytes("ecn_max").value_or(o.ecn_max);
  o.ecn_pmax = f.optional_double("ecn_pmax").value_or(o.ecn_pmax);
  if (f.has("pfc")) o.pfc = *f.optional_bool("pfc");
  o.pfc_thresholds.xoff = f.optional_bytes("pfc_xoff").value_or(o.pfc_thresholds.xoff);
  o.pfc_thresholds.xon = f.optional_bytes("pfc_xon").value_or(o.pfc_thresholds.xon);
  std::vector<std::unique_ptr<net::TransportSettings>> others;
  o.transport = net::TransportChoice(parse_transport_blocks(f, chosen, others));
  o.source = e.source;
  net::check_packet_options(o, e.source, "simulation");
  for (const auto& other : others)
    other->check(o, e.source, "simulation");
  if (e.backend == "packet") check_packet_settings_used(f, o);
}

// With the packet backend, what its settings are checked against once the fabric is built: the
// fabric's network links (timer floors, rate ceilings, net::check_packet_options) and the
// workload's transfer sizes.
void check_packet_limits(const Experiment& e, const fabric::Topology& topology) {
  if (e.backend != "packet") return;
  if (const auto limits = net::packet_link_limits(e.packet, topology)) {
    net::check_packet_options(e.packet, *limits, e.source, "simulation");
  }
  check_micro_transfers(e, topology);
}

}  // namespace mfabric::config
