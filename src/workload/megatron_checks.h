// What Megatron-Core would refuse of a job's settings. mfabric simulates any job it can build,
// which keeps what-if questions open (the EP overlap on plain 1F1B, say), but a user sizing a
// real run must know when the framework they train with would not start it: `mfabric simulate`
// warns with these and results.json lists them (`framework_warnings`).
#pragma once

#include <string>
#include <vector>

#include "workload/training.h"

namespace mfabric::workload {

// One sentence per setting Megatron-Core's TransformerConfig refuses, in a fixed order; empty
// when it would accept them all. Covers the EP overlap's checks (overlap.ep_comm outside
// DualPipe, which is DeepSeek's own schedule): PP > 1 needs the interleaved schedule, EP must be
// above 1, full recomputation is refused.
std::vector<std::string> megatron_refusals(const TrainingSpec& spec);

}  // namespace mfabric::workload
