// A toy packet transport, registered by tests the way a new transport would be (one unit, one
// registry line): a fixed window of packets, cumulative acknowledgements, go-back-N after a
// timeout, and one setting of its own, `simulation.toy: {window: N}`. Small enough to read, and
// it shows that nothing outside its unit names it.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "net/packet/packet_options.h"
#include "net/packet/transport.h"
#include "net/packet/transports.h"

namespace mfabric::net::testing {

class ToyTransport final : public packet::Transport {
 public:
  ToyTransport(packet::TransportHost& host, int window) : host_(host), window_(window) {}

  const char* name() const override { return "toy"; }
  void open(packet::FlowSlot f, std::int32_t packets, Time rtt, Rate /*line_rate*/) override {
    packet::cover_slot(f, senders_, receivers_);
    senders_[index(f)] = Sender{packets, 0, 0, std::max(rtt * 4, Time::microseconds(100))};
    receivers_[index(f)] = Receiver{packets, 0};
  }
  void close(packet::FlowSlot /*f*/) override {}
  bool can_send(packet::FlowSlot f) const override {
    const Sender& s = senders_[index(f)];
    return s.next < s.packets && s.next - s.una < window_;
  }
  std::int32_t next_packet(packet::FlowSlot f) override {
    if (!can_send(f)) return -1;
    Sender& s = senders_[index(f)];
    if (s.next == s.una) host_.set_timer(f, host_.now() + s.rto);
    return s.next++;
  }
  bool on_data(packet::FlowSlot f, std::int32_t seq, bool /*ce*/, packet::Ack& ack,
               bool& complete) override {
    Receiver& r = receivers_[index(f)];
    complete = false;
    if (seq == r.expected) {
      ++r.expected;
      complete = r.expected == r.packets;
    }
    ack.seq = seq;
    ack.cumulative = r.expected;
    return true;
  }
  void on_ack(packet::FlowSlot f, const packet::Ack& ack) override {
    Sender& s = senders_[index(f)];
    if (ack.cumulative <= s.una || s.una >= s.packets) return;
    s.una = ack.cumulative;
    s.next = std::max(s.next, s.una);
    host_.set_timer(f, s.una < s.packets ? host_.now() + s.rto : Time::max());
    host_.wake(f);
  }
  void on_timer(packet::FlowSlot f) override {
    Sender& s = senders_[index(f)];
    if (s.una >= s.packets) return;
    ++timeouts_;
    retransmissions_ += s.next - s.una;
    s.next = s.una;
    host_.wake(f);
  }
  std::int64_t retransmissions() const override { return retransmissions_; }
  std::int64_t timeouts() const override { return timeouts_; }

 private:
  struct Sender {
    std::int32_t packets = 0;
    std::int32_t next = 0;  // the next packet to send
    std::int32_t una = 0;   // the first packet not acknowledged
    Time rto;
  };
  struct Receiver {
    std::int32_t packets = 0;
    std::int32_t expected = 0;
  };
  static std::size_t index(packet::FlowSlot f) { return static_cast<std::size_t>(f); }

  packet::TransportHost& host_;
  int window_;
  std::vector<Sender> senders_;
  std::vector<Receiver> receivers_;
  std::int64_t retransmissions_ = 0;
  std::int64_t timeouts_ = 0;
};

struct ToySettings final : TransportSettings {
  static constexpr std::string_view kName = "toy";
  int window = 4;  // packets in flight

  std::string_view name() const override { return kName; }
  std::vector<SettingsBlock> blocks() const override { return {{"toy", "toy settings"}}; }
  void parse(const Fields& simulation) override {
    if (!simulation.has("toy")) return;
    const Fields d(simulation.get("toy"), simulation.source(), simulation.field("toy"), {"window"});
    window = d.optional_int("window").value_or(window);
  }
  void check(const PacketBackendOptions& /*o*/, const std::string& file,
             const std::string& prefix) const override {
    if (window < 1 || window > 1000) {
      throw Error(file, prefix + ".toy.window", fmt::format("1 to 1000 packets, got {}", window));
    }
  }
  void check(const PacketBackendOptions& /*o*/, const PacketLinkLimits& /*limits*/,
             const std::string& /*file*/, const std::string& /*prefix*/) const override {}
  const char* congestion_control_variant() const override { return "none"; }
  std::unique_ptr<packet::Transport> make(packet::TransportHost& host,
                                          const PacketBackendOptions& /*o*/) const override {
    return std::make_unique<ToyTransport>(host, window);
  }
};

// Adds "toy" to the transports, once per process (tests may run in one process).
inline void register_toy_transport() {
  if (!packet_transports().contains(ToySettings::kName)) {
    packet_transports().add(transport_entry<ToySettings>("a test's toy: a fixed window"));
  }
}

}  // namespace mfabric::net::testing
