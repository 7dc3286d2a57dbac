#include "control/copilot_evaluation.h"

#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <memory>
#include <span>
#include <utility>

#include "control/demand.h"
#include "control/prediction_metrics.h"
#include "control/token_demand.h"
#include "core/error.h"

namespace mfabric::control {

namespace {

using Counts = std::span<const std::int32_t>;

// One way of guessing layer l's token matrix from layer l-1's.
class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual std::string name() const = 0;
  virtual std::vector<double> predict(int layer, Counts previous) = 0;
  virtual void observe(int /*layer*/, Counts /*previous*/, Counts /*current*/) {}
};

double row_sum(Counts m, std::size_t row, std::size_t width) {
  double sum = 0;
  for (std::size_t e = 0; e < width; ++e)
    sum += m[row * width + e];
  return sum;
}

class UniformPredictor final : public Predictor {
 public:
  UniformPredictor(int ep, int experts) : ep_(ep), experts_(experts) {}
  std::string name() const override { return "uniform"; }
  std::vector<double> predict(int, Counts previous) override {
    const auto width = static_cast<std::size_t>(experts_);
    std::vector<double> out(previous.size());
    for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
      const double share = row_sum(previous, r, width) / static_cast<double>(width);
      std::fill(out.begin() + static_cast<long>(r * width),
                out.begin() + static_cast<long>((r + 1) * width), share);
    }
    return out;
  }

 private:
  int ep_, experts_;
};

class ReusePredictor final : public Predictor {
 public:
  std::string name() const override { return "reuse"; }
  std::vector<double> predict(int, Counts previous) override {
    return std::vector<double>(previous.begin(), previous.end());
  }
};

// Each source's recency-weighted mean share at layer l over the last `history` observations
// (Copilot's window and weights), scaled to the source's tokens: what a predictor knows about
// layer l without looking at layer l-1. A source never seen with tokens spreads them evenly.
class HistoryPredictor final : public Predictor {
 public:
  HistoryPredictor(int ep, int experts, int layers, const CopilotOptions& options)
      : ep_(ep), experts_(experts), options_(options), windows_(static_cast<std::size_t>(layers)) {}
  std::string name() const override { return "history"; }
  std::vector<double> predict(int layer, Counts previous) override {
    const auto width = static_cast<std::size_t>(experts_);
    const auto& window = windows_[static_cast<std::size_t>(layer)];
    std::vector<double> out(previous.size(), 0.0);
    for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
      double* row = out.data() + r * width;
      double weight = 1.0, total = 0.0;
      for (auto it = window.rbegin(); it != window.rend(); ++it, weight *= options_.decay) {
        const double* shares = it->data() + r * width;
        if (shares[0] < 0) continue;  // the source routed nothing then
        for (std::size_t e = 0; e < width; ++e)
          row[e] += weight * shares[e];
        total += weight;
      }
      const double tokens = row_sum(previous, r, width);
      for (std::size_t e = 0; e < width; ++e)
        row[e] = total > 0 ? row[e] / total * tokens : tokens / static_cast<double>(width);
    }
    return out;
  }
  void observe(int layer, Counts, Counts current) override {
    const auto width = static_cast<std::size_t>(experts_);
    std::vector<double> shares(current.size());
    for (std::size_t r = 0; r < static_cast<std::size_t>(ep_); ++r) {
      const double sum = row_sum(current, r, width);
      for (std::size_t e = 0; e < width; ++e)
        shares[r * width + e] = sum > 0 ? current[r * width + e] / sum : -1.0;
    }
    auto& window = windows_[static_cast<std::size_t>(layer)];
    window.push_back(std::move(shares));
    if (static_cast<int>(window.size()) > options_.history) window.pop_front();
  }

 private:
  int ep_, experts_;
  CopilotOptions options_;
  std::vector<std::deque<std::vector<double>>> windows_;
};

class CopilotAdapter final : public Predictor {
 public:
  CopilotAdapter(std::string name, int ep, int experts, int layers, const CopilotOptions& options)
      : name_(std::move(name)), copilot_(ep, experts, layers, options) {}
  std::string name() const override { return name_; }
  std::vector<double> predict(int layer, Counts previous) override {
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> out = copilot_.predict(layer, previous);
    predict_seconds_ += seconds_since(start);
    ++predicts_;
    return out;
  }
  void observe(int layer, Counts previous, Counts current) override {
    const auto start = std::chrono::steady_clock::now();
    copilot_.observe(layer, previous, current);
    observe_seconds_ += seconds_since(start);
    ++observes_;
  }
  bool ready(int layer) const { return copilot_.ready(layer); }
  double mean_observe_seconds() const { return observes_ ? observe_seconds_ / observes_ : 0.0; }
  double mean_predict_seconds() const { return predicts_ ? predict_seconds_ / predicts_ : 0.0; }
  double mean_solver_steps() const {
    return observes_ ? static_cast<double>(copilot_.solver_steps()) / observes_ : 0.0;
  }

 private:
  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::string name_;
  CopilotPredictor copilot_;
  double observe_seconds_ = 0, predict_seconds_ = 0;
  int observes_ = 0, predicts_ = 0;
};

