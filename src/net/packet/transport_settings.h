// A packet transport's settings behind one interface, so that a transport is one unit in
// net/packet/transports/ (its options and defaults, their YAML and their checks, its traits and
// its factory) plus one registry line (transports.cpp), and nothing else names it: neither the
// packet network, nor the experiment's parser, nor the reports (docs/packet.md, "Transports").
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mfabric {
class Fields;
}

namespace mfabric::net {

struct PacketBackendOptions;
struct PacketLinkLimits;

namespace packet {
class Transport;
class TransportHost;
}  // namespace packet

// A map of the experiment's `simulation:` block that a transport reads (`dctcp: {...}`). Several
// transports may read one: RoCE and IRN both read `dcqcn`.
struct SettingsBlock {
  std::string key;   // "dcqcn"
  std::string what;  // "DCQCN settings": names a block several transports read, in messages
};

class TransportSettings {
 public:
  virtual ~TransportSettings() = default;

  // Its name in the registry (transports.h) and in the experiment's `transport:`.
  virtual std::string_view name() const = 0;
  // The blocks of `simulation:` it reads, in the order it reads them.
  virtual std::vector<SettingsBlock> blocks() const = 0;
  // Reads those of its blocks that `simulation` (the experiment's `simulation:` map) has, over
  // the values it holds; mfabric::Error naming the field for an unknown key or a value of the
  // wrong type.
  virtual void parse(const Fields& simulation) = 0;
  // mfabric::Error(file, `prefix`.block.key, expectation) for a setting out of range: the checks
  // that need no topology (`o`: the packet settings they depend on, such as the mtu).
  virtual void check(const PacketBackendOptions& o, const std::string& file,
                     const std::string& prefix) const = 0;
  // The same for its timers and rates against the limits of a fabric's links (packet_options.h).
  virtual void check(const PacketBackendOptions& o, const PacketLinkLimits& limits,
                     const std::string& file, const std::string& prefix) const = 0;
  // mfabric::Error for a block of `simulation` these settings would leave unused (IRN's `dcqcn`
  // with irn.dcqcn false). Blocks of other transports are refused by the caller.
  virtual void check_used(const Fields& /*simulation*/) const {}
  // Whether switch ports are lossless (PFC) unless the experiment says otherwise.
  virtual bool lossless() const { return false; }
  // The variant of its congestion control, for outputs: DCTCP's ("rfc8257", "htsim"), DCQCN's
  // ("paper", "ns3-rdma"), or "none".
  virtual const char* congestion_control_variant() const = 0;
  // The transport of a packet network (`host`) with these settings and the packet settings `o`.
  virtual std::unique_ptr<packet::Transport> make(packet::TransportHost& host,
                                                  const PacketBackendOptions& o) const = 0;
};

// The transport a packet network runs, with its settings: a value. Copies share the settings,
// which never change once chosen (a settings object is built, then chosen).
class TransportChoice {
 public:
  // The default transport (transports.h) with its defaults.
  TransportChoice();
  // The registry's transport `name` with its defaults; mfabric::Error "unknown transport 'x'
  // (known: ...)" otherwise.
  explicit TransportChoice(std::string_view name);
  explicit TransportChoice(std::unique_ptr<TransportSettings> settings);
  // Implicit, so that `options.transport = RoceDcqcnSettings{...}` chooses a transport.
  template <std::derived_from<TransportSettings> S>
  TransportChoice(S settings) : settings_(std::make_shared<const S>(std::move(settings))) {}

  std::string_view name() const { return settings_->name(); }
  const TransportSettings& operator*() const { return *settings_; }
  const TransportSettings* operator->() const { return settings_.get(); }
  // The settings as their own type, or null when another transport is chosen.
  template <class S>
  const S* get() const {
    return dynamic_cast<const S*>(settings_.get());
  }

 private:
  std::shared_ptr<const TransportSettings> settings_;
};

}  // namespace mfabric::net
