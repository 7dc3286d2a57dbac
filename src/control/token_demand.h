// A token matrix (observed or predicted) as the EP rank-to-rank bytes of its dispatch
// all-to-all, the form the simulator's demand comes in (demand_from_gpu_bytes, demand.h). The
// placement is the training builder's (workload/training.h): expert e is hosted by EP rank
// e / (experts / ep), and a token carries bytes_per_token bytes to it.
#pragma once

#include <span>

#include "workload/task_graph.h"

namespace mfabric::control {

// tokens: ep x experts, row-major, fractional counts allowed (a prediction); experts must be a
// multiple of ep. Entry (a, b) = bytes_per_token x the tokens source rank a sends to the experts
// of rank b, rounded to whole bytes; the diagonal (tokens to a rank's own experts) is kept, as in
// the training builder. mfabric::Error naming the field for a bad shape ("experts"), a
// bytes_per_token that is not positive and finite, or a negative, non-finite or too large entry
// ("tokens[a][e]"; an entry's bytes must stay within kMaxPairBytes).
workload::ByteMatrix rank_bytes_from_tokens(std::span<const double> tokens, int ep, int experts,
                                            double bytes_per_token);

}  // namespace mfabric::control
