// Presenting a workload: the summary of `mfabric workload` (text and JSON), Chakra trace
// counts, and routing-trace statistics.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "config/workload_builder.h"
#include "core/json_text.h"  // the JSON these functions return is printed with json_text()
#include "workload/chakra.h"
#include "workload/routing.h"
#include "workload/training.h"

namespace mfabric::report {

nlohmann::json workload_json(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s,
                             std::uint64_t seed);
std::string workload_text(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s);

// A training job's expert routing: {"source" ("synthetic" or "trace"), "balance" (synthetic) or
// "trace" (its path), "busiest_over_mean": {"mean", "min", "max"}}; simulate's results.json and
// workload's JSON hold it as "expert_routing".
nlohmann::json expert_routing_json(const config::RoutingSummary& r);

nlohmann::json chakra_json(const workload::ChakraSummary& s);
std::string chakra_text(const std::string& prefix, const workload::ChakraSummary& s);

nlohmann::json routing_stats_json(const workload::RoutingTrace& trace,
                                  const workload::RoutingStats& s);
std::string routing_stats_text(const std::string& path, const workload::RoutingTrace& trace,
                               const workload::RoutingStats& s);

}  // namespace mfabric::report
