// The examples each command's --help ends with.
#pragma once

#include <map>
#include <string>

namespace mfabric::cli {

// Command name -> its examples, one command line per line, indented.
const std::map<std::string, std::string>& command_examples();

}  // namespace mfabric::cli
