// Region demand files for `mfabric plan` (docs/control-plane.md): JSON, either
//   {"demand_bytes": [[...], ...]}                      directed server x server bytes
//   {"tokens": [[...], ...], "ep_ranks_per_server": k,  EP source rank x expert token counts
//    "experts_per_rank": m, "bytes_per_token": b}
// Errors name the file and the JSON path ("tokens[2][5]").
#pragma once

#include <string>

#include "control/demand.h"

namespace mfabric::control {

// Reads through read_text_file (regular files only, size cap).
ServerDemand read_demand_file(const std::string& path);
// `text` as a demand file; `source` names it in errors.
ServerDemand parse_demand_json(const std::string& text, const std::string& source);

}  // namespace mfabric::control
