#include "sim/packet_settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "net/packet/packet_options.h"

namespace mfabric::sim {
namespace {

// Settings of the packet backend only (docs/network.md, "Packet backend").
const std::vector<std::string> kPacketFields = {
    "transport", "mtu",      "header",  "ack",   "buffer", "ecn_threshold", "ecn_max", "ecn_pmax",
    "pfc",       "pfc_xoff", "pfc_xon", "dctcp", "dcqcn",  "roce",          "irn"};
const std::vector<std::string> kDctcpFields = {"g",       "initial_window", "max_window",
                                               "min_rto", "dupacks",        "variant"};
const std::vector<std::string> kDcqcnFields = {"variant",           "g",
                                               "alpha_timer",       "rate_timer",
                                               "byte_counter",      "fast_recovery_steps",
                                               "additive_increase", "hyper_increase",
                                               "cnp_interval",      "min_rate"};
const std::vector<std::string> kRoceFields = {"rto"};
const std::vector<std::string> kIrnFields = {"rto_low", "rto_high", "low_packets", "dcqcn"};
// Settings given for a transport other than the one chosen, or for PFC while it is off, would be
// silently ignored: refused, naming the block and the transport in force.
void check_packet_settings_used(const Fields& f, const net::PacketBackendOptions& o) {
  const std::string transport = net::to_string(o.transport);
  const auto refuse = [&](const std::string& key, const std::string& what) {
    throw Error(f.source(), f.field(key),
                fmt::format("{}; the transport is '{}', so they would be ignored: remove them or "
                            "choose the transport they are for",
                            what, transport));
  };
  if (f.has("dctcp") && o.transport != net::PacketTransport::Dctcp) {
    refuse("dctcp", "settings of transport dctcp");
  }
  if (f.has("roce") && o.transport != net::PacketTransport::RoceDcqcn) {
    refuse("roce", "settings of transport roce-dcqcn");
  }
  if (f.has("irn") && o.transport != net::PacketTransport::Irn) {
    refuse("irn", "settings of transport irn");
  }
  if (f.has("dcqcn") && o.transport == net::PacketTransport::Dctcp) {
    refuse("dcqcn", "DCQCN settings, used by transports roce-dcqcn and irn");
  }
  if (f.has("dcqcn") && o.transport == net::PacketTransport::Irn && !o.irn.dcqcn) {
    throw Error(f.source(), f.field("dcqcn"),
                "DCQCN settings, but simulation.irn.dcqcn is false (IRN without DCQCN), so they "
                "would be ignored: remove them or turn irn.dcqcn on");
  }
  for (const char* key : {"pfc_xoff", "pfc_xon"}) {
    if (f.has(key) && !o.pfc_enabled()) {
      throw Error(f.source(), f.field(key),
                  fmt::format("a PFC threshold, but PFC is off (transport '{}'; PFC is on by "
                              "default only for roce-dcqcn), so it would be ignored: remove it or "
                              "set 'pfc: true'",
                              transport));
    }
  }
  if (f.has("ecn_pmax") && o.ecn_max.count() == 0) {
    throw Error(f.source(), f.field("ecn_pmax"),
                "RED's marking probability at ecn_max, but ecn_max is 0 (marking is a step at "
                "ecn_threshold), so it would be ignored: give ecn_max above ecn_threshold, or "
                "remove ecn_pmax");
  }
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

void parse_packet_options(const Fields& f, Experiment& e) {
  for (const std::string& key : kPacketFields) {
    if (f.has(key) && e.backend != "packet") {
      throw Error(e.source, f.field(key),
                  fmt::format("is a packet backend setting: it needs 'backend: packet' (the "
                              "backend is '{}')",
                              e.backend));
    }
  }
  net::PacketBackendOptions& o = e.packet;
  if (f.has("transport")) {
    const std::string name = *f.optional_string("transport");
    const auto t = net::parse_packet_transport(name);
    if (!t) {
      throw Error(e.source, f.field("transport"),
                  fmt::format("unknown transport '{}' (known: {})", name,
                              fmt::join(net::packet_transport_names(), ", ")));
    }
    o.transport = *t;
  }
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
  if (f.has("dctcp")) {
    const Fields d(f.get("dctcp"), e.source, "simulation.dctcp", kDctcpFields);
    o.dctcp.g = d.optional_double("g").value_or(o.dctcp.g);
    o.dctcp.initial_window = d.optional_int("initial_window").value_or(o.dctcp.initial_window);
    o.dctcp.max_window = d.optional_bytes("max_window").value_or(o.dctcp.max_window);
    o.dctcp.min_rto = d.optional_time("min_rto").value_or(o.dctcp.min_rto);
    o.dctcp.dupacks = d.optional_int("dupacks").value_or(o.dctcp.dupacks);
    if (d.has("variant")) {
      const std::string v = *d.optional_string("variant");
      if (v != "rfc8257" && v != "htsim") {
        throw Error(e.source, d.field("variant"), fmt::format("'rfc8257' or 'htsim', got '{}'", v));
      }
      o.dctcp.variant = v == "htsim" ? net::DctcpVariant::Htsim : net::DctcpVariant::Rfc8257;
    }
  }
  if (f.has("dcqcn")) {
    const Fields d(f.get("dcqcn"), e.source, "simulation.dcqcn", kDcqcnFields);
    net::DcqcnOptions& q = o.dcqcn;
    if (d.has("variant")) {
      const std::string v = *d.optional_string("variant");
      const auto variant = net::parse_dcqcn_variant(v);
      if (!variant) {
        throw Error(e.source, d.field("variant"),
                    fmt::format("'paper' or 'ns3-rdma', got '{}'", v));
      }
      // The variant's defaults first; the fields given override them.
      q = net::DcqcnOptions::for_variant(*variant);
    }
    q.g = d.optional_double("g").value_or(q.g);
    q.alpha_timer = d.optional_time("alpha_timer").value_or(q.alpha_timer);
    q.rate_timer = d.optional_time("rate_timer").value_or(q.rate_timer);
    q.byte_counter = d.optional_bytes("byte_counter").value_or(q.byte_counter);
    q.fast_recovery_steps = d.optional_int("fast_recovery_steps").value_or(q.fast_recovery_steps);
    q.additive_increase = d.optional_rate("additive_increase").value_or(q.additive_increase);
    q.hyper_increase = d.optional_rate("hyper_increase").value_or(q.hyper_increase);
    q.cnp_interval = d.optional_time("cnp_interval").value_or(q.cnp_interval);
    q.min_rate = d.optional_rate("min_rate").value_or(q.min_rate);
  }
  if (f.has("roce")) {
    const Fields d(f.get("roce"), e.source, "simulation.roce", kRoceFields);
    o.roce.rto = d.optional_time("rto").value_or(o.roce.rto);
  }
  if (f.has("irn")) {
    const Fields d(f.get("irn"), e.source, "simulation.irn", kIrnFields);
    o.irn.rto_low = d.optional_time("rto_low").value_or(o.irn.rto_low);
    o.irn.rto_high = d.optional_time("rto_high").value_or(o.irn.rto_high);
    o.irn.low_packets = d.optional_int("low_packets").value_or(o.irn.low_packets);
    o.irn.dcqcn = d.optional_bool("dcqcn").value_or(o.irn.dcqcn);
  }
  o.source = e.source;
  net::check_packet_options(o, e.source, "simulation");
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

}  // namespace mfabric::sim
