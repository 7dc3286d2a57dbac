// Packet spraying for a fluid backend (docs/network.md, "Spraying"): each transfer is split into
// `paths` equal parts with the flow hashes spray_hash(flow_hash, i) (router.h), which the inner
// backend routes as separate transfers over its equal-cost paths; the transfer completes when
// its last part has. Per-packet spraying sends a flow's packets over its paths in turn, so each
// path carries an equal share of the bytes and the flow ends with its slowest path: the parts
// model exactly that. Parts that hash to the same path share it, as random spraying does.
// Transfers smaller than `paths` x kMinSprayPart are split into fewer parts.
//
// Everything else (links, circuits, statistics) is the inner backend's.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "net/backend.h"
#include "net/backend_stats.h"

namespace mfabric::net {

class SprayingBackend final : public Backend, public BackendStats {
 public:
  // Parts of at least this many bytes (smaller transfers are split into fewer parts).
  static constexpr std::int64_t kMinSprayPart = 4096;

  SprayingBackend(std::unique_ptr<Backend> inner, int paths);

  TransferId start(const net::Transfer& t, DoneCallback on_done) override;
  void set_link_rate(fabric::LinkId link, Rate rate) override { inner_->set_link_rate(link, rate); }
  void reroute_down() override { inner_->reroute_down(); }
  Time now() const override { return inner_->now(); }
  std::optional<Time> next_event_time() const override { return inner_->next_event_time(); }
  void advance(Time t) override { inner_->advance(t); }
  // The inner backend's, but for the statistics of transfers: ours are its parts' sums (when it
  // counts). Its circuits pause, resume and reroute its parts.
  Capabilities capabilities() override {
    Capabilities c = inner_->capabilities();
    if (c.stats != nullptr) c.stats = this;
    return c;
  }

  // BackendStats: the inner backend's channels and events; transfers counted whole.
  std::size_t active_transfers() const override { return active_; }
  std::int64_t events_processed() const override { return inner_stats().events_processed(); }
  const std::vector<ChannelStats>& channel_stats() const override {
    return inner_stats().channel_stats();
  }
  std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const override;
  TransferTotals totals() const override;

  const Backend& inner() const { return *inner_; }

 private:
  struct Pending {
    TransferId id;
    int parts_left;
    std::int64_t size;
    DoneCallback on_done;
  };

  const BackendStats& inner_stats() const { return *inner_->stats(); }

  std::unique_ptr<Backend> inner_;
  int paths_;
  TransferId next_id_ = 0;
  std::size_t active_ = 0;
  // Transfers with parts still running, by our id; and our id of each inner transfer.
  std::vector<Pending> pending_;
  std::vector<std::int32_t> free_pending_;
  std::unordered_map<TransferId, TransferId> outer_of_inner_;  // parts still running
  TransferTotals totals_;
};

}  // namespace mfabric::net