void check_setup(const workload::RoutingTrace& trace, const PredictionSetup& setup) {
  if (trace.is_static()) {
    throw Error("", "trace",
                "a static trace (one matrix for every layer) has no layer-to-layer routing to "
                "predict; give a trace with at least 2 MoE layers");
  }
  if (trace.layers().size() < 2) {
    throw Error("", "trace",
                fmt::format("expected at least 2 MoE layers (layer l is predicted from layer "
                            "l-1), got {}",
                            trace.layers().size()));
  }
  setup.copilot.validate();
  if (setup.top_k < 1 || setup.top_k > trace.experts()) {
    throw Error(
        "", "top_k",
        fmt::format("expected 1 to {} (the experts), got {}", trace.experts(), setup.top_k));
  }
  if (setup.ranks_per_server < 1 || trace.ep() % setup.ranks_per_server != 0) {
    throw Error(
        "", "ranks_per_server",
        fmt::format("expected a divisor of ep ({}), got {}", trace.ep(), setup.ranks_per_server));
  }
  if (trace.experts() % trace.ep() != 0) {
    throw Error("", "trace",
                fmt::format("expected a number of experts that is a multiple of ep ({}), got {}",
                            trace.ep(), trace.experts()));
  }
  if (trace.ep() / setup.ranks_per_server > kMaxRegionServers) {
    throw Error("", "ranks_per_server",
                fmt::format("ep / ranks_per_server = {} servers, more than a region's {}",
                            trace.ep() / setup.ranks_per_server, kMaxRegionServers));
  }
}

}  // namespace

PredictionEvaluation evaluate_prediction(const workload::RoutingTrace& trace,
                                         const PredictionSetup& setup) {
  check_setup(trace, setup);
  const int ep = trace.ep();
  const int experts = trace.experts();
  const int layers = static_cast<int>(trace.layers().size());
  const int servers = ep / setup.ranks_per_server;
  std::vector<int> server_of(static_cast<std::size_t>(ep));
  for (int r = 0; r < ep; ++r)
    server_of[static_cast<std::size_t>(r)] = r / setup.ranks_per_server;
  const auto demand_of = [&](std::span<const double> tokens) {
    return demand_from_gpu_bytes(rank_bytes_from_tokens(tokens, ep, experts, setup.bytes_per_token),
                                 server_of, servers);
  };

  CopilotOptions plain = setup.copilot;
  plain.center_sources = false;
  CopilotOptions centered = setup.copilot;
  centered.center_sources = true;
  std::vector<CopilotAdapter*> copilots;
  std::vector<std::unique_ptr<Predictor>> predictors;
  predictors.push_back(std::make_unique<UniformPredictor>(ep, experts));
  predictors.push_back(std::make_unique<ReusePredictor>());
  predictors.push_back(std::make_unique<HistoryPredictor>(ep, experts, layers, setup.copilot));
  for (const auto& [name, options] :
       {std::pair{"copilot", plain}, {"copilot-centered", centered}}) {
    auto copilot = std::make_unique<CopilotAdapter>(name, ep, experts, layers, options);
    copilots.push_back(copilot.get());
    predictors.push_back(std::move(copilot));
  }

  PredictionEvaluation result;
  result.servers = servers;
  for (const auto& p : predictors)
    result.predictors.push_back({.name = p->name()});

  const auto width = static_cast<std::size_t>(experts);
  for (int it = 0; it < trace.iterations(); ++it) {
    for (int mb = 0; mb < trace.micro_batches(); ++mb) {
      for (int l = 1; l < layers; ++l) {
        if (!copilots.front()->ready(l)) {
          ++result.warmup;
          continue;
        }
        const Counts previous = trace.matrix(it, l - 1, mb);
        const Counts current = trace.matrix(it, l, mb);
        const std::vector<double> actual(current.begin(), current.end());
        const std::vector<double> actual_load = column_sums(actual, ep, experts);
        const bool has_demand = servers > 1;
        const ServerDemand actual_demand = has_demand ? demand_of(actual) : ServerDemand(1);
        for (std::size_t k = 0; k < predictors.size(); ++k) {
          const std::vector<double> predicted = predictors[k]->predict(l, previous);
          PredictorScore& score = result.predictors[k];
          const std::vector<double> load = column_sums(predicted, ep, experts);
          score.top_k_accuracy += top_k_accuracy(actual_load, load, setup.top_k);
          score.load_tvd += total_variation(actual_load, load);
          double rows = 0;
          for (std::size_t r = 0; r < static_cast<std::size_t>(ep); ++r) {
            rows += total_variation(std::span(actual).subspan(r * width, width),
                                    std::span(predicted).subspan(r * width, width));
          }
          score.row_tvd += rows / ep;
          if (has_demand && actual_demand.total() > 0) {
            score.demand_error += demand_relative_error(actual_demand, demand_of(predicted));
          }
        }
        ++result.scored;
      }
      for (int l = 1; l < layers; ++l) {
        for (const auto& p : predictors)
          p->observe(l, trace.matrix(it, l - 1, mb), trace.matrix(it, l, mb));
      }
    }
  }
  if (result.scored > 0) {
    for (PredictorScore& s : result.predictors) {
      s.top_k_accuracy /= result.scored;
      s.load_tvd /= result.scored;
      s.row_tvd /= result.scored;
      s.demand_error /= result.scored;
    }
  }
  for (std::size_t k = 0; k < copilots.size(); ++k) {
    PredictorScore& score = result.predictors[predictors.size() - copilots.size() + k];
    score.observe_seconds = copilots[k]->mean_observe_seconds();
    score.predict_seconds = copilots[k]->mean_predict_seconds();
    score.solver_steps = copilots[k]->mean_solver_steps();
  }
  return result;
}

}  // namespace mfabric::control
