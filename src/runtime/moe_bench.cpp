#include "runtime/moe_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"
#include "runtime/token_payload.h"
#include "workload/routing.h"

namespace mfabric::runtime {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void check_options(const MoeBenchOptions& o) {
  if (o.layers < 1)
    throw Error("", "--layers", fmt::format("must be at least 1, got {}", o.layers));
  if (o.tokens < 1)
    throw Error("", "--tokens", fmt::format("must be at least 1, got {}", o.tokens));
  if (o.hidden < kTokenHeaderBytes) {
    throw Error("", "--hidden",
                fmt::format("a token needs at least {} bytes (its header and checksum), got {}",
                            kTokenHeaderBytes, o.hidden));
  }
  if (o.switch_time.ps() < 0 || o.switch_time.seconds() > 60) {
    throw Error("", "--switch-time",
                fmt::format("expected 0 to 60s, got {}s", o.switch_time.seconds()));
  }
  if (o.circuits != "local" && o.circuits != "none" && o.circuits != "controller")
    throw Error("", "--circuits", "expected local, none or controller, got '" + o.circuits + "'");
}

// Bytes rank `rank` sends to each rank (send_by_row) or receives from each (column) for one
// direction of the layer.
std::vector<std::int64_t> block_bytes(const TokenRouting& routing, int rank, bool row) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(routing.ranks));
  for (int p = 0; p < routing.ranks; ++p)
    out[static_cast<std::size_t>(p)] =
        (row ? routing.at(rank, p) : routing.at(p, rank)) * routing.token_bytes;
  return out;
}

TokenId id_of(std::uint64_t key, int expert) {
  return {static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key & 0xFFFFFFFFu),
          static_cast<std::uint32_t>(expert)};
}

// One rank's part of one layer.
class LayerRun {
 public:
  LayerRun(const TokenRouting& routing, std::uint64_t seed, int layer, int me)
      : routing_(routing), seed_(seed), layer_(static_cast<std::uint32_t>(layer)), me_(me) {}

  // The rank's tokens in send order (by expert, then index).
  std::vector<std::byte> send_buffer() const {
    const auto tb = static_cast<std::size_t>(routing_.token_bytes);
    std::vector<std::byte> out(static_cast<std::size_t>(routing_.sent_by(me_)) * tb);
    std::uint32_t index = 0;
    for (int e = 0; e < routing_.ranks; ++e) {
      for (std::int64_t t = 0; t < routing_.at(me_, e); ++t, ++index) {
        fill_token(std::span(out).subspan(index * tb, tb), seed_, layer_,
                   {static_cast<std::uint32_t>(me_), index, static_cast<std::uint32_t>(e)});
      }
    }
    return out;
  }

  // Checks the tokens that reached this expert and processes them: what goes back. Records the
  // first wrong token in error.
  std::vector<std::byte> process_at_expert(std::vector<std::byte> received,
                                           const std::vector<std::uint64_t>& keys,
                                           std::string& error, std::int64_t& verified) const {
    const auto tb = static_cast<std::size_t>(routing_.token_bytes);
    for (std::size_t t = 0; t < keys.size(); ++t) {
      auto token = std::span(received).subspan(t * tb, tb);
      const std::string wrong =
          check_token(token, seed_, layer_, id_of(keys[t], me_), kNotProcessed);
      if (!wrong.empty()) {
        if (error.empty()) error = "at its expert: " + wrong;
        continue;
      }
      ++verified;
      mark_processed(token, static_cast<std::uint32_t>(me_));
    }
    return received;
  }

  // Checks the tokens back at their source, processed by their experts.
  void check_back(const std::vector<std::byte>& back, std::string& error,
                  std::int64_t& verified) const {
    const auto tb = static_cast<std::size_t>(routing_.token_bytes);
    std::uint32_t index = 0;
    for (int e = 0; e < routing_.ranks; ++e) {
      for (std::int64_t t = 0; t < routing_.at(me_, e); ++t, ++index) {
        const TokenId id{static_cast<std::uint32_t>(me_), index, static_cast<std::uint32_t>(e)};
        const std::string wrong = check_token(std::span(back).subspan(index * tb, tb), seed_,
                                              layer_, id, static_cast<std::uint32_t>(e));
        if (!wrong.empty()) {
          if (error.empty()) error = "back at its source: " + wrong;
          continue;
        }
        ++verified;
      }
    }
  }

 private:
  const TokenRouting& routing_;
  std::uint64_t seed_;
  std::uint32_t layer_;
  int me_;
};

std::string compare_with_alltoallv(const std::vector<std::byte>& proxy,
                                   const std::vector<std::byte>& reference, const char* direction) {
  if (proxy.size() != reference.size()) {
    return fmt::format("{}: the proxy all-to-all received {} bytes, MPI_Alltoallv {}", direction,
                       proxy.size(), reference.size());
  }
  if (std::memcmp(proxy.data(), reference.data(), proxy.size()) != 0) {
    return fmt::format("{}: the received bytes differ from MPI_Alltoallv's of the same routing",
                       direction);
  }
  return {};
}

// The ranks on servers as the options ask (--servers, --alpha), checked.
RankLayout bench_layout(const MoeBenchOptions& options, int ranks) {
  RankLayout layout;
  layout.ranks = ranks;
  layout.servers = options.servers;
  if (options.servers >= 1 && ranks % options.servers == 0) {
    layout.alpha = options.alpha > 0 ? options.alpha : std::max(1, layout.gpus_per_server() / 2);
  }
  try {
    layout.validate();
  } catch (const Error& e) {
    throw Error("", "--" + e.field(), e.message());
  }
  return layout;
}

