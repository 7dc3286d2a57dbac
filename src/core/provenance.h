// What produced an output: the mfabric build (its version and git description at build time)
// and the command line, recorded in results.json and report.html (docs/formats.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mfabric {

// "0.1.0 (git 3a286f9c1e-dirty)": the project version and the checkout it was built from.
std::string mfabric_version();

// The command line of this process, as main() received it (set once by main; "" in tests
// that call the libraries directly). Arguments with spaces or quotes are single-quoted.
void set_command_line(int argc, const char* const* argv);
const std::string& command_line();

// {"mfabric": mfabric_version(), "command": command_line()}.
nlohmann::json provenance_json();

// The first line of a CSV mfabric writes: "# mfabric 0.1.0 (git ...); command: mfabric ...",
// with a newline; control characters escaped, so that it stays one line. Readers skip it as a
// comment (pandas: comment='#'; gnuplot and R: '#' lines are comments).
std::string provenance_csv_comment();

}  // namespace mfabric
