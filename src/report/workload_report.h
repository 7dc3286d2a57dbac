// Presenting a workload: the summary of `mfabric workload` (text and JSON), Chakra trace
// counts, and routing-trace statistics.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/json_text.h"  // the JSON these functions return is printed with json_text()
#include "workload/chakra.h"
#include "workload/routing.h"
#include "workload/training.h"

namespace mfabric::report {

nlohmann::json workload_json(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s,
                             std::uint64_t seed);
std::string workload_text(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s);

nlohmann::json chakra_json(const workload::ChakraSummary& s);
std::string chakra_text(const std::string& prefix, const workload::ChakraSummary& s);

nlohmann::json routing_stats_json(const workload::RoutingTrace& trace,
                                  const workload::RoutingStats& s);
std::string routing_stats_text(const std::string& path, const workload::RoutingTrace& trace,
                               const workload::RoutingStats& s);

}  // namespace mfabric::report
