// What the two forms of simulate's summary, results.json (simulation_json.cpp) and the text table
// (simulation_text.cpp), both say in the same words: the keys of the traffic classes, the
// workload in a line, the events per second, what each GPU gets done and how busy it is.
// Internal to the simulation report.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "config/experiment.h"
#include "report/simulation_report.h"
#include "sim/engine.h"
#include "study/gpu_busy.h"
#include "study/gpu_throughput.h"

namespace mfabric::report {

// JSON key of a traffic class: "tp", "ep", ... (workload::to_string), so a class the engine adds
// appears without a change here.
std::string traffic_key(std::size_t k);
// "mixtral-8x7b (the paper's job: TP 4, PP 4, EP 8, ...)" (config::job_text), or the
// micro-benchmark, connection matrix or Chakra trace.
std::string workload_label(const config::Experiment& e);
// Events the run handled per second of wall time (0 when it took no measurable time).
double events_per_second(const sim::RunResult& res);
// Tokens/s per GPU, model TFLOP/s per GPU and MFU over the run's mean iteration time, and how
// busy its GPUs are; nullopt for a workload without a model.
std::optional<study::GpuThroughput> gpu_throughput_of(const SimulationReport& r);
std::optional<study::GpuBusy> gpu_busy_of(const SimulationReport& r);

}  // namespace mfabric::report
