// Copilot run online over a routing trace against simple baselines (what `mfabric predict`
// prints; docs/control-plane.md, "Demand prediction (Copilot)"). For every (iteration,
// micro-batch) in order, each MoE layer l >= 1 is predicted from the same micro-batch's real
// layer l-1, scored against the real layer l, and only then are the micro-batch's layers
// observed: a prediction never sees its own record.
#pragma once

#include <string>
#include <vector>

#include "control/copilot.h"
#include "workload/routing.h"

namespace mfabric::control {

struct PredictionSetup {
  CopilotOptions copilot;
  int top_k = 2;  // heavy experts compared, 1..experts
  // Where the demand error is measured: EP ranks r on server r / ranks_per_server (ep must be a
  // multiple; 1 = every rank its own server, the finest pairs), bytes_per_token per token.
  int ranks_per_server = 1;
  double bytes_per_token = 1;
};

// Means over the scored predictions.
struct PredictorScore {
  std::string name;
  double top_k_accuracy = 0;  // share of the real top-k experts (by load) predicted
  double load_tvd = 0;        // total variation between real and predicted expert loads
  double row_tvd = 0;         // the same per source rank's row, averaged over the sources
  double demand_error = 0;    // relative L1 error of the server-pair demand (0 with one server)
  // Copilot only: mean wall time of one observe() (the fit) and one predict(), in seconds.
  double observe_seconds = 0;
  double predict_seconds = 0;
  double solver_steps = 0;  // mean projected-gradient steps per fit
};

struct PredictionEvaluation {
  // uniform (every source spreads its tokens evenly), reuse (layer l-1's matrix), history (each
  // source's recency-weighted mean share at layer l over Copilot's window, without layer l-1),
  // copilot (the setup's options with center_sources off: the paper's Y = P X) and
  // copilot-centered (the same with center_sources on), in this order.
  std::vector<PredictorScore> predictors;
  int scored = 0;  // predictions scored: (iteration, layer >= 1, micro-batch) after warm-up
  int warmup = 0;  // made while the layer was warming up (Copilot = reuse), not scored
  int servers = 0;
};

// mfabric::Error (field "trace") for a static trace or one with fewer than 2 MoE layers, and
// naming the field for a bad setup (top_k, ranks_per_server, bytes_per_token, the Copilot
// options).
PredictionEvaluation evaluate_prediction(const workload::RoutingTrace& trace,
                                         const PredictionSetup& setup);

}  // namespace mfabric::control
