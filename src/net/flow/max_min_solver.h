// The flow backend's max-min fair solver (docs/network.md, "Solver"): re-fills a set V of flows
// by water-filling, every other flow held at its rate, and grows V until every flow has a
// bottleneck (or re-fills the whole connected set). It works in place on the backend's flow and
// channel records (flow_records.h): new_rate of V's flows and new_load of V's channels; the
// backend applies them. Independent of time, routes and completions: tests drive it alone
// (tests/net/max_min_solver_test.cpp) against an independent reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/flow/flow_backend.h"
#include "net/flow/flow_records.h"

namespace mfabric::net::flow {

class MaxMinSolver {
 public:
  // The flows (records and routes: flow s crosses the hot[s].len channels at path[s * stride])
  // and channels it solves over, and the counters it adds to. All are the caller's and outlive
  // the solver; `stride` may grow between calls.
  // `coefficients` (same layout as `routes`): how many times over a weighted flow (Hot::weighted)
  // uses each channel of its route; null: no flow is weighted.
  MaxMinSolver(std::vector<Hot>& flows, std::vector<Chan>& channels,
               std::vector<std::vector<std::int32_t>>& flows_per_channel,
               std::vector<ChannelId>& routes, const std::int32_t& route_stride, SolverStats& stats,
               std::vector<float>* coefficients = nullptr)
      : hot(flows),
        chans(channels),
        on(flows_per_channel),
        path(routes),
        coef(coefficients),
        stride(route_stride),
        solver(stats) {}

  // The channel table grew to `channels` channels.
  void resize_channels(std::size_t channels) {
    stamps.resize(channels);
    weights.resize(channels);
  }

  // V: the flows on the channels `from`, except those below `fixed_below` (not fresh) and, with
  // `own_bottleneck`, those whose bottleneck is another channel. Returns whether V has any.
  bool gather(const std::vector<ChannelId>& from, double fixed_below, bool own_bottleneck = false);
  // Water-filling of V over its channels; flows outside V keep their rates and use capacity.
  // Sets new_rate and bneck of V's flows and new_load of V's channels.
  void water_fill();
  // The max-min allocation from the gathered V: water-fills, adds the flows outside V that
  // break its conditions (above `fixed_below`) and fills again, until none does, or re-fills
  // the whole connected set once V keeps growing.
  void solve(double fixed_below);

  // V and its channels, after gather() (and grown by solve()).
  const std::vector<std::int32_t>& flows() const { return comp_flows; }
  const std::vector<ChannelId>& channels() const { return comp_channels; }

 private:
  struct ChanStamps {
    double max_rate = 0;         // expand(): largest tentative rate, infinite if not full
    std::uint32_t raised = 0;    // == fill_stamp: some flow on it got faster
    std::uint32_t bchecked = 0;  // == check_stamp: looked at as a bottleneck in expand()
    std::uint32_t maxed = 0;     // == check_stamp: max_rate is valid
    std::uint32_t gathered = 0;  // == epoch: its flows were gathered into V already
  };
  struct VNode {
    std::int32_t flow;
    std::int32_t next;
    std::int32_t at;  // the channel's index in the flow's route
  };
  // Per channel of V, with a weighted flow in V: V's coefficients on it, in all and unfrozen
  // (the counts v_count and unfrozen stand for them otherwise).
  struct ChanWeights {
    double v = 0;
    double unfrozen = 0;
  };
  struct ShareEntry {
    double share;
    std::int32_t channel;
  };
  struct ShareLater {
    bool operator()(const ShareEntry& x, const ShareEntry& y) const { return x.share > y.share; }
  };

  // The tables' arrays as of this call: they do not grow while the solver runs, and reading
  // them through the references at every access costs the inner loops a load each.
  void bind() {
    hot_ = hot.data();
    chan_ = chans.data();
    on_ = on.data();
    path_ = path.data();
    coef_ = coef == nullptr ? nullptr : coef->data();
    stride_ = stride;
  }
  const ChannelId* path_of(std::int32_t slot) const {
    return path_ + static_cast<std::ptrdiff_t>(slot) * stride_;
  }
  const float* coef_of(std::int32_t slot) const {
    return coef_ + static_cast<std::ptrdiff_t>(slot) * stride_;
  }
  Hot& hot_of(std::int32_t s) { return hot_[s]; }
  Chan& chan(ChannelId c) { return chan_[c]; }
  std::vector<std::int32_t>& flows_on(ChannelId c) { return on_[c]; }

  void next_epoch();
  void next_fill();
  void next_check();
  void add_variable(std::int32_t s);
  void close_component(double fixed_below);
  void weigh_channels();
  template <bool Weighted>
  double share(ChannelId c) const;
  template <bool Weighted>
  void freeze_channel(ChannelId c, double x);
  template <bool Weighted>
  bool fill_by_scan();
  template <bool Weighted>
  void fill_by_heap();
  double tentative(const Hot& f) const { return f.mark == epoch ? f.new_rate : f.rate; }
  double fastest_if_full(ChannelId c);
  bool has_bottleneck(std::int32_t s);
  std::size_t expand(double fixed_below);

  std::vector<Hot>& hot;
  std::vector<Chan>& chans;
  std::vector<std::vector<std::int32_t>>& on;
  std::vector<ChannelId>& path;
  std::vector<float>* coef;
  const std::int32_t& stride;
  SolverStats& solver;
  Hot* hot_ = nullptr;
  Chan* chan_ = nullptr;
  std::vector<std::int32_t>* on_ = nullptr;
  const ChannelId* path_ = nullptr;
  const float* coef_ = nullptr;
  std::int32_t stride_ = 0;

  std::vector<ChanStamps> stamps;    // per channel
  std::vector<ChanWeights> weights;  // per channel
  bool weighted_v = false;           // V has a weighted flow
  std::uint32_t epoch = 0;
  std::uint32_t fill_stamp = 0;
  std::uint32_t check_stamp = 0;
  std::vector<ChannelId> comp_channels;  // V's channels
  std::vector<std::int32_t> comp_flows;  // V
  std::vector<VNode> vnodes;
  std::vector<ShareEntry> shares;
  std::vector<std::int32_t> victims;
};

}  // namespace mfabric::net::flow
