// mfabric kernel's subcommands that work on measurements (kernel_tables_command.cpp): fit and
// check. Each adds its subcommand to `parent` and a run that returns -1 when not the one parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace mfabric::cli {

void register_kernel_tables(CLI::App& parent, std::vector<std::function<int()>>& runs);

}  // namespace mfabric::cli