// The benchmark's routing, one expert per rank, from the options' tokens, top-k and seed.
workload::RoutingTrace bench_routing(const MoeBenchOptions& options, int ranks) {
  workload::SyntheticRouting params;
  params.tokens_per_rank = options.tokens;
  params.top_k = options.top_k;
  std::vector<int> layer_ids(static_cast<std::size_t>(options.layers));
  std::iota(layer_ids.begin(), layer_ids.end(), 0);
  try {
    return workload::generate_routing(params, ranks, ranks, 1, layer_ids, 1,
                                      Rng(options.seed).derive("moe-bench/routing"));
  } catch (const Error& e) {
    throw Error("", e.field() == "top_k" ? "--top-k" : "--tokens", e.message());
  }
}

}  // namespace

MoeBenchResult run_moe_bench(const MoeBenchOptions& options, MpiSession& session) {
  check_options(options);
  MoeBenchResult result;
  result.ranks = session.size();
  result.layout = bench_layout(options, session.size());
  const RankLayout& layout = result.layout;

  // Every rank draws the same routing (one expert per rank) and asks the same deterministic
  // source, so every rank computes the same plan without a word exchanged.
  const workload::RoutingTrace trace = bench_routing(options, layout.ranks);

  std::unique_ptr<CircuitSource> source;
  if (options.circuits == "controller")
    source = std::make_unique<BroadcastCircuitSource>(session, options.first_rank_source);
  else if (options.circuits == "local")
    source = std::make_unique<LocalCircuitSource>(layout, options.planner, options.link,
                                                  options.switch_time);
  else
    source = std::make_unique<NoCircuits>();
  LayerCircuitSchedule schedule(*source, options.policy);
  MpiTransport transport(session);
  const int me = session.rank();
  ProxyRunner runner;
  std::map<int, std::vector<std::byte>> at_expert, back;  // buffers kept from layer to layer

  for (int layer = 0; layer < options.layers; ++layer) {
    TokenRouting routing;
    routing.ranks = layout.ranks;
    routing.token_bytes = options.hidden;
    for (std::int32_t n : trace.matrix(0, layer, 0))
      routing.tokens.push_back(n);
    routing.validate();
    const control::ServerDemand demand = layer_demand(routing, layout);

    MoeLayerResult out;
    out.layer = layer;
    const LayerCircuits circuits = schedule.before_layer(demand);
    out.generation = circuits.circuits.generation;
    out.circuits = static_cast<int>(circuits.circuits.circuits.size());
    out.reconfigured = circuits.reconfigured;
    out.waited = circuits.waited;
    out.wait_seconds = session.max(circuits.wait_seconds);
    const ProxyPlan dispatch =
        plan_proxy(dispatch_moves(routing), layout, circuits.circuits, routing.token_bytes);
    const ProxyPlan combine =
        plan_proxy(combine_moves(routing), layout, circuits.circuits, routing.token_bytes);
    for (const ProxyPlan* plan : {&dispatch, &combine}) {
      out.bytes_circuit += plan->bytes_over(Path::Circuit);
      out.bytes_eps += plan->bytes_over(Path::Eps);
      out.bytes_nvswitch += plan->bytes_over(Path::NvSwitch);
    }
    for (int s = 0; s < routing.ranks; ++s) {
      for (int e = 0; e < routing.ranks; ++e) {
        if (s != e) out.bytes_routed += 2 * routing.at(s, e) * routing.token_bytes;
      }
    }

    std::string error;
    std::int64_t verified = 0;
    // A failure here is this rank's alone, in the middle of exchanges the others wait on: it
    // ends every rank (a wrong token is not a failure here: it is agreed on below).
    try {
      const LayerRun run(routing, options.seed, layer, me);
      const std::map<int, std::vector<std::byte>> send{{me, run.send_buffer()}};

      // Dispatch and combine are timed each from a barrier; the checks between them are not.
      session.barrier();
      auto start = std::chrono::steady_clock::now();
      runner.run(dispatch, transport, send, at_expert);
      double seconds = seconds_since(start);
      const std::map<int, std::vector<std::byte>> processed{
          {me,
           run.process_at_expert(at_expert.at(me), dispatch.arrivals[static_cast<std::size_t>(me)],
                                 error, verified)}};
      session.barrier();
      start = std::chrono::steady_clock::now();
      runner.run(combine, transport, processed, back);
      seconds += seconds_since(start);
      out.seconds = session.max(seconds);
      run.check_back(back.at(me), error, verified);

      // The reference: MPI_Alltoallv of the same routing, both ways, timed the same way.
      session.barrier();
      start = std::chrono::steady_clock::now();
      const std::vector<std::byte> reference_at_expert = session.alltoallv(
          send.at(me), block_bytes(routing, me, true), block_bytes(routing, me, false));
      seconds = seconds_since(start);
      session.barrier();
      start = std::chrono::steady_clock::now();
      const std::vector<std::byte> reference_back = session.alltoallv(
          processed.at(me), block_bytes(routing, me, false), block_bytes(routing, me, true));
      seconds += seconds_since(start);
      out.alltoallv_seconds = session.max(seconds);
      if (error.empty())
        error = compare_with_alltoallv(at_expert.at(me), reference_at_expert, "dispatch");
      if (error.empty()) error = compare_with_alltoallv(back.at(me), reference_back, "combine");
    } catch (const std::exception& e) {
      session.abort(fmt::format("rank {}, layer {}: {}", me, layer, e.what()));
    }

    const std::string first = session.first_error(error);
    if (!first.empty()) throw Error("", "moe-bench", fmt::format("layer {}, {}", layer, first));
    out.tokens_verified = session.sum(verified);
    schedule.after_layer(demand);
    result.layers.push_back(out);
  }
  return result;
}

}  // namespace mfabric::runtime
