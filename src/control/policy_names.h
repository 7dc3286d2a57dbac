// The names of the control policies, which decide when an EP all-to-all waits for its region's
// circuits (docs/control-plane.md): the simulator implements all of them (sim/policies/, named in
// registry.cpp), the runtime two (runtime/circuit_source.h, moe-bench --policy). Here, below both,
// so that an experiment file and moe-bench spell a policy the same way.
#pragma once

namespace mfabric::control {

inline constexpr const char* kBlockPolicy = "block";
inline constexpr const char* kReusePreviousPolicy = "reuse-previous";
inline constexpr const char* kEpsDuringSwitchPolicy = "eps-during-switch";
inline constexpr const char* kPredictPolicy = "predict";
inline constexpr const char* kOraclePolicy = "oracle";
inline constexpr const char* kPaperSimPolicy = "paper-sim";

}  // namespace mfabric::control
