// Calibration: how fast the job's compute and its collective library really are, as opposed to
// what the roofline and the line rate promise (docs/calibration.md).
//
//   compute      per-kind fractions of the GPU's peak (attention, dense GEMMs, the experts'
//                grouped GEMM, a Chakra node's generic op), the optimizer step as a fraction of
//                HBM bandwidth (absent: not modelled), and measured durations that replace the
//                model's (the `mfabric workload --replay` CSV).
//   collectives  per collective kind, the fraction of line rate the library reaches (each
//                transfer moves size / efficiency on the wire) and a per-step overhead (each
//                step of a lowered collective, and each point-to-point send, starts that much
//                later), the alpha-beta reading of NCCL's measured bus bandwidth.
//
// A calibration is named (data/calibrations/*.yaml, compiled in; `roofline` is the default) or
// written in an experiment's `calibration:` map, which may start from a named one (`base:`).
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"
#include "workload/compute.h"
#include "workload/kernel_model.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::workload {

// A collective library below 1% of the line rate is a typo; the bound also keeps wire sizes
// (size / efficiency) inside 64 bits.
inline constexpr double kMinCollectiveEfficiency = 0.01;

struct CollectiveCost {
  double efficiency = 1;  // fraction of the line rate reached, in (0, 1]
  Time overhead;          // per step of the collective (per send for point-to-point)

  bool is_free() const { return efficiency == 1 && overhead == Time::zero(); }
  bool operator==(const CollectiveCost&) const = default;
};

struct CollectiveCosts {
  CollectiveCost all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, p2p;

  // The cost of a collective of `kind` (a barrier moves no bytes: the all-reduce's).
  const CollectiveCost& of(CollectiveKind kind) const;
  bool is_free() const;
  bool operator==(const CollectiveCosts&) const = default;
};

struct Calibration {
  std::string name = "roofline";
  // The GPU the calibration is for (its catalogue name); empty: any. `mfabric kernel` picks the
  // shipped calibration of the GPU asked for.
  std::string gpu;
  Efficiency compute;
  // Chakra COMP nodes that give num_ops but no duration_micros.
  double generic = 0.5;
  // Fraction of HBM bandwidth the optimizer step reaches (Adam: kOptimizerBytesPerParam per
  // parameter the GPU holds); nullopt: the step is not modelled (the roofline calibration).
  std::optional<double> optimizer;
  // Measured durations (ComputeReplay's CSV), a path; empty: none.
  std::string replay;
  // Expert compute as measured, kept proportional to each GPU's tokens (so routing skew stays):
  // the forward time per token-expert assignment on one GPU (its TP share; backward twice it),
  // or the forward time per MoE layer and micro-batch of the busiest expert GPU at the job's own
  // routing, from which the per-assignment time follows. At most one of the two; either replaces
  // the model's (roofline or kernel tables) for the routed experts (docs/calibration.md).
  std::optional<Time> expert_per_token;
  std::optional<Time> expert_layer_busiest;
  CollectiveCosts collectives;
  // Measured kernel tables (kernel_model.h); null: every op on the roofline with `compute`'s
  // efficiencies. Shared: a calibration is copied into every run of a study.
  std::shared_ptr<const KernelCalibration> kernels;
};

// Sets the compute side of `c` on a training job: its efficiencies and its optimizer step. The
// measured durations (c.replay) are the caller's to load: the spec only points at them.
void calibrate(TrainingSpec& spec, const Calibration& c);

// The shipped calibrations' names, sorted ("paper-measurement", "roofline").
std::vector<std::string> calibration_names();
// The shipped calibration made for `gpu` (its `gpu:` field), if any.
std::optional<std::string> calibration_for_gpu(const std::string& gpu);
// A shipped calibration by name (case-insensitive) or a calibration YAML file by path; throws
// mfabric::Error listing the names.
Calibration load_calibration(const std::string& name_or_path);
// The calibration of a job that names none: the shipped measured calibration of its GPU
// (calibration_for_gpu: h800-measured for an H800), else roofline. The measured tables are what
// the kernel measurements support best (docs/validation.md, "The verdict under measured
// compute"); a GPU nobody measured keeps the roofline rather than another GPU's tables.
Calibration default_calibration(const std::string& gpu);

// Parses a calibration from an experiment: a scalar (a name or a file, as load_calibration) or a
// map {base, compute, collectives, kernels}; a map without `base` starts from
// default_calibration(gpu), the calibration the job would have without the map. Errors name
// `source` and fields under `path`. The replay path is returned as written (the caller resolves
// it against its file).
Calibration parse_calibration(const YAML::Node& node, const std::string& source,
                              const std::string& path, const std::string& gpu);

}  // namespace mfabric::workload
